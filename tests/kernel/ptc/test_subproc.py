"""The subprocess form: same protocol over pipes, declared capability, fail-closed refusals,
deadline kill, classified abnormal ends, redacted stderr."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

import yagent
from yagent.kernel.confine.sandbox import BwrapProvider, EgressMode, Level
from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Chain
from yagent.kernel.ptc import cgroup
from yagent.kernel.ptc.bindings import Bindings
from yagent.kernel.ptc.budget import MIB, Budget
from yagent.kernel.ptc.confine import FuncLauncher, MemoryLimit, Requirements
from yagent.kernel.ptc.dispatch import ChainDispatcher
from yagent.kernel.ptc.errors import (
    AbortedError,
    CapabilityError,
    Cause,
    EgressError,
    UnmanagedError,
)
from yagent.kernel.ptc.subproc import SubprocessOptions, plan, run_subprocess

from .conftest import Tools
from .test_cgroup import fake_tree

pytestmark = pytest.mark.anyio


class Recording:
    """A launcher that records whether it was used, wrapping argv with `prefix`."""

    def __init__(self, name: str = "recording", prefix: Sequence[str] = ()) -> None:
        self.name = name
        self.prefix = list(prefix)
        self.used = 0

    def wrap(self, argv: Sequence[str]) -> list[str]:
        self.used += 1
        return [*self.prefix, *argv]


_NEEDED = (sys.prefix, os.path.dirname(os.path.dirname(os.path.realpath(yagent.__file__))))


def shell(name: str, script: str) -> FuncLauncher:
    """A launcher that replaces the worker with a shell script (to provoke abnormal ends)."""
    return FuncLauncher(name, lambda argv: ["/bin/sh", "-c", script])


class Backend:
    def __init__(self, mode: EgressMode | None) -> None:
        self.mode = mode

    def egress(self) -> EgressMode:
        if self.mode is None:
            raise RuntimeError("proxy not reachable")
        return self.mode


def child_files(base: Path) -> tuple[str, str]:
    """memory.max and cgroup.procs of the one child cgroup a run made under `base`."""
    (child,) = base.glob("yagent-ptc-*")
    return (child / "memory.max").read_text(), (child / "cgroup.procs").read_text()


@pytest.fixture
def no_cgroup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine whose cgroup v2 tree lacks the memory controller."""
    monkeypatch.setattr(cgroup, "MOUNTINFO", tmp_path / "mountinfo")
    monkeypatch.setattr(cgroup, "SELF_CGROUP", tmp_path / "self_cgroup")
    return fake_tree(tmp_path, controllers="cpu io")


