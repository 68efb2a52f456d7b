"""The host vocabulary: rules, references, translation, and what is reported as unrecognised."""

from __future__ import annotations

import math

import pytest

from yagent.kernel.trace.trajectory import (
    Declares,
    Kind,
    Ref,
    RuleBook,
    SignalRule,
    VocabularyError,
)
from yagent.kernel.trace.trajectory.vocabulary import pick

from .vocab import BOOK, CALL, STEP


def test_pick_follows_dotted_paths_and_missing_steps_are_none() -> None:
    payload = {"usage": {"in": 3}, "flat": 1, "list": [1]}
    assert pick(payload, "usage.in") == 3
    assert pick(payload, "flat") == 1
    assert pick(payload, "usage.out") is None
    assert pick(payload, "flat.deeper") is None
    assert pick(payload, "nothing.here") is None


def test_ref_joins_fields_and_escapes_separators_so_ids_never_collide() -> None:
    ref = Ref("call", ("a", "b"))
    assert ref.resolve({"a": "x", "b": 1}) == "call:x/1"
    one = ref.resolve({"a": "x/y", "b": "z"})
    two = ref.resolve({"a": "x", "b": "y/z"})
    assert one != two
    assert one == "call:x%2Fy/z"
    assert ref.resolve({"a": "%2F", "b": ""}) != ref.resolve({"a": "/", "b": ""})
    assert ref.resolve({"a": True, "b": ""}) == "call:true/"


def test_ref_with_every_field_empty_or_one_missing_names_no_row() -> None:
    assert Ref("span", ("lane",)).resolve({"lane": ""}) is None
    assert Ref("span", ("lane",)).resolve({}) is None
    assert Ref("call", ("lane", "id")).resolve({"lane": "L"}) is None
    assert Ref("call", ("lane", "id")).resolve({"lane": "", "id": "c"}) == "call:/c"


def test_ref_takes_the_first_source_that_has_the_field() -> None:
    ref = Ref("call", ("lane", "id"))
    assert ref.resolve({"id": "c1"}, {"lane": "L", "id": "outer"}) == "call:L/c1"


@pytest.mark.parametrize(
    "bad", [("", ("a",)), ("ns:x", ("a",)), ("ns", ())], ids=["no-ns", "colon", "no-fields"]
)
def test_ref_refuses_what_cannot_name_a_row(bad: tuple[str, tuple[str, ...]]) -> None:
    with pytest.raises(VocabularyError):
        Ref(*bad)


def test_rules_that_cannot_name_their_row_are_refused_when_built() -> None:
    with pytest.raises(VocabularyError, match="row reference"):
        SignalRule(Kind.CALL)
    with pytest.raises(VocabularyError, match="turn end"):
        SignalRule(Kind.TURN_END, row=CALL)
    with pytest.raises(VocabularyError, match="turn end"):
        SignalRule(Kind.TURN_END, parent=STEP)
    with pytest.raises(VocabularyError, match="declares"):
        SignalRule(Kind.CALL, CALL, declares=Declares("x", CALL))


def test_rule_tables_are_frozen_copies() -> None:
    attrs = {"k": "v"}
    rule = SignalRule(Kind.CALL, CALL, attrs=attrs)
    attrs["k2"] = "v2"
    assert dict(rule.attrs) == {"k": "v"}
    with pytest.raises(TypeError):
        rule.attrs["x"] = "y"  # type: ignore[index]


def test_rulebook_refuses_a_type_both_mapped_and_ignored_and_empty_entries() -> None:
    with pytest.raises(VocabularyError, match="both mapped and ignored"):
        RuleBook({"a": SignalRule(Kind.CALL, CALL)}, ignore=["a"])
    with pytest.raises(VocabularyError, match="one or more"):
        RuleBook({"a": ()})
    with pytest.raises(VocabularyError, match="one or more"):
        RuleBook({"a": ("not a rule",)})  # type: ignore[dict-item]


def test_ignored_types_translate_to_nothing_unknown_types_to_none() -> None:
    assert BOOK.translate("chatter", {}) == ()
    assert BOOK.translate("never-heard-of", {}) is None
    assert "chatter" in BOOK.ignored
    assert set(BOOK.rules) >= {"think", "invoke", "over"}


def test_first_matching_rule_wins_and_when_must_match_exactly() -> None:
    (end,) = BOOK.translate("over", {"lane": "", "status": "done"}) or ()
    assert end.kind is Kind.TURN_END
    assert dict(end.attrs) == {"status": "done"}
    (span,) = BOOK.translate("over", {"lane": "d1", "ok": False}) or ()
    assert span.kind is Kind.SPAN_END
    assert span.row == "span:d1"
    assert span.ok is False
    # no lane at all: neither rule matches (None != ""), and the event is not recognised
    book = RuleBook({"over": SignalRule(Kind.TURN_END, when={"lane": ""})})
    assert book.translate("over", {}) is None


def test_signal_fields_come_from_the_payload() -> None:
    payload = {"lane": "", "id": "c1", "n": 2, "tool": "grep", "ok": True, "why": ""}
    (signal,) = BOOK.translate("answer", payload, ts=5, seq=9) or ()
    assert signal.kind is Kind.RESULT
    assert signal.row == "call:/c1"
    assert signal.parent == "step:/2"
    assert signal.name == "grep"
    assert signal.ok is True
    assert signal.outcome is None  # empty outcome is no outcome
    assert signal.ts == 5.0
    assert signal.seq == 9
    assert dict(signal.attrs) == {"call_id": "c1"}


@pytest.mark.parametrize("ts", [math.nan, math.inf, True, "12", None])
def test_a_time_that_is_not_a_finite_number_is_no_time(ts: object) -> None:
    (signal,) = BOOK.translate("invoke", {"lane": "", "id": "c", "n": 1}, ts=ts) or ()  # type: ignore[arg-type]
    assert signal.ts is None


def test_ok_must_be_a_real_boolean() -> None:
    (signal,) = BOOK.translate("answer", {"lane": "", "id": "c", "ok": "yes"}) or ()
    assert signal.ok is None


def test_declarations_are_named_like_calls_deduplicated_and_tolerant() -> None:
    payload = {
        "lane": "L",
        "n": 1,
        "wants": [{"id": "a"}, {"id": "b"}, {"id": "a"}, "junk", {"no": "id"}],
    }
    (signal,) = BOOK.translate("thought", payload) or ()
    assert signal.declares == ("call:L/a", "call:L/b")
    for odd in ("a string", None, 3):
        (s,) = BOOK.translate("thought", {"lane": "", "n": 1, "wants": odd}) or ()
        assert s.declares == ()
