"""Cost of the conventions read at every run start: the instructions merge (`agents.instructions`)
and the skills (`tools.skills` + the listing in `agents.context`).

Cases: a repository six folders deep with an instructions file in each (CLAUDE.md ones importing
two files), a global file, started at the deepest folder; and 200 skills over the two project
folders, parsed and listed within the list budget. Prints JSON lines (median of several runs,
milliseconds) and exits 1 when either exceeds its bound — both run once per agent run, before the
first model call, so they must stay a small share of a step.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from yagent.agents.context import skills_section
from yagent.agents.instructions import Sources, render
from yagent.tools.skills import FolderSkillSource

RUNS = 7
BOUND_INSTRUCTIONS_MS = 50.0
BOUND_SKILLS_MS = 500.0  # 200 SKILL.md files parsed (YAML) and listed, on a shared 2-core machine


def instructions_tree(root: Path) -> Sources:
    home = root / "home"
    home.mkdir()
    (home / "AGENTS.md").write_text("global rules\n" * 50)
    folder = root / "repo"
    for depth in range(6):
        folder.mkdir(parents=True, exist_ok=True)
        if depth % 2:
            (folder / "CLAUDE.md").write_text(f"level {depth} @a.md @b.md\n" + "text\n" * 200)
            (folder / "a.md").write_text("a\n" * 100)
            (folder / "b.md").write_text("b\n" * 100)
        else:
            (folder / "AGENTS.md").write_text(f"level {depth}\n" + "rule\n" * 200)
        folder = folder / f"d{depth}"
    return Sources(root / "repo", start=folder.parent, home=home)


def skills_tree(root: Path) -> Path:
    for i in range(200):
        where = root / (".claude" if i % 2 else ".yagent") / "skills" / f"s{i}"
        where.mkdir(parents=True)
        (where / "SKILL.md").write_text(
            f"---\nname: skill-{i}\ndescription: Does task number {i} well.\n"
            "allowed-tools: Read, Grep\n---\nSteps.\n"
        )
        (where / "ref.md").write_text("ref")
    return root


def median_ms(fn: Callable[[], object]) -> float:
    fn()
    runs = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    return statistics.median(runs)


def main() -> int:
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "i").mkdir()
        sources = instructions_tree(base / "i")
        ws = skills_tree(base / "s")

        def skills() -> str:
            source = FolderSkillSource.for_workspace(ws, base / "nohome")
            return skills_section(source.list(), task="fix the login bug")

        for name, fn, bound in (
            ("instructions_render_6_levels", lambda: render(sources), BOUND_INSTRUCTIONS_MS),
            ("skills_load_and_list_200", skills, BOUND_SKILLS_MS),
        ):
            value = median_ms(fn)
            line = {"name": name, "value": round(value, 2), "unit": "ms", "bound": bound}
            line["ratio"] = round(value / bound, 3)
            failed |= value > bound
            print(json.dumps(line))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
