"""yagent.toolspec: the tool registry — one `Spec` per tool, and the profiles that say who may use
what. Declarative only: nothing here executes a tool (that is `yagent.tools`).

The package itself re-exports only the vocabulary of a spec (`spec`: `Spec`, `Effect`, `Tier`,
the tool-definition helpers; `skills`: `SkillDoc`, `SkillSource`). The built-in tools' specs
(`builtin`: `BUILTIN`, `builtin_by_name`, the role sets), the browser's (`browser`) and the
profiles (`profiles`) are imported from their modules: building them builds every tool's argument
model, which a reader of Claude Code's tool names (`claudetools`, used by the configuration) or of
an MCP server's spec does not need.
"""

from yagent.toolspec.skills import SkillDoc, SkillSource
from yagent.toolspec.spec import (
    READ_ONLY_EFFECTS,
    Effect,
    Spec,
    Tier,
    first_sentence,
    make_spec,
    sort_tool_defs,
    tool_defs_hash,
)

__all__ = [
    "READ_ONLY_EFFECTS",
    "Effect",
    "SkillDoc",
    "SkillSource",
    "Spec",
    "Tier",
    "first_sentence",
    "make_spec",
    "sort_tool_defs",
    "tool_defs_hash",
]
