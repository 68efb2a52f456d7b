"""The system context an agent starts with.

Contract:
- The agent's own prompt comes first (its first line names the agent), then where it works — the
  workspace root, and the directory the person started in when that is below it (both paths
  neutralised: a checkout's name is not yagent's to choose).
- The instructions files (`agents.instructions`: the global file, then AGENTS.md /
  AGENTS.override.md / CLAUDE.md with its imports from the root down to the start directory, the
  closest last) follow, neutralised and within a byte budget whose cuts are stated.
- The deferred tool catalog ("name — brief" lines) is listed when the surface defers tools.
- Skills: every skill's name and description is listed — the ones `skilldisclose` picks for the
  task (named > touched resources > relevance) first, then the rest by name — within
  `SKILL_LIST_BUDGET` characters (a description longer than `SKILL_DESCRIPTION_CHARS` is cut
  with "…"); what does not fit is counted on a visible "N more" line. Names and descriptions are
  the skill files' text (a repository's own, trusted or not): they pass `untrusted.for_model`.
- Under `-Y` the autonomy instruction is added.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from yagent.agents import instructions, untrusted
from yagent.agents.catalog import AUTONOMY, AgentDef
from yagent.kernel.judge import skilldisclose
from yagent.tools import programbindings
from yagent.tools.surface import Surface
from yagent.toolspec import SkillDoc
from yagent.toolspec.program import RUN_PROGRAM

SKILL_LIST_BUDGET = 4000  # characters of "- name: description" lines before "N more"
SKILL_DESCRIPTION_CHARS = 250  # one description's share; a longer one is cut with "…"


def skills_section(
    skills: Sequence[SkillDoc],
    *,
    task: str,
    named: Iterable[str] = (),
    touched: Sequence[str] = (),
    budget: int = SKILL_LIST_BUDGET,
) -> str:
    if not skills:
        return ""
    chosen = skilldisclose.select(
        [skilldisclose.Skill(s.name, s.description) for s in skills],
        named=named,
        touched_resources=touched,
        task_text=task,
        budget=len(skills),
    )
    by_name = {s.name: s for s in skills}
    order = [*chosen.names, *sorted(n for n in by_name if n not in set(chosen.names))]
    lines: list[str] = []
    used = 0
    for name in order:
        line = f"- {untrusted.for_model(name)}: {_short(by_name[name].description)}"
        if used + len(line) > budget and lines:
            break
        lines.append(line)
        used += len(line) + 1
    rest = len(order) - len(lines)
    if rest:
        lines.append(
            f"({rest} more skill{'s' if rest != 1 else ''} not listed here, over the list's "
            f"budget of {budget} characters; use_skill with any name lists them all)"
        )
    return "## Skills (open one with use_skill)\n" + "\n".join(lines)


def _short(text: str) -> str:
    flat = untrusted.for_model(" ".join(text.split()))
    if len(flat) <= SKILL_DESCRIPTION_CHARS:
        return flat
    return flat[: SKILL_DESCRIPTION_CHARS - 1].rstrip() + "…"


def system_prompt(
    agent: AgentDef,
    *,
    workspace: Path,
    surface: Surface,
    task: str = "",
    skills: Sequence[SkillDoc] = (),
    autonomous: bool = False,
    memory: str = "",
    sources: instructions.Sources | None = None,
) -> str:
    sources = sources or instructions.Sources(workspace)
    # a checkout's name is whatever its archive or clone command gave it: untrusted text
    where = f"## Workspace\nYou work in {untrusted.for_model(str(workspace))}."
    start = (sources.start or workspace).resolve()
    if start != Path(workspace).resolve():
        where += (
            f" The person started yagent in {untrusted.for_model(str(start))}; relative paths "
            "stay workspace-relative."
        )
    parts = [agent.prompt.strip(), where]
    docs = instructions.render(sources)
    if docs:
        parts.append(f"## Project instructions\n{docs}")
    if memory:
        parts.append(memory)
    catalog = surface.catalog_text()
    if catalog:
        parts.append(
            "## More tools (load their schemas with load_tool before calling them)\n" + catalog
        )
    if surface.spec(RUN_PROGRAM.name) is not None:
        parts.append(programbindings.prompt_section(surface))
    section = skills_section(skills, task=task)
    if section:
        parts.append(section)
    if autonomous:
        parts.append(AUTONOMY)
    return "\n\n".join(parts)
