"""The per-command ledger of proxy decisions: tags, caps, the note and the payload."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.tools.egress import attribution, sandboxbridge
from yagent.tools.egress.attribution import NOT_LISTED, EgressDecision, Entry, Ledger, Report


def allowed(host: str, port: int = 443, tag: str | None = None) -> EgressDecision:
    return EgressDecision("CONNECT", host, port, True, "allow-listed", tag)


def refused(
    host: str, port: int = 443, tag: str | None = None, why: str = NOT_LISTED
) -> EgressDecision:
    return EgressDecision("CONNECT", host, port, False, why, tag)


def test_a_tag_is_fresh_well_formed_and_followed_until_taken() -> None:
    ledger = Ledger()
    a, b = ledger.issue(), ledger.issue()
    assert a is not None
    assert b is not None
    assert a != b
    assert sandboxbridge.valid_tag(a)
    assert ledger.knows(a)
    assert ledger.following == 2
    assert not ledger.knows(None)
    assert not ledger.knows("0" * 32)
    ledger.take(a)
    assert not ledger.knows(a)
    assert ledger.following == 1


def test_decisions_go_to_their_own_tag_only() -> None:
    ledger = Ledger()
    a, b = ledger.issue(), ledger.issue()
    assert a is not None
    assert b is not None
    for d in (allowed("pypi.org", tag=a), refused("evil.example", tag=b), allowed("x.org")):
        ledger.record(d)
    got_a, got_b = ledger.take(a), ledger.take(b)
    assert got_a == Report((Entry("CONNECT", "pypi.org", 443, True, "allow-listed", 1),), 1, 0)
    assert got_b.entries == (Entry("CONNECT", "evil.example", 443, False, NOT_LISTED, 1),)
    assert (got_b.allowed, got_b.refused) == (0, 1)


def test_a_decision_after_take_or_for_a_stranger_is_filed_nowhere() -> None:
    ledger = Ledger()
    tag = ledger.issue()
    assert tag is not None
    ledger.take(tag)
    ledger.record(allowed("pypi.org", tag=tag))
    ledger.record(allowed("pypi.org", tag="f" * 32))
    assert ledger.following == 0
    again = ledger.take(tag)
    assert again.unattributed
    assert again.worth_telling


def test_the_cap_on_tags_is_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attribution, "MAX_TAGS", 2)
    ledger = Ledger()
    assert ledger.issue() is not None
    assert ledger.issue() is not None
    assert ledger.issue() is None


def test_the_cap_per_tag_counts_what_it_did_not_keep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attribution, "MAX_PER_TAG", 2)
    ledger = Ledger()
    tag = ledger.issue()
    assert tag is not None
    for d in (
        allowed("a.org", tag=tag),
        allowed("a.org", tag=tag),  # folded into the first entry: nothing lost
        refused("b.org", tag=tag),
        refused("c.org", tag=tag),  # a third kind: not kept, still counted
        allowed("d.org", tag=tag),
    ):
        ledger.record(d)
    report = ledger.take(tag)
    assert [(e.host, e.count) for e in report.entries] == [("a.org", 2), ("b.org", 1)]
    assert (report.allowed, report.refused, report.not_kept) == (3, 2, 2)
    assert "2 more not kept (only 2 kinds of request are listed per command" in report.note()


def test_the_note_says_what_was_allowed_and_refused_and_why() -> None:
    report = Report(
        (
            Entry("CONNECT", "pypi.org", 443, True, "allow-listed", 2),
            Entry("GET", "pypi.org", 80, True, "allow-listed", 1),
            Entry("CONNECT", "files.pythonhosted.org", 443, True, "allow-listed", 1),
            Entry("CONNECT", "evil.example", 443, False, NOT_LISTED, 1),
            Entry("GET", "::1", 8080, False, "refused by netguard: loopback", 2),
            Entry("-", "-", 0, False, "malformed request line", 1),
        ),
        allowed=4,
        refused=4,
    )
    assert report.note() == (
        "[egress: 4 requests allowed (pypi.org ×3, files.pythonhosted.org); 4 refused: "
        "evil.example:443 — not on [sandbox] allow_hosts, "
        "[::1]:8080 — refused by netguard: loopback ×2, (no target) — malformed request line]"
    )
    one = Report((Entry("GET", "a.org", 8080, True, "allow-listed", 1),), allowed=1)
    assert one.note() == "[egress: 1 request allowed (a.org:8080)]"
    payload = report.to_payload()
    assert payload["allowed"] == payload["refused"] == 4
    assert payload["requests"][3] == {
        "method": "CONNECT",
        "host": "evil.example",
        "port": 443,
        "allowed": False,
        "reason": NOT_LISTED,
        "count": 1,
    }


def test_nothing_happened_means_nothing_said() -> None:
    assert Report().note() == ""
    assert not Report().worth_telling
    lost = attribution.unattributed("the proxy was already following 64 running commands")
    assert lost.worth_telling
    assert lost.note() == (
        "[egress: not attributed to this command: "
        "the proxy was already following 64 running commands]"
    )


@given(
    st.lists(
        st.tuples(st.sampled_from(["a.org", "b.org", "c.org", "d.org"]), st.booleans()),
        max_size=40,
    ),
    st.integers(min_value=1, max_value=3),
)
def test_totals_are_exact_whatever_the_cap(kinds: list[tuple[str, bool]], cap: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(attribution, "MAX_PER_TAG", cap)
        ledger = Ledger()
        tag = ledger.issue()
        assert tag is not None
        for host, ok in kinds:
            ledger.record(allowed(host, tag=tag) if ok else refused(host, tag=tag))
        report = ledger.take(tag)
    assert report.allowed == sum(ok for _, ok in kinds)
    assert report.refused == len(kinds) - report.allowed
    assert len(report.entries) <= cap
    assert sum(e.count for e in report.entries) + report.not_kept == len(kinds)
