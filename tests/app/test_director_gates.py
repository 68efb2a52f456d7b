"""Director constraints and gates asked of the real agents (`docs/agents.md`, the table
"Director constraints and gates"): every built-in agent stops on its exit call (C2), parallel
admission is asked of the real profiles (G2), and each delegation is a fresh instance with its own
record (C4, G7). Scripted model routed by agent identity, real tools, real stores."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.app.test_delegation import delegates, engine, opened, receipts
from tests.app.test_fanout import finish
from yagent.agents import catalog
from yagent.llm.scripted import call

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("name", catalog.BUILTIN_AGENTS)
def test_c2_every_built_in_agent_stops_on_its_exit_call(name: str) -> None:
    assert catalog.builtin(name, 0).stop_on_finish


async def test_g2_parallel_admission_asks_the_real_profiles(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    async with opened(ws, tmp_path / "home", engine({})) as app:
        surfaces = {n: app.surface(app.agent(n)) for n in ("repo", "coding", "chat", "director")}
        granted = {n: {s.name for s in surface.specs()} for n, surface in surfaces.items()}
        for name, surface in surfaces.items():
            for spec in surface.specs():
                parallel = (spec.read_only or spec.concurrent) and not spec.serial
                assert surface.is_parallelizable(spec.name) == parallel, (name, spec.name)
    assert surfaces["repo"].is_parallelizable("read_file")
    assert surfaces["coding"].is_parallelizable("read_file")
    assert not surfaces["coding"].is_parallelizable("write_file")
    assert not surfaces["coding"].is_parallelizable("run_bash")
    assert "read_file" not in granted["chat"] or surfaces["chat"].is_parallelizable("read_file")
    assert surfaces["director"].is_parallelizable("delegate")
    assert surfaces["director"].bounds_itself("delegate")
    assert not surfaces["repo"].bounds_itself("read_file")  # the step's limit holds it


async def test_c4_g7_each_delegation_is_a_fresh_instance_with_its_own_record(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    think = json.dumps({"thought": "mine"})
    gated = engine(
        {
            "director": [
                delegates(("d1", "coding", {}), ("d2", "coding", {})),
                finish("director"),
            ],
            "coding.d1": [call("think", think, call_id="t1"), finish("d1")],
            "coding.d2": [call("think", think, call_id="t2"), finish("d2")],
        }
    )
    async with opened(ws, tmp_path / "home", gated) as app:
        sid, _ = await app.run("plan it", agent_name="director")
        got = receipts(app, sid)
        ids = {c: got[c]["delegation_id"] for c in ("d1", "d2")}
        own = {c: [t.call_id for t in app.store.tool_calls(sid, delegation_id=ids[c])] for c in ids}
    assert ids["d1"] != ids["d2"]
    assert own == {"d1": ["t1", "d1-x"], "d2": ["t2", "d2-x"]}
    for ident, request in gated.inner.requests:
        if ident.startswith("coding."):
            mine = f"task {ident.split('.')[1]}"
            users = [str(m.content) for m in request.messages if m.role == "user"]
            assert any(mine in u for u in users)
            assert not any("task d" in u and mine not in u for u in users)


ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| ([CG]\d+) \| (.+?) \| (.+) \|$")
CITED = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def test_every_director_constraint_and_gate_has_a_row_and_a_test_named_after_it() -> None:
    """`docs/agents.md` lists C1–C19 and G1–G18 once each; every test a row cites exists, and
    each number has at least one test whose name carries it (`test_c4_…`, `test_g12_…`)."""
    rows = {}
    for line in (ROOT / "docs" / "agents.md").read_text().splitlines():
        match = ROW.match(line)
        if match:
            assert match.group(1) not in rows, match.group(1)
            rows[match.group(1)] = match.group(3)
    expected = [f"C{n}" for n in range(1, 20)] + [f"G{n}" for n in range(1, 19)]
    assert sorted(rows) == sorted(expected)
    files = (ROOT / "tests").rglob("test_*.py")
    named = " ".join(name for p in files for name in re.findall(r"def (test_\w+)", p.read_text()))
    for number, cell in rows.items():
        for path, name in CITED.findall(cell):
            assert f"def {name}(" in (ROOT / path).read_text(), (number, path, name)
        tag = number.lower()
        assert re.search(rf"\btest_(?:[cg]\d+_)*{tag}_", named), f"no test is named after {number}"
