"""The boundary and authorization rings ask for a standing permission only when it can change
their answer, and answer exactly as the rule "standing first" does: a differential over every
built-in tool, paths inside, outside and protected, command lines and danger flags, under each
kind of standing permission; and through the app's chain, a call with nothing to ask never reads
the person's settings file."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from yagent.kernel.judge import auditgate
from yagent.kernel.judge.invoke import Call, Decision
from yagent.kernel.judge.preset import BUILTIN as PRESETS
from yagent.tools.commands import CommandGate
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.settings import Settings
from yagent.tools.shellrules import build_policy
from yagent.tools.stages import AuthorizationStage, BoundaryStage
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec import Spec
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

pytestmark = pytest.mark.anyio


class CountingSettings(Settings):
    """The real settings file, counting how often a standing permission is looked up."""

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self.lookups = 0

    def authorized_projects(self) -> frozenset[str]:
        self.lookups += 1
        return super().authorized_projects()


def _boundary_reference(guard: WorkspaceGuard, spec: Spec, args: dict[str, Any]) -> Decision:
    """The boundary ring as it was first written: standing asked before the boundary."""
    if guard.unreadable(spec, args):
        return Decision.DENY
    if guard.protected(spec, args):
        return Decision.PROMPT
    if guard.standing(spec):
        return Decision.ALLOW
    return Decision.PROMPT if guard.boundary(spec, args) else Decision.ALLOW


def _authorization_reference(
    guard: WorkspaceGuard, surface: Surface, spec: Spec, args: dict[str, Any]
) -> Decision:
    if guard.standing(spec) or surface.judges_commands(spec):
        return Decision.ALLOW
    return Decision.PROMPT if guard.danger(spec, args) else Decision.ALLOW


def _argument_sets(spec: Spec, workspace: Path, outside: Path) -> list[dict[str, Any]]:
    paths = ["a.txt", str(outside / "x"), ".git/config", ".", str(Path.home() / ".ssh" / "k")]
    commands = ["ls", f"cat {outside}/x", "rm -rf /"]
    out: list[dict[str, Any]] = [{}]
    for path in paths:
        out.append(dict.fromkeys(spec.path_args, path) or {"path": path})
        out.append({key: [path, "a.txt"] for key in spec.path_args})
    if spec.command_arg:
        for line, flag in itertools.product(commands, (True, False, None)):
            args: dict[str, Any] = {spec.command_arg: line}
            if spec.danger_flag and flag is not None:
                args[spec.danger_flag] = flag
            out.append(args)
        out.append({spec.command_arg: 7})
    return out


def _standings(workspace: Path, home: Path) -> list[tuple[str, WorkspaceGuard]]:
    none = WorkspaceGuard(workspace, settings=Settings(home / "none"))
    project_home = home / "project"
    Settings(project_home).authorize_project(workspace)
    project = WorkspaceGuard(workspace, settings=Settings(project_home))
    session = WorkspaceGuard(workspace, settings=Settings(home / "none"))
    session.skip_all_for_session()
    per_tool = WorkspaceGuard(workspace, settings=Settings(home / "none"))
    for spec in BUILTIN[::2]:
        per_tool.allow_tool_for_session(spec.name)
    yolo = WorkspaceGuard(workspace, settings=Settings(home / "none"), yolo=Yolo.YOLO)
    return [
        ("none", none),
        ("project", project),
        ("session", session),
        ("per tool", per_tool),
        ("yolo", yolo),
    ]


@pytest.mark.parametrize("gated", [False, True], ids=["no command gate", "command gate"])
async def test_the_rings_answer_as_standing_first_would(
    workspace: Path, home: Path, tmp_path: Path, gated: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".git").mkdir()
    gate = CommandGate(build_policy([]), PRESETS.resolve("workspace-write"), workspace)
    compared = Counter[str]()
    for label, guard in _standings(workspace, home):
        options = SurfaceOptions(deferred=False, commands=gate if gated else None)
        for name in ("coding", "browser"):  # browser_eval: always asked about
            surface = Surface(BUILTIN, profile(name), guard, options=options)
            await _compare(surface, guard, label, workspace, outside, compared)
    # the comparison covered questions (under no standing permission) as well as answers
    for ring, decision in itertools.product(("boundary", "authorization"), ("prompt", "allow")):
        assert compared[f"{ring} {decision}"] >= 5, compared


async def _compare(
    surface: Surface,
    guard: WorkspaceGuard,
    label: str,
    workspace: Path,
    outside: Path,
    compared: Counter[str],
) -> None:
    boundary, authorization = BoundaryStage(surface), AuthorizationStage(surface)
    for spec in surface.specs():
        for args in _argument_sets(spec, workspace, outside):
            call = Call(spec.name, args)
            with guard.pinned(spec.arg_paths_of(args)):
                got = (await boundary.judge(call)).decision
                want = _boundary_reference(guard, spec, args)
                assert got is want, (label, spec.name, args, "boundary")
                compared[f"boundary {want.value}"] += 1
                got = (await authorization.judge(call)).decision
                want = _authorization_reference(guard, surface, spec, args)
                assert got is want, (label, spec.name, args, "authorization")
                compared[f"authorization {want.value}"] += 1


def _app_like_surface(workspace: Path, settings: Settings) -> Surface:
    gate = CommandGate(build_policy([]), PRESETS.resolve("workspace-write"), workspace)
    guard = WorkspaceGuard(workspace, settings=settings)
    options = SurfaceOptions(commands=gate, audit=auditgate.AuditGate())
    return Surface(BUILTIN, profile("coding"), guard, options=options)


async def test_a_call_with_nothing_to_ask_never_reads_the_settings(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    settings = CountingSettings(home)
    surface = _app_like_surface(workspace, settings)
    quiet = [
        Call("think", {"thought": "x"}),
        Call("read_file", {"path": "a.txt"}),
        Call("search", {"pattern": "x", "path": "."}),
    ]
    for call in quiet:
        judgement = await surface.chain.judge(call)
        assert judgement.verdict.allowed, (call, judgement.verdict)
    assert settings.lookups == 0
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    asking = Call("read_file", {"path": str(outside / "x")})
    judgement = await surface.chain.judge(asking)
    assert judgement.verdict.decision is Decision.PROMPT
    assert settings.lookups >= 1  # the question is the one place a standing permission counts
    settings.authorize_project(workspace)
    assert (await surface.chain.judge(asking)).verdict.allowed


async def test_a_standing_permission_is_judged_for_the_workspace_as_resolved(
    tmp_path: Path, home: Path
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    Settings(home).authorize_project(alias)  # stored resolved: the real path
    guard = WorkspaceGuard(alias, settings=Settings(home))
    assert guard.standing(BUILTIN[0])
    other = WorkspaceGuard(tmp_path, settings=Settings(home))
    assert not other.standing(BUILTIN[0])
