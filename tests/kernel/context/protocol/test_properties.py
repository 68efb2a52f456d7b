"""protocol properties (hypothesis): only NotReportError escapes, round trips, repaired ⇒ low."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yagent.kernel.context.protocol import (
    Level,
    NotReportError,
    Report,
    parse_report,
    render_markdown,
)

line = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
finding = st.fixed_dictionaries(
    {"title": line},
    optional={
        "detail": st.text(max_size=60),
        "severity": st.sampled_from(["info", "low", "medium", "high", "critical"]),
    },
)
evidence = st.fixed_dictionaries(
    {"kind": st.sampled_from(["file", "command", "url", "log", "quote", "other"]), "ref": line},
    optional={"excerpt": st.text(max_size=40)},
)
report_dicts = st.fixed_dictionaries(
    {
        "agent": st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,20}", fullmatch=True),
        "status": st.sampled_from(["done", "partial", "blocked", "failed"]),
        "summary": line,
    },
    optional={
        "findings": st.lists(finding, max_size=3),
        "evidence": st.lists(evidence, max_size=3),
        "confidence": st.sampled_from(["high", "medium", "low"]),
        "next_steps": st.lists(line, max_size=3),
    },
)
JSONISH = st.text(alphabet=st.sampled_from(list("{}[]:,\"' \n\tabc01-.`\\/nul")), max_size=80)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), JSONISH))
def test_arbitrary_text_raises_nothing_but_not_report(text: str) -> None:
    try:
        parsed = parse_report(text)
    except NotReportError:
        return
    assert isinstance(parsed.report, Report)
    if parsed.level is Level.REPAIRED:
        assert parsed.report.confidence == "low"


@settings(max_examples=300, deadline=None)
@given(report_dicts)
def test_round_trip_of_valid_reports(obj: dict[str, object]) -> None:
    report = parse_report(json.dumps(obj)).report
    again = parse_report(report.model_dump_json())
    assert again.level is Level.STRICT
    assert again.report == report
    assert parse_report(f"Done.\n```json\n{report.model_dump_json(indent=2)}\n```").report == report
    assert parse_report(f"Result: {report.model_dump_json()} (end)").report == report
    render_markdown(report)  # renders every valid report


@settings(max_examples=300, deadline=None)
@given(
    report_dicts,
    st.sampled_from(["trailing_comma", "single_quotes", "truncate", "missing_value"]),
)
def test_anything_that_passed_through_repair_is_low(obj: dict[str, object], damage: str) -> None:
    obj = {**obj, "confidence": "high"}
    text = json.dumps(obj)
    if damage == "trailing_comma":
        text = text[:-1] + ",}"
    elif damage == "single_quotes":
        text = text.replace('"', "'")
    elif damage == "truncate":
        text = text[: text.index('"confidence"')]
    else:
        text = text.replace('"high"', "", 1)
    try:
        parsed = parse_report(text)
    except NotReportError:
        return  # damage may make it no report; it must never make it a trusted one
    assert parsed.level is Level.REPAIRED
    assert parsed.report.confidence == "low"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="{"), max_size=200))
def test_text_without_an_object_is_never_a_report(text: str) -> None:
    try:
        parse_report(text)
    except NotReportError:
        return
    raise AssertionError("a report was made out of text with no object")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters=":"), max_size=200))
def test_text_without_a_colon_is_never_a_report(text: str) -> None:
    try:
        parse_report(text)
    except NotReportError:
        return
    raise AssertionError("a report was made out of text with no colon")
