"""`yagent.llm.sse`: events come out the same however the body is cut into chunks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from itertools import pairwise

import pytest

from yagent.llm.sse import Event, events

BODY = (
    ": comment\r\n\r\n"
    "event: ping\n\n"  # a name without data: no event
    'event: message\r\ndata: {"a": "é"}\r\nid: 7\r\nretry: 5\r\n\r\n'
    "data:first\rdata: second\r\r"
    "unknown: field\ndata\n\n"  # a field name alone: `data` with an empty value
    "data: last, never closed"
).encode()
EXPECTED = [
    Event('{"a": "é"}', "message"),
    Event("first\nsecond"),
    Event(""),
]


async def chunked(body: bytes, cuts: Sequence[int]) -> AsyncIterator[bytes]:
    edges = [0, *cuts, len(body)]
    for start, end in pairwise(edges):
        yield body[start:end]


async def decode(body: bytes, cuts: Sequence[int]) -> list[Event]:
    return [event async for event in events(chunked(body, cuts))]


@pytest.mark.anyio
async def test_every_single_cut_gives_the_same_events() -> None:
    for cut in range(len(BODY) + 1):
        assert await decode(BODY, [cut]) == EXPECTED, cut


@pytest.mark.anyio
async def test_byte_by_byte_gives_the_same_events() -> None:
    assert await decode(BODY, range(1, len(BODY))) == EXPECTED


@pytest.mark.anyio
async def test_a_cr_lf_pair_cut_between_chunks_is_one_line_end() -> None:
    body = b"data: a\r\ndata: b\r\n\r\n"
    assert await decode(body, [8]) == [Event("a\nb")]  # the cut falls between CR and LF
    assert await decode(b"data: a\r", [8]) == []  # a CR at the very end dispatches nothing


@pytest.mark.anyio
async def test_bytes_that_are_not_utf8_are_replaced() -> None:
    assert await decode(b"data: \xff\n\n", []) == [Event("\ufffd")]
