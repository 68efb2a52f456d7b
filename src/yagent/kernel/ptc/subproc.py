"""ptc subprocess form: the isolate runs in a worker process; the parent keeps the chain.

Contract (beyond the in-process form's, which it shares: the same bindings, session, budgets,
result and management refusal):
- Before spawning: bindings without a chain are refused (`UnmanagedError`); an egress mode above
  unrestricted without a backend that enforces it — the given `egress_backend`, else the launcher
  when it declares enforcement (bwrap unshares the network) — is refused (`EgressError`); a
  required capability (memory limit, launcher, `sandbox.Level`) the planned worker cannot provide
  is refused (`CapabilityError`). Nothing is spawned.
- Memory: where cgroup v2 can delegate the memory controller, the worker joins a fresh child
  cgroup with `memory.max` *before* it execs (launcher included), and the parent verifies it is
  there; otherwise the declared capability is `heap-only`. A verification that fails downgrades
  the declaration — and refuses the run if `cgroup` was required (fail closed, never a silent
  downgrade). The declaration is in `Result.capability`.
- The worker runs with a scrubbed environment (no inherited secrets), in its own session, under
  the optional launcher. Host calls it asks for are answered by the parent's `HostSession`
  (chain, budgets) exactly like in-process calls.
- A worker that stops answering is killed (its process group and cgroup) at the deadline — the
  earlier of the wall budget and the caller's. Every abnormal end is an `AbortedError` with a
  classified cause (deadline, oom_killed, signal, exit, protocol, or the worker's own heap /
  engine report) and the worker's stderr, redacted, capped at `STDERR_CAP` bytes.
The subprocess form is POSIX-only (process groups, /bin/sh, cgroups).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.buffered import BufferedByteReceiveStream

from yagent.kernel.confine.sandbox import EgressEnforcer, EgressMode
from yagent.kernel.ptc import cgroup, engine, wire
from yagent.kernel.ptc.bindings import Bindings
from yagent.kernel.ptc.budget import MIB, Budget, deadline_detail, wall_deadline
from yagent.kernel.ptc.confine import (
    Capability,
    Launcher,
    MemoryLimit,
    Requirements,
    check_egress,
    level_of,
)
from yagent.kernel.ptc.dispatch import Dispatcher
from yagent.kernel.ptc.errors import AbortedError, CapabilityError, Cause, Stop
from yagent.kernel.ptc.redact import redact
from yagent.kernel.ptc.result import Final, LogBook, Observer, Result, Usage, finish
from yagent.kernel.ptc.runner import check_managed
from yagent.kernel.ptc.session import HostSession, Scope

WORKER_MODULE = "yagent.kernel.ptc.worker"
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "HOME", "PYTHONPATH")
MEMORY_HEADROOM = 256 * MIB  # the worker's Python and V8 outside the JS heap
STDERR_CAP = 64 * 1024
GRACE = 2.0  # seconds to reap a killed worker and collect its last stderr


@dataclass(frozen=True, slots=True)
class SubprocessOptions:
    budget: Budget = field(default_factory=Budget)
    memory: int | None = None  # cgroup memory.max; default budget.heap + MEMORY_HEADROOM
    require: Requirements = field(default_factory=Requirements)
    launcher: Launcher | None = None
    egress: EgressMode = EgressMode.UNRESTRICTED
    egress_backend: EgressEnforcer | None = None
    python: str = sys.executable
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def memory_max(self) -> int:
        return self.memory or self.budget.heap + MEMORY_HEADROOM


def plan(options: SubprocessOptions) -> tuple[Capability, Path | None, str]:
    """The capability a worker would have here, where its cgroup would go, and why not."""
    base, why = cgroup.probe()
    memory = MemoryLimit.CGROUP if base is not None else MemoryLimit.HEAP_ONLY
    launcher = options.launcher.name if options.launcher is not None else ""
    return Capability(memory, "process", launcher, level_of(options.launcher)), base, why


def classify_exit(returncode: int | None, *, oom: bool) -> tuple[Cause, str]:
    """Why a worker ended without a result, from its exit status and the cgroup's OOM count."""
    if oom:
        return Cause.OOM_KILLED, "the worker was killed by its cgroup memory limit (memory.max)"
    if returncode is None:
        return Cause.PROTOCOL, "the worker closed its output but did not exit"
    number = -returncode if returncode < 0 else returncode - 128 if returncode > 128 else 0
    if number:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return Cause.SIGNAL, f"the worker died of {name} (status {returncode})"
    if returncode == 0:
        return Cause.EXIT, "the worker exited without a result"
    return Cause.EXIT, f"the worker exited with status {returncode} without a result"


