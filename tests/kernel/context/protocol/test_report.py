"""protocol.report: the whitelist — fields, values, types, narrowing, schema export."""

from __future__ import annotations

from typing import Any

import pytest

from yagent.kernel.context.protocol import (
    Report,
    SchemaError,
    Whitelist,
    report_schema,
    validate_report,
)


def base(**extra: Any) -> dict[str, Any]:
    return {"agent": "worker-1", "status": "done", "summary": "all good", **extra}


def test_minimal_report_and_defaults() -> None:
    report = validate_report(base())
    assert report == Report(agent="worker-1", status="done", summary="all good")
    assert report.confidence == "low"  # unknown confidence is low
    assert (report.findings, report.evidence, report.next_steps) == ((), (), ())


def test_full_report() -> None:
    report = validate_report(
        base(
            findings=[{"title": "t", "detail": "d", "severity": "high"}, {"title": "u"}],
            evidence=[{"kind": "file", "ref": "a/b.txt", "excerpt": "line"}],
            confidence="medium",
            next_steps=["do x"],
        )
    )
    assert report.findings[0].severity == "high"
    assert report.findings[1].severity == "info"
    assert report.evidence[0].kind == "file"
    assert report.next_steps == ("do x",)


def test_enum_values_fold_case_and_space_but_are_not_guessed() -> None:
    report = validate_report(
        base(status=" DONE", confidence="High ", findings=[{"title": "t", "severity": "Critical"}])
    )
    assert (report.status, report.confidence, report.findings[0].severity) == (
        "done",
        "high",
        "critical",
    )
    with pytest.raises(SchemaError):
        validate_report(base(status="finished"))


def test_null_optional_is_absent_but_null_required_is_not() -> None:
    assert validate_report(base(confidence=None, findings=None)).confidence == "low"
    with pytest.raises(SchemaError):
        validate_report({**base(), "summary": None})


def test_empty_strings_are_absent_only_for_repaired_input() -> None:
    with pytest.raises(SchemaError):
        validate_report(base(confidence=""))
    assert validate_report(base(confidence=""), repaired=True).confidence == "low"
    repaired = validate_report(base(findings=[{"title": "t", "severity": ""}]), repaired=True)
    assert repaired.findings[0].severity == "info"
    with pytest.raises(SchemaError):
        validate_report({**base(), "agent": ""}, repaired=True)


@pytest.mark.parametrize(
    ("obj", "where"),
    [
        ({"status": "done", "summary": "s"}, "agent"),
        (base(agent="has space"), "agent"),
        (base(agent="-dash-first"), "agent"),
        (base(agent="x" * 65), "agent"),
        (base(summary=""), "summary"),
        (base(summary=42), "summary"),
        (base(summary="x" * 8001), "summary"),
        (base(extra_field=1), "extra_field"),
        (base(confidence="certain"), "confidence"),
        (base(confidence=0.9), "confidence"),
        (base(findings=[{"title": ""}]), "findings.0.title"),
        (base(findings=[{"title": "t", "rating": 5}]), "findings.0.rating"),
        (base(findings=["just text"]), "findings.0"),
        (base(findings="x"), "findings"),
        (base(findings=[{"title": "t"}] * 101), "findings"),
        (base(evidence=[{"kind": "rumour", "ref": "r"}]), "evidence.0.kind"),
        (base(evidence=[{"kind": "file"}]), "evidence.0.ref"),
        (base(next_steps=[""]), "next_steps.0"),
        (base(next_steps="do it"), "next_steps"),
        (base(next_steps=[1]), "next_steps.0"),
    ],
)
def test_whitelist_violations_are_listed(obj: dict[str, Any], where: str) -> None:
    with pytest.raises(SchemaError) as info:
        validate_report(obj)
    assert any(reason.startswith(where) for reason in info.value.reasons), info.value.reasons


def test_every_violation_is_listed() -> None:
    with pytest.raises(SchemaError) as info:
        validate_report({"agent": "", "status": "nope", "summary": "", "x": 1})
    assert len(info.value.reasons) == 4


def test_host_narrowing() -> None:
    whitelist = Whitelist(
        agents=frozenset({"worker-1"}),
        statuses=frozenset({"done", "failed"}),
        evidence_kinds=frozenset({"file"}),
    )
    assert (
        validate_report(base(evidence=[{"kind": "file", "ref": "f"}]), whitelist).agent
        == "worker-1"
    )
    with pytest.raises(SchemaError) as info:
        validate_report(
            base(agent="intruder", status="partial", evidence=[{"kind": "url", "ref": "u"}]),
            whitelist,
        )
    assert [r.split(":")[0] for r in info.value.reasons] == ["agent", "status", "evidence.0.kind"]


def test_reports_are_immutable() -> None:
    report = validate_report(base())
    with pytest.raises(ValueError, match="frozen"):
        report.summary = "changed"  # type: ignore[misc]


def test_schema_export_is_the_contract() -> None:
    schema = report_schema()
    assert set(schema["required"]) == {"agent", "status", "summary"}
    assert schema["additionalProperties"] is False
    assert schema["properties"]["confidence"]["enum"] == ["high", "medium", "low"]
    assert set(schema["properties"]) == {
        "agent", "status", "summary", "findings", "evidence", "confidence", "next_steps",
    }  # fmt: skip
