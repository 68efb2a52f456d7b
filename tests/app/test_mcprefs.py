"""`@server:uri` references: what counts as one (the reading itself is tested end to end in
tests/e2e/test_mcp_resources.py against the real server-everything)."""

from __future__ import annotations

from yagent.app.mcprefs import references


def test_references_are_distinct_and_trailing_punctuation_is_not_part_of_them() -> None:
    task = (
        "see @ev:demo://resource/1, then (@ev:demo://resource/2). Again @ev:demo://resource/1; "
        "and @fs:file:///tmp/a.txt!"
    )
    assert references(task) == [
        ("ev", "demo://resource/1"),
        ("ev", "demo://resource/2"),
        ("fs", "file:///tmp/a.txt"),
    ]


def test_what_is_not_a_reference() -> None:
    assert references("@session:abc123 and @session:x://y") == []
    assert references("mail me at bob@ev:demo://resource/1") == []  # part of a word
    assert references("@ev:no-scheme and @ev:") == []