def _require(require: Requirements, capability: Capability, why: str) -> None:
    missing = require.missing(capability)
    if missing:
        detail = f" ({why})" if why else ""
        raise CapabilityError(
            f"required sandbox capability not available here: {missing}; this worker provides "
            f"{capability.as_dict()}{detail}; refusing to run",
            missing=missing,
        )


def _env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: os.environ[k] for k in ENV_KEEP if k in os.environ}
    env.update({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


async def run_subprocess(
    program: str,
    bindings: Bindings | None = None,
    dispatcher: Dispatcher | None = None,
    *,
    options: SubprocessOptions | None = None,
    scope: Scope | None = None,
    allow_unmanaged: bool = False,
    observer: Observer | None = None,
) -> Result:
    """Run `program` in a worker process (see the module contract)."""
    options = options or SubprocessOptions()
    bindings = bindings if bindings is not None else Bindings.empty()
    check_managed(bindings, dispatcher, allow_unmanaged=allow_unmanaged)
    backend = options.egress_backend if options.egress_backend is not None else options.launcher
    check_egress(options.egress, backend)
    capability, base, why = plan(options)
    _require(options.require, capability, why)
    group: cgroup.Cgroup | None = None
    if base is not None:
        group, why = cgroup.Cgroup.create(options.memory_max, base)
        if group is None:
            capability = dataclasses.replace(capability, memory_limit=MemoryLimit.HEAP_ONLY)
            _require(options.require, capability, why)
    session = HostSession(
        bindings,
        dispatcher,
        options.budget,
        scope=scope,
        allow_unmanaged=allow_unmanaged,
        observer=observer,
    )
    worker = _Worker(program, bindings, session, options, capability, group)
    try:
        return await worker.run()
    finally:
        if group is not None:
            group.close()


class _Worker:
    def __init__(
        self,
        program: str,
        bindings: Bindings,
        session: HostSession,
        options: SubprocessOptions,
        capability: Capability,
        group: cgroup.Cgroup | None,
    ) -> None:
        self.program = program
        self.bindings = bindings
        self.session = session
        self.options = options
        self.capability = capability
        self.group = group
        self.logs = LogBook(options.budget.logs)
        self.stderr = bytearray()
        self.stderr_dropped = 0
        self.stderr_done = anyio.Event()

    def argv(self) -> list[str]:
        argv = [self.options.python, "-m", WORKER_MODULE]
        if self.options.launcher is not None:
            argv = self.options.launcher.wrap(argv)
        if self.group is not None:
            argv = [*self.group.join_argv(), *argv]
        return argv

    async def run(self) -> Result:
        budget = self.options.budget
        deadline, deadline_cause = wall_deadline(budget)
        started = anyio.current_time()
        final: Final | None = None
        stop: Stop | None = None
        refusal: CapabilityError | None = None
        try:
            proc = await anyio.open_process(
                self.argv(), env=_env(self.options.env), start_new_session=True
            )
        except OSError as exc:
            raise AbortedError(
                Cause.EXIT, f"the worker could not be started ({type(exc).__name__}: {exc})"
            ) from exc
        try:
            async with anyio.create_task_group() as tg:
                assert proc.stderr is not None
                tg.start_soon(self._read_stderr, proc.stderr)
                with anyio.CancelScope(deadline=deadline):
                    try:
                        final = await self._converse(proc)
                    except Stop as exc:
                        stop = exc
                    except CapabilityError as exc:
                        refusal = exc
                if final is None and stop is None and refusal is None:
                    detail = deadline_detail(deadline_cause, budget)
                    stop = Stop(deadline_cause, f"{detail}; the worker was killed")
                self._kill(proc)
                with anyio.move_on_after(GRACE):
                    await proc.wait()
                with anyio.move_on_after(GRACE):
                    await self.stderr_done.wait()
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                self._kill(proc)
                await proc.aclose()
        if refusal is not None:
            raise refusal
        usage = Usage(
            self.session.meter.calls, self.session.meter.bytes, anyio.current_time() - started
        )
        if stop is not None or final is None:
            assert stop is not None
            raise self._aborted(stop, proc.returncode, usage)
        return finish(
            final,
            self.logs,
            self.session.records,
            usage,
            cap=budget.result,
            capability=self.capability.as_dict(),
        )

    def _aborted(self, stop: Stop, returncode: int | None, usage: Usage) -> AbortedError:
        text = self.stderr.decode("utf-8", "replace")
        if self.stderr_dropped:
            text += f"\n[stderr: {self.stderr_dropped} more bytes dropped]"
        return AbortedError(
            stop.cause,
            stop.detail,
            logs=tuple(self.logs.lines),
            calls=tuple(self.session.records),
            usage=usage,
            stderr=redact(text),
            exit_code=returncode,
            signal=-returncode if returncode is not None and returncode < 0 else None,
        )

    async def _converse(self, proc: Process) -> Final:
        assert proc.stdout is not None
        stream = BufferedByteReceiveStream(proc.stdout)
        budget = dataclasses.asdict(self.options.budget)
        await self._send(proc, {"op": "init", "budget": budget})
        await self._receive(proc, stream, "hello")
        self._verify(proc)
        run = {"op": "run", "program": self.program, "idents": list(self.bindings.idents)}
        await self._send(proc, run)
        while True:
            message = await self._receive(proc, stream, "calls", "done", "abort")
            self.logs.add(*wire.logs_of(message))
            if message["op"] == "done":
                unawaited = message.get("unawaited", 0)
                return engine.final_from(message, unawaited=int(unawaited or 0))
            if message["op"] == "abort":
                raise wire.worker_stop(message)
            calls = message.get("calls")
            if not isinstance(calls, list):
                raise Stop(Cause.PROTOCOL, "a calls message without calls")
            answers = await self.session.answer(calls)
            await self._send(proc, {"op": "answers", "answers": answers})

    def _verify(self, proc: Process) -> None:
        if self.group is None or self.group.contains(proc.pid):
            return
        self.capability = dataclasses.replace(self.capability, memory_limit=MemoryLimit.HEAP_ONLY)
        _require(
            self.options.require,
            self.capability,
            f"the worker (pid {proc.pid}) is not inside {self.group.path}",
        )

    async def _send(self, proc: Process, message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        try:
            await proc.stdin.send(wire.encode(message))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            raise await self._ended(proc) from None

    async def _receive(
        self, proc: Process, stream: BufferedByteReceiveStream, *expect: str
    ) -> dict[str, Any]:
        try:
            line = await stream.receive_until(b"\n", wire.MAX_LINE)
        except anyio.DelimiterNotFound as exc:
            raise Stop(Cause.PROTOCOL, "the worker wrote a line longer than allowed") from exc
        except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError):
            raise await self._ended(proc) from None
        return wire.decode(line, expect=expect)

    async def _ended(self, proc: Process) -> Stop:
        code = await proc.wait()
        oom = self.group.oom_killed() if self.group is not None else False
        return Stop(*classify_exit(code, oom=oom))

    def _kill(self, proc: Process) -> None:
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        if self.group is not None:
            self.group.kill()

    async def _read_stderr(self, stream: ByteReceiveStream) -> None:
        try:
            async for chunk in stream:
                room = STDERR_CAP - len(self.stderr)
                self.stderr += chunk[: max(0, room)]
                self.stderr_dropped += max(0, len(chunk) - max(0, room))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            self.stderr_done.set()
