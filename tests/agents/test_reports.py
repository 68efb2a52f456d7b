"""Final reports read with `protocol`: handoffs always, deliverables only when report-shaped."""

from __future__ import annotations

import json

from yagent.agents.reports import looks_like_report, read_report

REPORT = {"status": "done", "summary": "all good", "confidence": "medium"}


def test_a_handoff_takes_the_agents_name_unless_it_names_one() -> None:
    reading = read_report("repo", {"handoff": REPORT}, "md")
    assert reading.parsed is not None
    assert reading.parsed.report.agent == "repo"
    assert reading.source == "handoff"
    assert not reading.parsed.repaired
    named = read_report("repo", {"handoff": {**REPORT, "agent": "repo.v2"}}, "md")
    assert named.parsed is not None
    assert named.parsed.report.agent == "repo.v2"


def test_a_handoff_outside_the_contract_is_reported_not_dropped() -> None:
    legacy = {"findings": ["x"], "files": ["a.py"], "open_questions": []}
    reading = read_report("repo", {"handoff": legacy}, "md")
    assert reading.parsed is None
    assert reading.note.startswith("the handoff is not a valid report")
    assert "files" in reading.note
    event = reading.event()
    assert event["report"] is None
    assert event["note"] == reading.note


def test_a_report_shaped_deliverable_is_read_and_a_broken_one_explained() -> None:
    text = "```json\n" + json.dumps({"agent": "a", **REPORT}) + "\n```"
    reading = read_report("coding", {"summary": text}, text)
    assert reading.parsed is not None
    assert reading.source == "deliverable"
    assert reading.event()["level"] == "fenced"
    broken = '{"status": "maybe", "summary": "x"}'
    bad = read_report("coding", {"summary": broken}, broken)
    assert bad.parsed is None
    assert "looks like a report but is not" in bad.note


def test_prose_and_unrelated_json_are_not_reports() -> None:
    assert read_report("coding", None, 'Fixed it. Config is {"a": 1}.').source == ""
    assert read_report("coding", None, None).parsed is None
    assert read_report("coding", None, "").note == ""
    assert looks_like_report('{"status": "done", "summary": "x"}')
    assert not looks_like_report('{"status": "done"}')
