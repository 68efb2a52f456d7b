"""searchkit.rg: find ripgrep, run it, read its `--json` stream into a `Tally`.

Contract:
- `locate_rg()` looks, in order, for the `rg` the `ripgrep` wheel installs beside this
  interpreter's scripts, then for `rg` on PATH; None when there is neither (spec 000, §15).
- rg runs from an argv list, never a shell, with `--` before the pattern; `--no-config` and a
  scrubbed `RIPGREP_CONFIG_PATH` so a user's config cannot change results; `--no-ignore-global`
  (the fallback cannot read git's global excludes either); `--hidden` with `--glob !.git` last;
  `--sort path` so the first N kept lines are the same on every run and the same as the
  fallback's. It runs in the workspace, so globs with `/` are relative to the workspace.
- The stream is read line by line; rg is killed once the tally is full, on timeout (the tally
  says `timed_out`) and on cancellation. A `--glob` only narrows: matches in files the ignore
  rules hide (rg lets a glob override them) are not counted (`Visibility`).
- A pattern or glob rg refuses raises `ToolFailure(INVALID_ARGS)` with rg's own message; other
  rg complaints (unreadable files) are listed in the tally's errors.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import Process

from yagent.kernel.toolfail import Kind, ToolFailure
from yagent.tools.ignorewalk import Visibility
from yagent.tools.searchkit.results import Hit, Query, Tally

# How rg's refusals of a pattern or glob begin (other stderr lines are per-file complaints).
_REFUSALS = ("rg: regex", "rg: error parsing glob", "rg: compiled regex")


@dataclass(frozen=True, slots=True)
class Rg:
    path: str
    source: str  # "ripgrep wheel" or "PATH"


def _wheel_dirs() -> list[str]:
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    with contextlib.suppress(KeyError):
        dirs.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    return [d for d in dirs if d]


def locate_rg(wheel_dirs: list[str] | None = None, search_path: str | None = None) -> Rg | None:
    """The wheel's `rg` first, then `rg` on PATH (`search_path` overrides `$PATH`)."""
    for directory in wheel_dirs if wheel_dirs is not None else _wheel_dirs():
        candidate = os.path.join(directory, "rg")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return Rg(candidate, "ripgrep wheel")
    found = shutil.which("rg", path=search_path)
    return Rg(found, "PATH") if found else None


def build_argv(rg: str, query: Query) -> list[str]:
    argv = [rg, "--json", "--no-config", "--sort", "path", "--hidden", "--no-ignore-global"]
    if query.ignore_case:
        argv.append("--ignore-case")
    if query.fixed_strings:
        argv.append("--fixed-strings")
    if query.glob:
        argv += ["--glob", query.glob]
    argv += ["--glob", "!.git", "--", query.pattern, query.root]
    return argv


def _text(obj: dict[str, Any]) -> tuple[str, bytes | None]:
    """rg's {"text": ...} or {"bytes": base64} → text, plus the raw bytes when not UTF-8."""
    if "text" in obj:
        return str(obj["text"]), None
    raw = base64.b64decode(obj["bytes"])
    return raw.decode("utf-8", errors="replace"), raw


def _path(obj: dict[str, Any]) -> str:
    if "text" in obj:
        return str(obj["text"])
    return os.fsdecode(base64.b64decode(obj["bytes"]))


def _hit(data: dict[str, Any]) -> Hit:
    text, raw = _text(data["lines"])
    text = text.removesuffix("\n").removesuffix("\r")
    spans: list[tuple[int, int]] = []
    if raw is None and text.isascii():
        spans = [(int(s["start"]), int(s["end"])) for s in data["submatches"]]
    else:
        encoded = raw if raw is not None else text.encode("utf-8")

        def chars(offset: int) -> int:
            return len(encoded[:offset].decode("utf-8", errors="replace"))

        spans = [(chars(int(s["start"])), chars(int(s["end"]))) for s in data["submatches"]]
    limit = len(text)
    spans = [(min(s, limit), min(e, limit)) for s, e in spans]
    return Hit(_path(data["path"]), int(data["line_number"]), text, spans)


class _Reader:
    """Feeds rg's JSON lines into the tally; `feed` returns False once nothing more matters."""

    def __init__(self, tally: Tally, visibility: Visibility | None) -> None:
        self.tally = tally
        self.visibility = visibility
        self.counting = True  # whether the current file's matches count

    def feed(self, line: bytes) -> bool:
        if line.startswith(b'{"type":"match"'):
            if not self.counting:
                return True
            keep = self.tally.count()
            if self.tally.full:
                return False
            if keep:
                self.tally.hits.append(_hit(json.loads(line)["data"]))
        elif line.startswith(b'{"type":"begin"') and self.visibility is not None:
            path = _path(json.loads(line)["data"]["path"])
            self.counting = self.visibility.visible(path)
        return True

    async def consume(self, stream: AsyncIterable[bytes]) -> bool:
        """Read to the end of the stream; True when it stopped early (the tally is full)."""
        pending: list[bytes] = []
        async for chunk in stream:
            # A pipe that always has data never suspends the reader; without this checkpoint a
            # timeout or a cancellation could wait for rg to finish on its own.
            await anyio.lowlevel.checkpoint()
            if b"\n" not in chunk:
                pending.append(chunk)  # a long line in pieces; joined once it ends
                continue
            pending.append(chunk)
            lines = b"".join(pending).split(b"\n")
            pending = [lines.pop()]
            for line in lines:
                if not self.feed(line):
                    return True
        return False


async def _drain(stream: AsyncIterable[bytes] | None, into: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        if len(into) < 65536:
            into += chunk


def _kill(proc: Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def run_rg(
    rg: Rg, query: Query, tally: Tally, *, time_limit: float, visibility: Visibility | None
) -> None:
    """Run rg for `query` into `tally`. OSError when rg cannot be started at all."""
    env = {k: v for k, v in os.environ.items() if k != "RIPGREP_CONFIG_PATH"}
    stderr = bytearray()
    reader = _Reader(tally, visibility)
    argv = build_argv(rg.path, query)
    proc = await anyio.open_process(argv, cwd=query.workspace, env=env, stdin=subprocess.DEVNULL)
    async with proc:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_drain, proc.stderr, stderr)
                stopped = False
                with anyio.move_on_after(time_limit) as scope:
                    assert proc.stdout is not None
                    stopped = await reader.consume(proc.stdout)
                tally.timed_out = scope.cancelled_caught
                if stopped or tally.timed_out:
                    _kill(proc)  # rg has nothing more we need; its stderr then ends too
        except BaseException:
            _kill(proc)  # cancelled: never leave rg running
            raise
    message = stderr.decode("utf-8", errors="replace").strip()
    if proc.returncode == 2 and tally.total == 0 and message.startswith(_REFUSALS):
        what = "glob" if "glob" in message.split("\n", 1)[0] else "regular expression"
        detail = message.removeprefix("rg: ")
        raise ToolFailure(Kind.INVALID_ARGS, f"invalid {what} (ripgrep syntax): {detail}")
    if message:
        tally.errors += [line.removeprefix("rg: ") for line in message.splitlines() if line][:50]
