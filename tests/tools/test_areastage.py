"""The areas ring (stage `worktree`) on a confined Surface; the command gate confined to areas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from yagent.kernel.judge import areas, toolfail
from yagent.kernel.judge.invoke import Call, Decision
from yagent.kernel.judge.preset import BUILTIN as PRESETS
from yagent.tools.areastage import STAGE, describe
from yagent.tools.commands import CommandGate
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.shellrules import build_policy
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec import Effect, Spec, Tier, make_spec
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

pytestmark = pytest.mark.anyio


class _Args(BaseModel):
    text: str = ""


WRITES_SOMEWHERE = make_spec("stamp", "Writes a stamp file.", _Args, Effect.WRITE, Tier.HOT)
EXTERNAL = Spec("srv__peek", "Peeks.", {"type": "object"}, Effect.READ, Tier.COLD)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for d in ("docs", "src", "other"):
        (root / d).mkdir(parents=True)
    (root / "src" / "link").symlink_to(root / "other")
    return root


def surface(ws: Path, *, gate: CommandGate | None = None) -> Surface:
    decl = areas.Declaration.of("docs", writable=["docs"], read_only=["src"])
    options = SurfaceOptions(yolo=Yolo.YOLO, commands=gate, confine=decl, deferred=False)
    return Surface(
        [*BUILTIN, WRITES_SOMEWHERE],
        profile("coding"),
        WorkspaceGuard(ws, yolo=Yolo.YOLO),
        external=[EXTERNAL],
        options=options,
    )


async def verdict(s: Surface, tool: str, **args: Any) -> tuple[Decision, str, str | None]:
    stage = next(st for st in s.chain.stages if st.name == STAGE)
    v = await stage.judge(Call(tool, args))
    return v.decision, v.reason, v.kind.value if v.kind else None


@pytest.mark.parametrize(
    ("tool", "args", "allowed"),
    [
        ("read_file", {"path": "src/a.py"}, True),
        ("read_file", {"path": "docs/a.md"}, True),  # what it may write, it may read
        ("write_file", {"path": "docs/new/a.md", "content": ""}, True),
        ("write_file", {"path": "src/a.py", "content": ""}, False),  # read-only area
        ("read_file", {"path": "other/x"}, False),
        ("read_file", {"path": "src/link/x"}, False),  # judged where the link points
        ("read_file", {"path": "docs/../other/x"}, False),
        ("read_file", {"path": "/etc/passwd"}, False),
        ("read_file", {"path": "../outside"}, False),
        ("search", {"pattern": "x"}, False),  # no path: the workspace root, not declared
        ("search", {"pattern": "x", "path": "src"}, True),
        ("list_dir", {"path": "src/*"}, False),  # a wildcard cannot be judged
        ("think", {"thought": "x"}, True),
        ("stamp", {}, False),  # writes, names no path
        ("srv__peek", {}, False),  # external
        ("run_bash", {"command": "ls"}, False),  # no confined gate on this surface
    ],
)
async def test_the_ring_keeps_calls_inside_the_declaration(
    ws: Path, tool: str, args: dict[str, Any], allowed: bool
) -> None:
    decision, reason, kind = await verdict(surface(ws), tool, **args)
    assert (decision is Decision.ALLOW) is allowed, reason
    if not allowed:
        assert decision is Decision.DENY  # a hard refusal, never a question
        assert kind == toolfail.Kind.PERMISSION.value
        assert "worker 'docs' is confined to write: docs; read: src" in reason


async def test_unknown_tools_are_left_to_the_disclosure_gate(ws: Path) -> None:
    decision, _, _ = await verdict(surface(ws), "nope")
    assert decision is Decision.ALLOW


async def test_the_shell_passes_only_with_a_gate_confined_to_the_areas(ws: Path) -> None:
    gate = CommandGate(build_policy([]), PRESETS.resolve("workspace-write"), ws)
    decision, reason, _ = await verdict(surface(ws, gate=gate), "run_bash", command="ls")
    assert decision is Decision.DENY
    assert "outside a confined sandbox" in reason
    decision, _, _ = await verdict(
        surface(ws, gate=gate.confined(["docs"])), "run_bash", command="ls"
    )
    assert decision is Decision.ALLOW


async def test_a_confined_gate_refuses_to_run_commands_on_the_host(ws: Path) -> None:
    gate = CommandGate(build_policy([]), PRESETS.resolve("yolo"), ws).confined(["docs"])
    with pytest.raises(toolfail.ToolFailure, match="cannot be confined"):
        await gate.confinement()


async def test_a_confined_gate_over_a_bad_area_has_no_sandbox(ws: Path, real: Path) -> None:
    gate = CommandGate(build_policy([]), PRESETS.resolve("workspace-write"), ws)
    bad = gate.confined(["src/link"])
    with pytest.raises(toolfail.ToolFailure, match="no sandbox provider"):
        await bad.confinement()
    judged = await bad.judge("ls", danger=None, standing=True)
    assert judged.decision is Decision.DENY
    assert "symbolic link" in judged.reason
    where = await gate.confined(["docs"]).confinement()
    assert where.sandboxed
    assert where.launcher is not None
    argv = " ".join(where.launcher(["true"]))
    assert f"--ro-bind {real} {real}" in argv
    assert f"--bind {real}/docs {real}/docs" in argv


@pytest.fixture
def real(ws: Path) -> Path:
    return ws.resolve()


def test_describe_names_every_area() -> None:
    assert describe(areas.Declaration.of("x")) == "write: nothing; read: nothing"
    decl = areas.Declaration.of("x", writable=["."], read_only=[])
    assert describe(decl) == "write: .; read: nothing"
