"""`cli.lineout`: the --json stream's writer thread, against a real pipe.

- A reader that does not read: every write returns at once, the memory held stays under
  `MEMORY` plus one line while 20 MiB of lines wait (the rest in the overflow file), and once the
  reader reads it gets every line, in order.
- A reader that closed the pipe: the stream is gone (EPIPE), `on_gone` is called once, lines are
  counted, `finish` says how many were not written.
- A reader that never reads: `finish(wait)` gives up, `stalled`, with the lines not written.
- An overflow the disk refuses: the lines lost are said in place, before the next line.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import threading
from pathlib import Path

import anyio
import jsonschema
import pytest

from yagent.cli import lineout
from yagent.cli.lineout import LineOut


def reader(fd: int, into: bytearray) -> threading.Thread:
    def read() -> None:
        while chunk := os.read(fd, 1 << 16):
            into.extend(chunk)

    return threading.Thread(target=read, daemon=True)


def test_a_reader_that_waits_gets_every_line_in_order_with_memory_bounded() -> None:
    r, w = os.pipe()
    out = LineOut(w)
    line = json.dumps({"type": "tool_result", "content": "x" * 1000})
    count = 20 * 1024 * 1024 // len(line)
    peak = 0
    for i in range(count):
        out.write(f'{{"n": {i}, "line": {line}}}\n')
        peak = max(peak, out.held())
    assert peak <= lineout.MEMORY + 2 * len(line), peak
    got = bytearray()
    thread = reader(r, got)
    thread.start()
    done = anyio.run(out.finish, 60.0)
    os.close(w)
    thread.join(60)
    os.close(r)
    assert done.written, done
    numbers = [json.loads(x)["n"] for x in got.decode().splitlines()]
    assert numbers == list(range(count))


def test_a_closed_pipe_ends_the_stream_once_and_counts_what_was_lost() -> None:
    r, w = os.pipe()
    os.close(r)
    called: list[int] = []
    out = LineOut(w, on_gone=lambda: called.append(1))
    for i in range(5):
        out.write(f'{{"n": {i}}}\n')
    done = anyio.run(out.finish, 10.0)
    os.close(w)
    assert (done.written, done.epipe, done.unwritten) == (False, True, 5), done
    assert called == [1]


def test_a_reader_that_never_reads_is_given_up_after_the_wait() -> None:
    r, w = os.pipe()
    out = LineOut(w)
    for i in range(2000):  # far more than a pipe holds
        out.write(json.dumps({"n": i, "pad": "y" * 200}) + "\n")
    done = anyio.run(out.finish, 0.3)
    assert done.stalled
    assert not done.written
    assert 0 < done.unwritten < 2000, done
    os.close(r)  # the writer thread, blocked in its write, ends with EPIPE
    os.close(w)


def test_lines_the_overflow_cannot_take_are_said_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lineout, "MEMORY", 1000)

    def full(*args: object, **kwargs: object) -> object:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    r, w = os.pipe()
    out = LineOut(w)
    out.write(json.dumps({"n": 0, "pad": "z" * 2000}) + "\n")  # over MEMORY: the overflow's
    out.write(json.dumps({"n": 1}) + "\n")
    got = bytearray()
    thread = reader(r, got)
    thread.start()
    done = anyio.run(out.finish, 30.0)
    os.close(w)
    thread.join(30)
    os.close(r)
    assert done.written
    lines = [json.loads(x) for x in got.decode().splitlines()]
    assert lines[0]["type"] == "dropped"
    assert lines[0]["counts"] == {"line": 1}
    assert "No space left on device" in lines[0]["reason"]
    schema = json.loads(
        (Path(__file__).resolve().parents[2] / "docs/events.schema.json").read_text()
    )
    assert not list(jsonschema.Draft202012Validator(schema).iter_errors(lines[0]))
    assert lines[1:] == [{"n": 1}]


def test_a_reader_that_closes_is_noticed_with_nothing_written() -> None:
    r, w = os.pipe()
    noticed = threading.Event()
    out = LineOut(w, on_gone=noticed.set)
    os.close(r)  # nothing was ever written: only the hang-up watch can tell
    assert noticed.wait(30)
    assert out.epipe
    os.close(w)


def test_a_reader_that_closes_after_the_last_line_lost_nothing() -> None:
    r, w = os.pipe()
    noticed = threading.Event()
    out = LineOut(w, on_gone=noticed.set)
    out.write('{"n": 1}\n')
    assert os.read(r, 100) == b'{"n": 1}\n'
    os.close(r)
    assert noticed.wait(30)
    done = anyio.run(out.finish, 10.0)
    os.close(w)
    assert done.written, done


def test_a_failed_write_that_is_not_a_closed_pipe_ends_with_74(
    capfd: pytest.CaptureFixture[str],
) -> None:
    fd = os.open("/dev/full", os.O_WRONLY)  # every write: ENOSPC
    try:
        out = LineOut(fd)
        out.write('{"n": 1}\n')
        code = anyio.run(lineout.end, out, 10.0, "session s is saved")
    finally:
        os.close(fd)
    assert code == lineout.EXIT_FAILED
    said = capfd.readouterr().err
    assert said.startswith("yagent: stdout failed (No space left on device): the run was stopped")
    assert said.rstrip().endswith("1 line(s) not written; session s is saved")
