"""Every TOML example in the docs works as written: a configuration example loads through the
same loader `yagent run` uses (as the user's `config.toml`), a parallel plan passes
`yagent fanout --check` in a fresh repository, and a batch file (tasks with a `repo`) is read by
the same reader `yagent batch` uses."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from yagent.app.config import load

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"```toml\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str]]:
    found = []
    for doc in sorted(DOCS.glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text[: match.start()].count("\n") + 1
            found.append((f"{doc.name}:{line}", match.group(1)))
    return found


def _is_batch(block: str) -> bool:
    return "[[task]]" in block and re.search(r"^repo\s*=", block, re.M) is not None


def _is_plan(block: str) -> bool:
    return block.lstrip().startswith("[[task]]") and not _is_batch(block)


CONFIGS = [(w, b) for w, b in _blocks() if not _is_plan(b) and not _is_batch(b)]
PLANS = [(where, block) for where, block in _blocks() if _is_plan(block)]
BATCHES = [(where, block) for where, block in _blocks() if _is_batch(block)]


def test_the_docs_have_examples_of_every_kind() -> None:
    assert len(CONFIGS) >= 5
    assert PLANS
    assert BATCHES


@pytest.mark.parametrize(("where", "block"), BATCHES, ids=[w for w, _ in BATCHES])
def test_a_batch_example_is_read_by_the_batch_reader(
    tmp_path: Path, where: str, block: str
) -> None:
    from yagent.scale import tasks

    path = tmp_path / "TASKS.toml"
    path.write_text(block, encoding="utf-8")
    batch = tasks.load(path)
    assert batch.tasks, where


@pytest.mark.parametrize(("where", "block"), CONFIGS, ids=[w for w, _ in CONFIGS])
def test_a_configuration_example_loads(tmp_path: Path, where: str, block: str) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(block, encoding="utf-8")
    load(home=home, workspace=work, env={"OPENAI_API_KEY": "sk-test", "DOCS_TOKEN": "t"})


@pytest.mark.parametrize(("where", "block"), PLANS, ids=[w for w, _ in PLANS])
def test_a_plan_example_passes_fanout_check(tmp_path: Path, where: str, block: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=30)
    (work / "src").mkdir()
    (work / "README.md").write_text("readme\n")
    (work / "src" / "cli.py").write_text("")
    plan = tmp_path / "plan.toml"
    plan.write_text(block, encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(tmp_path / "yhome")}
    done = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "fanout", "--check", str(plan)],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, (where, done.stdout + done.stderr)
    assert "plan holds" in done.stdout
    assert not (work / "docs").exists()  # --check creates nothing
