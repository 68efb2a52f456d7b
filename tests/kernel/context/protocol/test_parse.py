"""protocol.parse: the five levels, repaired ⇒ low, structural rejects stay rejects."""

from __future__ import annotations

import json
from typing import Any

import json_repair
import pytest

from yagent.kernel.context.protocol import (
    Level,
    NotReportError,
    SchemaError,
    Whitelist,
    parse,
    parse_report,
)

GOOD: dict[str, Any] = {
    "agent": "worker-1",
    "status": "done",
    "summary": "The cache is rebuilt on start.",
    "findings": [{"title": "stale entries", "severity": "medium"}],
    "confidence": "high",
}
TEXT = json.dumps(GOOD)


def test_level_1_strict_json() -> None:
    parsed = parse_report(f"  {TEXT}\n")
    assert parsed.level is Level.STRICT
    assert not parsed.repaired
    assert parsed.report.confidence == "high"
    assert parsed.notes == ()


def test_level_2_fenced_block() -> None:
    parsed = parse_report(f"Here is my report:\n```json\n{TEXT}\n```\nThat's all.")
    assert parsed.level is Level.FENCED
    assert parsed.report.confidence == "high"
    bare = parse_report(f"```\n{TEXT}\n```")
    assert bare.level is Level.FENCED


def test_level_3_balanced_object_in_prose() -> None:
    parsed = parse_report(f"I looked around {{briefly}}. Result: {TEXT} -- done.")
    assert parsed.level is Level.EXTRACTED
    assert parsed.report.summary == GOOD["summary"]


def test_level_3_skips_objects_that_are_not_reports() -> None:
    parsed = parse_report(f'Config was {{"debug": true}} and the report is {TEXT}')
    assert parsed.level is Level.EXTRACTED
    assert parsed.report.agent == "worker-1"


@pytest.mark.parametrize(
    "text",
    [
        TEXT[:-1] + ",}",  # trailing comma
        TEXT.replace('"', "'"),  # single quotes
        TEXT[: TEXT.index('"findings"')],  # truncated
        TEXT.replace('"high"}', "}"),  # missing value
        f"Report:\n```json\n{TEXT[:-1]},}}\n```",  # broken JSON inside a fence
        f"```json\n{TEXT[:60]}",  # unclosed fence, truncated
        "{agent: worker-1, status: done, summary: bare words}",  # unquoted keys and values
    ],
)
def test_level_4_repair_marks_low(text: str) -> None:
    parsed = parse_report(text)
    assert parsed.level is Level.REPAIRED
    assert parsed.repaired
    assert parsed.report.confidence == "low"
    assert parsed.notes[0].startswith("passed through repair")
    assert parsed.report.agent == "worker-1"


APOSTROPHES = (
    "Done:\n{'agent': 'worker-1', 'status': 'done', 'summary': 'It isn't cached; won't be.', "
    "'findings': [{'title': 'Build isn't won't config.', 'severity': 'low'}], "
    "'evidence': [{'kind': 'file', 'ref': 'src/a.py', 'excerpt': 'it isn't.'}], "
    "'confidence': 'high', 'next_steps': ['Index won't index.', 'Say \"hi\" don\\'t.']}"
)


def test_single_quoted_values_with_apostrophes_are_read_as_written() -> None:
    parsed = parse_report(APOSTROPHES)
    assert parsed.level is Level.REPAIRED
    assert parsed.report.confidence == "low"
    assert parsed.report.summary == "It isn't cached; won't be."
    assert parsed.report.findings[0].title == "Build isn't won't config."
    assert parsed.report.evidence[0].excerpt == "it isn't."
    assert list(parsed.report.next_steps) == ["Index won't index.", 'Say "hi" don\'t.']


def test_repair_never_keeps_the_claimed_confidence() -> None:
    parsed = parse_report(TEXT[:-1] + ",}")
    assert "claimed 'high'" in parsed.notes[0]
    assert parsed.report.confidence == "low"


def test_missing_value_is_rescued_as_low_the_v0_27_contract() -> None:
    parsed = parse_report('{"agent":"X","status":"done","summary":"s","confidence":}')
    assert parsed.level is Level.REPAIRED
    assert parsed.report.confidence == "low"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "The task is complete and everything works.",
        "status: done, summary: fine",  # colons but no object
        "{agent worker-1 status done}",  # an object but no colon
        '{"agent" "worker-1"}',
        '{"agent": "worker-1", "status" "done", "summary": "s"}',  # one key without a colon
        "Use {braces} freely: they are {fine}",
        "Set {a, b}: a union",
        "[1, 2, 3]: a list",
        "{:}",
        "{{{{: }",
    ],
)
def test_structural_rejects_stay_rejects(text: str) -> None:
    with pytest.raises(NotReportError) as info:
        parse_report(text)
    assert not isinstance(info.value, SchemaError) or "agent" in str(info.value.reasons)


def test_missing_colon_is_named_as_the_reason() -> None:
    with pytest.raises(NotReportError) as info:
        parse_report('{"agent": "worker-1", "status" "done", "summary": "s"}')
    assert any("without a colon" in r for r in info.value.reasons)


def test_schema_failure_is_a_not_report_with_the_violations() -> None:
    with pytest.raises(SchemaError) as info:
        parse_report(json.dumps({**GOOD, "status": "finished", "mood": "great"}))
    assert any(r.startswith("status") for r in info.value.reasons)
    assert any(r.startswith("mood") for r in info.value.reasons)
    assert isinstance(info.value, NotReportError)


def test_a_repaired_object_is_validated_as_written() -> None:
    with pytest.raises(SchemaError):
        parse_report(json.dumps({**GOOD, "confidence": "very high"})[:-1] + ",}")


def test_no_confidence_is_low_and_noted() -> None:
    parsed = parse_report(json.dumps({k: v for k, v in GOOD.items() if k != "confidence"}))
    assert parsed.level is Level.STRICT
    assert parsed.report.confidence == "low"
    assert parsed.notes == ("no confidence given: low",)


def test_whitelist_applies_at_every_level() -> None:
    whitelist = Whitelist(agents=frozenset({"someone-else"}))
    for text in (TEXT, f"```json\n{TEXT}\n```", f"x {TEXT} y", TEXT[:-1] + ",}"):
        with pytest.raises(SchemaError):
            parse_report(text, whitelist=whitelist)


def test_non_text_and_oversize_are_not_reports() -> None:
    with pytest.raises(NotReportError):
        parse_report(b"{}")  # type: ignore[arg-type]
    with pytest.raises(NotReportError, match="limit"):
        parse_report("{" + " " * parse.MAX_CHARS + "}")


def test_deep_nesting_is_not_a_report_and_not_a_crash() -> None:
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    with pytest.raises(NotReportError):
        parse_report(deep)
    with pytest.raises(NotReportError):
        parse_report("[" * 100_000 + "{:")


def test_a_repair_library_failure_is_not_a_report(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*_args: object, **_kwargs: object) -> object:
        raise RuntimeError("repair crashed")

    monkeypatch.setattr(json_repair, "repair_json", explode)
    with pytest.raises(NotReportError):
        parse_report(TEXT[:-1] + ",}")
    assert parse_report(TEXT).level is Level.STRICT  # the strict levels do not need it


def test_repair_of_a_non_object_is_not_a_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_repair, "repair_json", lambda *_a, **_k: [1, 2])
    with pytest.raises(NotReportError) as info:
        parse_report(TEXT[:-1] + ",}")
    assert any("not a JSON object" in r for r in info.value.reasons)
