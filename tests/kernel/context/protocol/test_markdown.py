"""protocol.markdown: every field shown, repair and low confidence stated, structure kept."""

from __future__ import annotations

from yagent.kernel.context.protocol import parse_report, render_markdown, validate_report


def full() -> dict[str, object]:
    return {
        "agent": "worker-1",
        "status": "partial",
        "summary": "Two of three checks pass.\n\nThe third needs a person.",
        "findings": [
            {"title": "minor\nthing", "severity": "low"},
            {"title": "big problem", "detail": "line one\n\nline two", "severity": "critical"},
        ],
        "evidence": [
            {"kind": "command", "ref": "make `check`", "excerpt": "exit\n1"},
            {"kind": "file", "ref": "notes.txt"},
        ],
        "confidence": "medium",
        "next_steps": ["ask the owner", "re-run\nafter"],
    }


def test_full_report_renders_every_section() -> None:
    md = render_markdown(validate_report(full()))
    assert md.startswith(
        "## Report from worker-1\n\n**Status:** partial · **Confidence:** medium\n"
    )
    assert "Two of three checks pass.\n\nThe third needs a person." in md
    findings = md.index("### Findings")
    assert md.index("1. **[critical]** big problem") > findings  # most severe first
    assert "2. **[low]** minor thing" in md
    assert "   line one\n\n   line two" in md
    assert "- command: `` make `check` `` — exit 1" in md
    assert "- file: `notes.txt`\n" in md
    assert "### Next steps\n\n- ask the owner\n- re-run after\n" in md
    assert "⚠" not in md
    assert "Low confidence" not in md


def test_minimal_report_has_no_empty_sections() -> None:
    md = render_markdown(
        validate_report({"agent": "a", "status": "done", "summary": "ok", "confidence": "high"})
    )
    assert "###" not in md
    assert md.endswith("ok\n")


def test_repaired_and_low_confidence_are_stated_at_the_top() -> None:
    parsed = parse_report(
        '{"agent": "a", "status": "done", "summary": "ok", "confidence": "high",}'
    )
    md = render_markdown(parsed.report, repaired=parsed.repaired)
    assert "**Confidence:** low" in md
    assert "> ⚠ This report was repaired" in md
    low = render_markdown(validate_report({"agent": "a", "status": "done", "summary": "ok"}))
    assert "> Low confidence: verify before relying on it." in low


def test_host_title_is_one_line() -> None:
    md = render_markdown(validate_report(full()), title="Handoff\n# injected")
    assert md.startswith("## Handoff # injected\n")


def test_code_span_edge_cases() -> None:
    report = validate_report(
        {
            "agent": "a",
            "status": "done",
            "summary": "s",
            "evidence": [{"kind": "quote", "ref": "`x`"}],
        }
    )
    assert "- quote: `` `x` ``" in render_markdown(report)
