"""The worker protocol: messages, the worker's own loop, exit classification, engine states."""

from __future__ import annotations

import json
import os
import signal
from typing import Any

import pytest

from yagent.kernel.ptc import engine, wire, worker
from yagent.kernel.ptc.budget import MIB
from yagent.kernel.ptc.errors import Cause, Stop
from yagent.kernel.ptc.subproc import classify_exit


def test_decode_refuses_what_is_not_the_protocol() -> None:
    assert wire.decode(b'{"op":"hello","pid":3}\n', expect=("hello",)) == {"op": "hello", "pid": 3}
    with pytest.raises(Stop, match="not JSON"):
        wire.decode(b"garbage\n", expect=("hello",))
    with pytest.raises(Stop, match="non-object"):
        wire.decode(b"[1]\n", expect=("hello",))
    with pytest.raises(Stop, match="expected one of"):
        wire.decode(b'{"op":"done"}\n', expect=("hello",))
    assert wire.encode({"op": "x", "s": "é"}) == '{"op":"x","s":"é"}\n'.encode()


def test_logs_and_worker_stops_are_validated() -> None:
    assert wire.logs_of({"op": "calls"}) == ([], 0)
    assert wire.logs_of({"logs": ["a"], "dropped": 2}) == (["a"], 2)
    with pytest.raises(Stop):
        wire.logs_of({"logs": "a"})
    heap = wire.worker_stop({"cause": "heap", "detail": "too big"})
    assert heap.cause is Cause.HEAP
    assert heap.detail == "too big"
    for bogus in ({"cause": "wall", "detail": "x"}, {"cause": "nonsense"}, {"cause": "heap"}):
        assert wire.worker_stop(bogus).cause is Cause.PROTOCOL


@pytest.mark.parametrize(
    ("code", "oom", "cause", "text"),
    [
        (-9, True, Cause.OOM_KILLED, "memory.max"),
        (-11, False, Cause.SIGNAL, "SIGSEGV"),
        (137, False, Cause.SIGNAL, "SIGKILL (status 137)"),
        (128 + 99, False, Cause.SIGNAL, "signal 99"),
        (0, False, Cause.EXIT, "without a result"),
        (3, False, Cause.EXIT, "status 3"),
        (None, False, Cause.PROTOCOL, "did not exit"),
    ],
)
def test_exit_classification(code: int | None, oom: bool, cause: Cause, text: str) -> None:
    got, detail = classify_exit(code, oom=oom)
    assert got is cause
    assert text in detail


def test_final_states_are_validated() -> None:
    ok = engine.final_from({"ok": True, "value": "[1]", "size": 3})
    assert ok.ok
    assert ok.value_json == "[1]"
    cut = engine.final_from({"ok": True, "value": "[1,", "size": 99}, unawaited=2)
    assert cut.value_size == 99
    assert cut.unawaited == 2
    failed = engine.final_from({"ok": False, "error": "E", "kind": "permission"})
    assert failed.error == "E"
    assert failed.kind == "permission"
    for bad in (
        {"ok": True, "value": 1, "size": 1},
        {"ok": True, "value": "[1,", "size": 3},
        {"ok": False, "error": 3},
        {"ok": False, "error": "E", "kind": 5},
    ):
        with pytest.raises(Stop) as info:
            engine.final_from(bad)
        assert info.value.cause is Cause.PROTOCOL


def test_drained_states_are_validated() -> None:
    for raw in (None, "not json", "[1]"):
        with pytest.raises(Stop) as info:
            engine._state(raw)
        assert info.value.cause is Cause.PROTOCOL


def serve_lines(lines: list[dict[str, Any] | bytes]) -> tuple[int, list[dict[str, Any]]]:
    """Run the worker's `main` on pipes fed with `lines`; answer its status and messages."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err = os.open(os.devnull, os.O_WRONLY)
    try:
        for line in lines:
            os.write(in_w, line if isinstance(line, bytes) else wire.encode(line))
        os.close(in_w)
        code = worker.main(in_r, out_w, err)
        os.close(out_w)
        data = b""
        while chunk := os.read(out_r, 65536):
            data += chunk
    finally:
        for fd in (in_r, out_r, err):
            os.close(fd)
    return code, [json.loads(line) for line in data.splitlines()]


INIT = {"op": "init", "budget": {"heap": 64 * MIB, "logs": 100, "unknown": 1}}


def test_the_worker_serves_a_run_asking_the_parent_for_host_calls() -> None:
    run = {
        "op": "run",
        "program": "console.log('hi'); return await host.t('x') + 1;",
        "idents": ["t"],
    }
    answers = {"op": "answers", "answers": [{"id": 1, "ok": True, "value": 41}]}
    code, out = serve_lines([INIT, run, answers])
    assert code == 0
    hello, calls, done = out
    assert hello["op"] == "hello"
    assert hello["pid"] == os.getpid()
    assert hello["heap"] == 64 * MIB
    assert calls == {
        "op": "calls",
        "calls": [{"id": 1, "ident": "t", "form": "positional", "args": '["x"]'}],
        "logs": ["hi"],
        "dropped": 0,
    }
    assert done["op"] == "done"
    assert done["ok"] is True
    assert done["value"] == "42"


def test_the_worker_exits_quietly_when_the_parent_goes_away() -> None:
    assert serve_lines([]) == (0, [])
    run = {"op": "run", "program": "return await host.t();", "idents": ["t"]}
    code, out = serve_lines([INIT, run])
    assert code == 0
    assert [m["op"] for m in out] == ["hello", "calls"]


@pytest.mark.parametrize(
    ("lines", "detail"),
    [
        ([b"garbage\n"], "not JSON"),
        ([INIT, {"op": "run", "program": 1, "idents": []}], "without program"),
        (
            [INIT, {"op": "run", "program": "await host.t()", "idents": ["t"]}, {"op": "answers"}],
            "without answers",
        ),
    ],
)
def test_the_worker_reports_protocol_errors(lines: list[Any], detail: str) -> None:
    _code, out = serve_lines(lines)
    abort = out[-1]
    assert abort["op"] == "abort"
    assert abort["cause"] == "protocol"
    assert detail in abort["detail"]


def test_the_worker_refuses_an_overlong_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "MAX_LINE", 64)
    code, out = serve_lines([b'{"op":"init","pad":"' + b"x" * 100 + b'"}\n'])
    assert code == 2
    assert out[-1]["cause"] == "protocol"
    assert "longer" in out[-1]["detail"]


def test_the_worker_reports_its_heap_limit() -> None:
    run = {
        "op": "run",
        "program": "const a = []; for (;;) a.push('x'.repeat(999) + a.length);",
        "idents": [],
    }
    code, out = serve_lines([{"op": "init", "budget": {"heap": 32 * MIB}}, run])
    assert code == 0
    assert out[-1]["op"] == "abort"
    assert out[-1]["cause"] == "heap"


def test_sigkill_is_named() -> None:
    assert signal.Signals(9).name in classify_exit(-9, oom=False)[1]
