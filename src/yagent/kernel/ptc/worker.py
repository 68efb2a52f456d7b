"""ptc worker: the subprocess side — runs one program's isolate and asks the parent for every
host call (`python -m yagent.kernel.ptc.worker`).

Contract: speaks `wire` on its original stdout (duplicated away first; fd 1 is then pointed at
stderr so a stray write can never corrupt the protocol) and stdin: `init` → `hello` → `run` →
(`calls` ↔ `answers`)* → `done` | `abort`. It executes nothing itself: every host call goes to
the parent, which judges and runs it through its chain. Budgets other than the V8 heap are the
parent's; the worker only reports what its engine saw. End of input means the parent is gone:
the worker exits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from typing import Any, BinaryIO

import anyio

from yagent.kernel.ptc import engine, wire
from yagent.kernel.ptc.budget import Budget
from yagent.kernel.ptc.errors import Cause, Stop
from yagent.kernel.ptc.result import LogBook


class _Forwarding(LogBook):
    """Console lines kept until the next message carries them to the parent."""

    def take(self) -> dict[str, Any]:
        out = {"logs": self.lines, "dropped": self.dropped}
        self.lines, self.dropped = [], 0
        return out


class _Pipe:
    def __init__(self, inp: BinaryIO, out: BinaryIO) -> None:
        self._in = inp
        self._out = out

    async def send(self, message: dict[str, Any]) -> None:
        data = wire.encode(message)
        await anyio.to_thread.run_sync(self._write, data)

    def _write(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    async def receive(self, *expect: str) -> dict[str, Any]:
        line = await anyio.to_thread.run_sync(self._in.readline, wire.MAX_LINE + 1)
        if not line:
            raise EOFError("the parent closed the pipe")
        if len(line) > wire.MAX_LINE:
            raise Stop(Cause.PROTOCOL, "the parent sent a line longer than the protocol allows")
        return wire.decode(line, expect=expect)


async def serve(pipe: _Pipe) -> None:
    init = await pipe.receive("init")
    fields = {f.name for f in dataclasses.fields(Budget)}
    budget = Budget(**{k: v for k, v in dict(init.get("budget") or {}).items() if k in fields})
    await pipe.send({"op": "hello", "pid": os.getpid(), "heap": budget.heap})
    run = await pipe.receive("run")
    program, idents = run.get("program"), run.get("idents")
    if not isinstance(program, str) or not isinstance(idents, list):
        raise Stop(Cause.PROTOCOL, "a run message without program and identifiers")
    logs = _Forwarding(budget.logs)

    async def answer(calls: list[Any]) -> list[dict[str, Any]]:
        await pipe.send({"op": "calls", "calls": calls, **logs.take()})
        reply = await pipe.receive("answers")
        answers = reply.get("answers")
        if not isinstance(answers, list):
            raise Stop(Cause.PROTOCOL, "an answers message without answers")
        return answers

    try:
        final = await engine.run(program, [str(i) for i in idents], budget, answer, logs)
    except Stop as stop:
        await pipe.send({"op": "abort", "cause": stop.cause.value, "detail": stop.detail})
        return
    await pipe.send(
        {
            "op": "done",
            "ok": final.ok,
            "value": final.value_json,
            "size": final.value_size,
            "error": final.error,
            "kind": final.kind,
            "unawaited": final.unawaited,
            **logs.take(),
        }
    )


def main(stdin_fd: int = 0, stdout_fd: int = 1, stderr_fd: int = 2) -> int:
    """Serve one run on these descriptors; the protocol gets a private copy of stdout."""
    out = os.fdopen(os.dup(stdout_fd), "wb", buffering=0)
    os.dup2(stderr_fd, stdout_fd)
    inp = os.fdopen(os.dup(stdin_fd), "rb")
    pipe = _Pipe(inp, out)
    try:
        anyio.run(serve, pipe)
    except EOFError:
        return 0
    except Stop as stop:
        with contextlib.suppress(OSError):
            anyio.run(pipe.send, {"op": "abort", "cause": stop.cause.value, "detail": stop.detail})
        return 2
    finally:
        inp.close()
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
