"""Smaller parts: confinement vocabulary, budgets, session requests, results, engine faults."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from yagent.kernel.confine.sandbox import EgressMode, Level
from yagent.kernel.judge import toolfail
from yagent.kernel.ptc import prelude
from yagent.kernel.ptc.budget import Budget, Meter, wall_deadline
from yagent.kernel.ptc.confine import (
    Capability,
    FuncLauncher,
    Launcher,
    MemoryLimit,
    Requirements,
    check_egress,
    level_of,
)
from yagent.kernel.ptc.errors import KIND_OF_CAUSE, AbortedError, Cause, EgressError, Stop
from yagent.kernel.ptc.result import Final, LogBook, Result, Usage, finish
from yagent.kernel.ptc.runner import run
from yagent.kernel.ptc.session import parse_request


def test_requirements_list_every_gap() -> None:
    weak = Capability()
    strong = Capability(MemoryLimit.CGROUP, launcher="bwrap", level=Level.NAMESPACES)
    need = Requirements(memory_limit=MemoryLimit.CGROUP, launcher="bwrap", level=Level.NAMESPACES)
    assert need.missing(weak) == {
        "memory_limit": "cgroup",
        "launcher": "bwrap",
        "level": "namespaces",
    }
    assert need.missing(strong) == {}
    assert Requirements().missing(weak) == {}
    assert weak.as_dict() == {
        "memory_limit": "heap-only",
        "isolation": "process",
        "launcher": "none",
        "level": "in_process",
    }


def test_launchers_declare_their_level_or_are_the_weakest() -> None:
    launcher = FuncLauncher("prefix", lambda argv: ["env", *argv])
    assert isinstance(launcher, Launcher)
    assert launcher.wrap(["python"]) == ["env", "python"]
    assert level_of(launcher) is Level.IN_PROCESS
    assert level_of(FuncLauncher("ns", list, Level.NAMESPACES)) is Level.NAMESPACES
    assert level_of(None) is Level.IN_PROCESS

    class Boasting:
        level = "quantum"

    assert level_of(Boasting()) is Level.IN_PROCESS


class Declares:
    def __init__(self, mode: int) -> None:
        self.mode = mode

    def egress(self) -> EgressMode:
        return EgressMode(self.mode)


def test_egress_modes_are_ordered_and_checked() -> None:
    check_egress(EgressMode.UNRESTRICTED, None)
    with pytest.raises(EgressError, match="no backend"):
        check_egress(EgressMode.PROXY, object())
    check_egress(EgressMode.PROXY, Declares(EgressMode.PROXY))
    check_egress(EgressMode.PROXY, Declares(EgressMode.DENIED))
    with pytest.raises(EgressError) as info:
        check_egress(EgressMode.DENIED, Declares(EgressMode.UNRESTRICTED))
    assert toolfail.classify(info.value) is toolfail.Kind.INTERNAL
    with pytest.raises(EgressError, match="failed when asked"):
        check_egress(EgressMode.PROXY, Declares(7))


def test_meter_charges_calls_and_bytes() -> None:
    meter = Meter(Budget(calls=2, bytes=10))
    assert meter.charge_call() == 1
    assert meter.charge_call() == 2
    with pytest.raises(Stop) as info:
        meter.charge_call()
    assert info.value.cause is Cause.CALLS
    assert meter.calls == 2
    meter.charge_bytes(10)
    with pytest.raises(Stop) as info:
        meter.charge_bytes(1)
    assert info.value.cause is Cause.BYTES
    assert meter.bytes == 10


@pytest.mark.anyio
async def test_wall_deadline_is_the_earlier_of_budget_and_caller() -> None:
    now = anyio.current_time()
    deadline, cause = wall_deadline(Budget(wall=5))
    assert cause is Cause.WALL
    assert now + 5 <= deadline <= anyio.current_time() + 5
    with anyio.CancelScope(deadline=now + 1):
        deadline, cause = wall_deadline(Budget(wall=5))
        await anyio.lowlevel.checkpoint()
    assert cause is Cause.DEADLINE
    assert deadline < now + 1
    with anyio.CancelScope(deadline=now + 100):
        assert wall_deadline(Budget(wall=5))[1] is Cause.WALL
        await anyio.lowlevel.checkpoint()


def test_every_cause_has_a_kind() -> None:
    assert set(KIND_OF_CAUSE) == set(Cause)
    err = AbortedError(Cause.SIGNAL, "x")
    assert err.budget is None
    assert toolfail.classify(err) is toolfail.Kind.INTERNAL
    assert AbortedError(Cause.BYTES, "x").budget == "bytes"


@pytest.mark.parametrize(
    "raw",
    [
        "text",
        {"id": True, "ident": "t", "form": "object", "args": "{}"},
        {"id": 1, "ident": 3, "form": "object", "args": "{}"},
        {"id": 1, "ident": "t", "form": "named", "args": "{}"},
        {"id": 1, "ident": "t", "form": "object", "args": {}},
        {"id": 1, "ident": "t", "form": "object", "args": "{nope"},
    ],
)
def test_malformed_requests_are_protocol_errors(raw: object) -> None:
    with pytest.raises(Stop) as info:
        parse_request(raw)
    assert info.value.cause is Cause.PROTOCOL


def test_logbook_caps_and_counts() -> None:
    book = LogBook(5)
    book.add(["abc", {"x": 1}, "de", "f"], dropped=2)
    assert book.lines == ["abc", "de"]
    assert book.dropped == 4


def test_failed_finals_keep_their_kind_or_become_runtime() -> None:
    book = LogBook(10)
    denied = finish(Final(False, error="no", kind="permission"), book, [], Usage(), cap=10)
    assert denied.kind is toolfail.Kind.PERMISSION
    odd = finish(Final(False, error="?", kind="made-up"), book, [], Usage(), cap=10)
    assert odd.kind is toolfail.Kind.UNKNOWN
    plain = finish(Final(False, error="bug"), book, [], Usage(), cap=10)
    assert plain.kind is toolfail.Kind.RUNTIME
    assert Result(False, "", error="bug").render() == "error (program): bug"


def test_prelude_embeds_identifiers_and_program_as_literals() -> None:
    code = prelude.prelude(["a", "b"], log_cap=7, result_cap=9)
    assert 'const IDENTS = ["a", "b"];' in code
    assert "LOG_CAP = 7;" in code
    assert prelude.start("})(); evil(); (() => {") == ('__ptc.start("})(); evil(); (() => {")')
    assert prelude.deliver([{"id": 1, "value": "é"}]).startswith('__ptc.deliver("[{')


@pytest.mark.anyio
async def test_a_program_cannot_break_out_of_its_function() -> None:
    result = await run("})(); globalThis.escaped = 1; (async () => {")
    assert not result.ok
    assert "SyntaxError" in result.error


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("drain", "cause"),
    [
        ("(() => { throw new Error('driver bug'); })()", Cause.ENGINE),
        ("JSON.stringify({calls: 5})", Cause.PROTOCOL),
    ],
)
async def test_driver_faults_are_classified(
    monkeypatch: pytest.MonkeyPatch, drain: str, cause: Cause
) -> None:
    monkeypatch.setattr(prelude, "DRAIN", drain)
    with pytest.raises(AbortedError) as info:
        await run("return 1;")
    assert info.value.cause is cause