@pytest.fixture
def fake_cgroup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine (as far as the seams tell) with memory delegated to children."""
    monkeypatch.setattr(cgroup, "MOUNTINFO", tmp_path / "mountinfo")
    monkeypatch.setattr(cgroup, "SELF_CGROUP", tmp_path / "self_cgroup")
    killed: list[Path] = []
    monkeypatch.setattr(cgroup.Cgroup, "kill", lambda self: killed.append(self.path))
    return fake_tree(tmp_path, subtree="memory")


async def test_a_program_runs_in_a_worker_with_the_same_protocol(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    program = """
        console.log("in the worker");
        const rows = await Promise.all(["a", "b"].map((k) => host.fetch_data(k)));
        const one = await host.fetch_data({key: "c", max_items: 2});
        return {rows: rows.map((r) => r.data), one: one.args};
    """
    result = await run_subprocess(program, bindings, dispatcher)
    assert result.value == {
        "rows": ["value-of-a", "value-of-b"],
        "one": {"key": "c", "max-items": 2},
    }
    assert result.logs == ("in the worker",)
    assert tools.ran_tools() == ["fetch-data"] * 3
    assert result.capability == plan(SubprocessOptions())[0].as_dict()
    assert result.capability["isolation"] == "process"


async def test_denials_in_the_worker_are_the_chains(
    bindings: Bindings, tools: Tools, gated_chain: Chain
) -> None:
    dispatcher = ChainDispatcher(gated_chain, tools.executors())
    program = (
        "try { await host.drop_table('t'); } catch (e) { return [e.kind, e.stage, e.denied]; }"
    )
    result = await run_subprocess(program, bindings, dispatcher)
    assert result.value == ["permission", "policy", True]
    assert tools.ran == []


async def test_unmanaged_bindings_are_refused_before_spawning(
    bindings: Bindings, tools: Tools
) -> None:
    launcher = Recording()
    with pytest.raises(UnmanagedError):
        await run_subprocess(
            "return 1;",
            bindings,
            ChainDispatcher(Chain([]), tools.executors()),
            options=SubprocessOptions(launcher=launcher),
        )
    assert launcher.used == 0


async def test_required_cgroup_is_refused_where_the_machine_has_none(no_cgroup: Path) -> None:
    launcher = Recording()
    options = SubprocessOptions(
        launcher=launcher, require=Requirements(memory_limit=MemoryLimit.CGROUP)
    )
    assert plan(options)[0].memory_limit is MemoryLimit.HEAP_ONLY
    with pytest.raises(CapabilityError) as info:
        await run_subprocess("return 1;", options=options)
    assert info.value.missing == {"memory_limit": "cgroup"}
    assert "memory controller is not available" in str(info.value)
    assert launcher.used == 0
    result = await run_subprocess("return 2;", options=SubprocessOptions())
    assert result.value == 2
    assert result.capability["memory_limit"] == "heap-only"


async def test_the_worker_joins_the_cgroup_and_declares_it(fake_cgroup: Path) -> None:
    options = SubprocessOptions(
        require=Requirements(memory_limit=MemoryLimit.CGROUP), memory=300 * MIB
    )
    result = await run_subprocess("return 'limited';", options=options)
    assert result.value == "limited"
    assert result.capability["memory_limit"] == "cgroup"
    limit, procs = child_files(fake_cgroup)
    assert limit == str(300 * MIB)
    assert procs.strip().isdigit()


async def test_a_worker_not_verified_in_its_cgroup_is_downgraded_or_refused(
    fake_cgroup: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cgroup.Cgroup, "contains", lambda self, pid: False)
    result = await run_subprocess("return 1;", options=SubprocessOptions())
    assert result.capability["memory_limit"] == "heap-only"
    required = SubprocessOptions(require=Requirements(memory_limit=MemoryLimit.CGROUP))
    with pytest.raises(CapabilityError, match="is not inside"):
        await run_subprocess("return 1;", options=required)


async def test_a_cgroup_that_cannot_be_created_is_a_downgrade_or_refusal(
    fake_cgroup: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cgroup.Cgroup, "create", classmethod(lambda cls, limit, base: (None, "no")))
    result = await run_subprocess("return 1;", options=SubprocessOptions())
    assert result.capability["memory_limit"] == "heap-only"
    with pytest.raises(CapabilityError):
        await run_subprocess(
            "return 1;",
            options=SubprocessOptions(require=Requirements(memory_limit=MemoryLimit.CGROUP)),
        )


@pytest.mark.parametrize(
    ("mode", "backend", "message"),
    [
        (EgressMode.PROXY, None, "no backend enforces it"),
        (EgressMode.DENIED, Backend(EgressMode.PROXY), "only enforces proxy"),
        (EgressMode.PROXY, Backend(None), "failed when asked"),
    ],
)
async def test_egress_is_checked_before_spawning(
    mode: EgressMode, backend: Backend | None, message: str
) -> None:
    launcher = Recording()
    options = SubprocessOptions(launcher=launcher, egress=mode, egress_backend=backend)
    with pytest.raises(EgressError, match=message):
        await run_subprocess("return 1;", options=options)
    assert launcher.used == 0


async def test_an_enforcing_egress_backend_lets_the_worker_start() -> None:
    launcher = Recording()
    options = SubprocessOptions(
        launcher=launcher, egress=EgressMode.PROXY, egress_backend=Backend(EgressMode.DENIED)
    )
    assert (await run_subprocess("return 'ok';", options=options)).value == "ok"
    assert launcher.used == 1


async def test_the_worker_runs_under_the_bwrap_provider(
    bindings: Bindings, dispatcher: ChainDispatcher, tmp_path: Path
) -> None:
    # the interpreter and yagent's own sources, when a checkout lives under the masked /tmp
    shown = [p for p in _NEEDED if p.startswith(("/tmp/", "/run/"))]
    bwrap = BwrapProvider(tmp_path, readable=shown)
    options = SubprocessOptions(
        launcher=bwrap,
        require=Requirements(launcher="bwrap", level=Level.NAMESPACES),
        egress=EgressMode.DENIED,  # satisfied by the launcher itself: bwrap unshares the network
    )
    program = "return (await host.fetch_data('k')).data;"
    result = await run_subprocess(program, bindings, dispatcher, options=options)
    assert result.value == "value-of-k"
    assert result.capability["launcher"] == "bwrap"
    assert result.capability["level"] == "namespaces"


async def test_a_required_level_the_launcher_does_not_declare_is_refused() -> None:
    launcher = Recording()
    options = SubprocessOptions(launcher=launcher, require=Requirements(level=Level.NAMESPACES))
    with pytest.raises(CapabilityError, match="level"):
        await run_subprocess("return 1;", options=options)
    assert launcher.used == 0


async def test_a_required_launcher_that_is_not_used_is_refused() -> None:
    with pytest.raises(CapabilityError, match="launcher"):
        await run_subprocess(
            "return 1;", options=SubprocessOptions(require=Requirements(launcher="bwrap"))
        )


async def test_a_worker_that_stops_answering_is_killed_at_the_deadline() -> None:
    hang = shell("hang", "echo 'connecting with password=hunter2' >&2; exec sleep 30")
    options = SubprocessOptions(launcher=hang, budget=Budget(wall=1.0))
    with pytest.raises(AbortedError) as info:
        await run_subprocess("return 1;", options=options)
    err = info.value
    assert err.cause is Cause.WALL
    assert "the worker was killed" in err.detail
    assert err.signal == 9
    assert "password=[redacted:secret]" in err.stderr
    assert "hunter2" not in err.stderr


async def test_the_callers_deadline_kills_the_worker_too() -> None:
    hang = shell("hang", "exec sleep 30")
    with (
        anyio.fail_after(10),
        anyio.CancelScope(deadline=anyio.current_time() + 0.5),
        pytest.raises(AbortedError) as info,
    ):
        await run_subprocess("return 1;", options=SubprocessOptions(launcher=hang))
    assert info.value.cause is Cause.DEADLINE


async def test_an_infinite_loop_in_the_worker_is_killed() -> None:
    with pytest.raises(AbortedError) as info:
        await run_subprocess("while (true) {}", options=SubprocessOptions(budget=Budget(wall=1.0)))
    assert info.value.cause is Cause.WALL


async def test_a_memory_bomb_in_the_worker_is_reported_as_heap() -> None:
    program = "const a = []; while (true) a.push('x'.repeat(1000) + a.length);"
    options = SubprocessOptions(budget=Budget(heap=32 * MIB, wall=20))
    with pytest.raises(AbortedError) as info:
        await run_subprocess(program, options=options)
    assert info.value.cause is Cause.HEAP
    assert toolfail.classify(info.value) is toolfail.Kind.BUDGET


async def test_budgets_are_the_parents(
    bindings: Bindings, dispatcher: ChainDispatcher, tools: Tools
) -> None:
    options = SubprocessOptions(budget=Budget(calls=2))
    with pytest.raises(AbortedError) as info:
        await run_subprocess(
            "for (;;) await host.fetch_data('k');", bindings, dispatcher, options=options
        )
    assert info.value.cause is Cause.CALLS
    assert len(tools.ran) == 2


@pytest.mark.parametrize(
    ("script", "cause", "detail"),
    [
        ("echo 'fatal: token=abc123' >&2; kill -SEGV $$", Cause.SIGNAL, "SIGSEGV"),
        ("echo 'Traceback: boom' >&2; exit 3", Cause.EXIT, "status 3"),
        ("exit 0", Cause.EXIT, "without a result"),
        ("read line; echo 'not json at all'", Cause.PROTOCOL, "not JSON"),
        ("read line; echo '[1, 2]'", Cause.PROTOCOL, "non-object"),
        ('read line; echo \'{"op": "done"}\'', Cause.PROTOCOL, "expected one of"),
    ],
)
async def test_abnormal_ends_are_classified_and_stderr_redacted(
    script: str, cause: Cause, detail: str
) -> None:
    options = SubprocessOptions(launcher=shell("fake", script), budget=Budget(wall=10))
    with pytest.raises(AbortedError) as info:
        await run_subprocess("return 1;", options=options)
    err = info.value
    assert err.cause is cause
    assert detail in err.detail
    assert toolfail.classify(err) is toolfail.Kind.INTERNAL
    assert "abc123" not in err.stderr


async def test_a_worker_reporting_a_bogus_abort_is_a_protocol_error() -> None:
    script = (
        'read line; echo \'{"op":"hello"}\'; read line; '
        'echo \'{"op":"abort","cause":"wall","detail":"x"}\''
    )
    options = SubprocessOptions(launcher=shell("fake", script), budget=Budget(wall=10))
    with pytest.raises(AbortedError) as info:
        await run_subprocess("return 1;", options=options)
    assert info.value.cause is Cause.PROTOCOL


async def test_a_worker_sending_calls_without_a_list_is_a_protocol_error() -> None:
    script = 'read line; echo \'{"op":"hello"}\'; read line; echo \'{"op":"calls","calls":5}\''
    options = SubprocessOptions(launcher=shell("fake", script), budget=Budget(wall=10))
    with pytest.raises(AbortedError) as info:
        await run_subprocess("return 1;", options=options)
    assert info.value.cause is Cause.PROTOCOL
    assert "without calls" in info.value.detail


async def test_a_worker_that_cannot_start_is_a_classified_abort() -> None:
    missing = FuncLauncher("missing", lambda argv: ["/nonexistent/launcher", *argv])
    with pytest.raises(AbortedError) as info:
        await run_subprocess("return 1;", options=SubprocessOptions(launcher=missing))
    assert info.value.cause is Cause.EXIT
    assert "could not be started" in info.value.detail
