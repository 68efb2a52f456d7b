"""yagent.toolspec: the tool registry — one `Spec` per tool, and the profiles that say who may use
what. Declarative only: nothing here executes a tool (that is `yagent.tools`)."""

from yagent.toolspec.browser import BROWSER
from yagent.toolspec.builtin import (
    ASKS_USER,
    BUILTIN,
    FINISHES,
    LOADS_TOOLS,
    PAGES_SPILL,
    builtin_by_name,
)
from yagent.toolspec.profiles import PROFILES, Profile, UnknownProfileError, custom, profile
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
    "ASKS_USER",
    "BROWSER",
    "BUILTIN",
    "FINISHES",
    "LOADS_TOOLS",
    "PAGES_SPILL",
    "PROFILES",
    "READ_ONLY_EFFECTS",
    "Effect",
    "Profile",
    "SkillDoc",
    "SkillSource",
    "Spec",
    "Tier",
    "UnknownProfileError",
    "builtin_by_name",
    "custom",
    "first_sentence",
    "make_spec",
    "profile",
    "sort_tool_defs",
    "tool_defs_hash",
]
