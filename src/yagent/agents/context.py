"""The system context an agent starts with.

Contract:
- The agent's own prompt comes first (its first line names the agent).
- The workspace root's `AGENTS.md` — or `CLAUDE.md` when there is none — is read fresh each time,
  neutralised with `reminder` (repository text is data: it cannot forge a system band) and capped
  at `MAX_PROJECT_DOC_BYTES` with a visible truncation line.
- The deferred tool catalog ("name — brief" lines) is listed when the surface defers tools.
- Skills are chosen with `skilldisclose` (named > touched resources > relevance, within a budget);
  what the budget dropped is said, and an empty choice says why.
- Under `-Y` the autonomy instruction is added.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from yagent.agents.catalog import AUTONOMY, AgentDef
from yagent.kernel import reminder, skilldisclose
from yagent.tools import program
from yagent.tools.surface import Surface
from yagent.toolspec import SkillDoc
from yagent.toolspec.program import RUN_PROGRAM

MAX_PROJECT_DOC_BYTES = 24 * 1024
SKILL_BUDGET = 8
PROJECT_DOCS = ("AGENTS.md", "CLAUDE.md")


def project_doc(workspace: Path) -> tuple[str, str] | None:
    """(file name, text) of the workspace's instructions file, capped visibly; None if absent."""
    for name in PROJECT_DOCS:
        path = workspace / name
        if path.is_file():
            raw = path.read_bytes()
            text = raw[:MAX_PROJECT_DOC_BYTES].decode("utf-8", "replace")
            if len(raw) > MAX_PROJECT_DOC_BYTES:
                text += (
                    f"\n[{name} truncated: showing the first {MAX_PROJECT_DOC_BYTES} of "
                    f"{len(raw)} bytes; read the file for the rest]"
                )
            return name, reminder.neutralize(text)
    return None


def skills_section(
    skills: Sequence[SkillDoc],
    *,
    task: str,
    named: Iterable[str] = (),
    touched: Sequence[str] = (),
) -> str:
    if not skills:
        return ""
    chosen = skilldisclose.select(
        [skilldisclose.Skill(s.name, s.description) for s in skills],
        named=named,
        touched_resources=touched,
        task_text=task,
        budget=SKILL_BUDGET,
    )
    by_name = {s.name: s for s in skills}
    lines = [f"- {n}: {by_name[n].description}" for n in chosen.names]
    if chosen.truncated:
        lines.append(f"(more skills exist: {', '.join(chosen.dropped)})")
    if not lines:
        lines.append(f"(no skill selected: {chosen.reason})")
    return "## Skills (open one with use_skill)\n" + "\n".join(lines)


def system_prompt(
    agent: AgentDef,
    *,
    workspace: Path,
    surface: Surface,
    task: str = "",
    skills: Sequence[SkillDoc] = (),
    autonomous: bool = False,
    memory: str = "",
) -> str:
    parts = [agent.prompt.strip(), f"## Workspace\nYou work in {workspace}."]
    doc = project_doc(workspace)
    if doc is not None:
        parts.append(f"## Project instructions ({doc[0]})\n{doc[1]}")
    if memory:
        parts.append(memory)
    catalog = surface.catalog_text()
    if catalog:
        parts.append(
            "## More tools (load their schemas with load_tool before calling them)\n" + catalog
        )
    if surface.spec(RUN_PROGRAM.name) is not None:
        parts.append(program.prompt_section(surface))
    section = skills_section(skills, task=task)
    if section:
        parts.append(section)
    if autonomous:
        parts.append(AUTONOMY)
    return "\n\n".join(parts)
