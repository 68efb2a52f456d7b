"""searchkit.rg's reader on records too long to hold: fed a ripgrep `--json` stream in pipe-sized
chunks, as the tool reads it, with one match record of 64 MB between two ordinary ones."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import AsyncIterator

import pytest

from yagent.tools.searchkit import rg
from yagent.tools.searchkit.results import Tally

CHUNK = 65536


def record(kind: str, data: dict[str, object]) -> bytes:
    return json.dumps({"type": kind, "data": data}, separators=(",", ":")).encode() + b"\n"


def match(path: str, line: int, text: str) -> bytes:
    at = text.index("aaa")
    data = {
        "path": {"text": path},
        "lines": {"text": text + "\n"},
        "line_number": line,
        "absolute_offset": 0,
        "submatches": [{"match": {"text": "aaa"}, "start": at, "end": at + 3}],
    }
    return record("match", data)


HUGE = 64 * 1024 * 1024


async def stream() -> AsyncIterator[bytes]:
    """begin small, a match, begin big, its one huge match, begin z, a match — in chunks; the
    huge record is made piece by piece, never whole (the test measures the reader alone)."""
    head = match("./big.txt", 7, "aaa").split(b'"aaa\\n"')[0] + b'"'
    tail = b'\\n"},"line_number":7,"absolute_offset":0,"submatches":[]}}\n'
    parts = [
        record("begin", {"path": {"text": "./a.txt"}}) + match("./a.txt", 1, "one aaa"),
        record("begin", {"path": {"text": "./big.txt"}}) + head,
    ]
    for part in parts:
        yield part
    for _ in range(HUGE // CHUNK):
        yield b"x" * CHUNK
    yield tail + record("begin", {"path": {"text": "./z.txt"}}) + match("./z.txt", 2, "aaa z")


@pytest.mark.anyio
async def test_an_overlong_match_record_is_counted_and_placed_without_being_held() -> None:
    tally = Tally(max_results=10, count_limit=100)
    reader = rg._Reader(tally, None, counting=True)
    tracemalloc.start()
    try:
        stopped = await reader.consume(stream())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    reader.finish()
    assert not stopped
    assert tally.total == 3
    assert [(h.path, h.line) for h in tally.hits] == [
        ("./a.txt", 1),
        ("./big.txt", 7),
        ("./z.txt", 2),
    ]
    assert tally.hits[1].text.startswith("[line too long to show")
    assert tally.hits[0].text == "one aaa"
    assert peak < 8 * rg.MAX_RECORD_BYTES, peak  # the record is 64 MB


@pytest.mark.anyio
async def test_a_record_under_the_bound_is_read_whole() -> None:
    text = "aaa" + "y" * (rg.MAX_RECORD_BYTES // 2)
    whole = record("begin", {"path": {"text": "./m.txt"}}) + match("./m.txt", 3, text)

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(whole), CHUNK):
            yield whole[i : i + CHUNK]

    tally = Tally(max_results=10, count_limit=100)
    reader = rg._Reader(tally, None, counting=True)
    await reader.consume(chunks())
    reader.finish()
    assert [(h.path, h.line, h.text) for h in tally.hits] == [("./m.txt", 3, text)]
