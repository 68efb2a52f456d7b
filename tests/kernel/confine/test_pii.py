"""pii: validated detection (valid and invalid check digits), surfaces, block, policy swaps."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.confine import pii
from yagent.kernel.confine.pii import (
    Action,
    BlockedError,
    Kind,
    Policy,
    PolicyError,
    PolicyStore,
    Strength,
    Surface,
    apply,
    apply_value,
    detect,
    scan,
)

WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def id_check(first17: str) -> str:
    """Independent GB 11643 check digit, for building test data."""
    return "10X98765432"[sum(int(d) * w for d, w in zip(first17, WEIGHTS, strict=True)) % 11]


def make_id(region: str, born: str, seq: str = "123") -> str:
    body = region + born + seq
    return body + id_check(body)


def luhn_digit(body: str) -> str:
    """The digit that completes `body` into a Luhn-valid number."""
    for d in "0123456789":
        total = 0
        for i, ch in enumerate(reversed(body + d)):
            n = int(ch) * (2 if i % 2 else 1)
            total += n - 9 if n > 9 else n
        if total % 10 == 0:
            return d
    raise AssertionError


def kinds(text: str) -> list[Kind]:
    return [f.kind for f in scan(text)]


def masking(strength: Strength = Strength.FULL, **actions: Action) -> PolicyStore:
    return PolicyStore(Policy(strength=strength, **actions))


# -- resident ID numbers -------------------------------------------------------------------------

VALID_ID = "11010519491231002X"  # the GB 11643 worked example


def test_known_valid_id_is_found() -> None:
    assert id_check(VALID_ID[:17]) == "X"
    assert kinds(f"身份证号:{VALID_ID}。") == [Kind.ID_CARD]
    assert kinds(VALID_ID.lower()) == [Kind.ID_CARD]


@pytest.mark.parametrize("wrong", [c for c in "0123456789X" if c != "X"])
def test_wrong_check_digit_is_not_an_id(wrong: str) -> None:
    candidate = VALID_ID[:17] + wrong
    assert Kind.ID_CARD not in kinds(candidate)
    assert not pii.valid_id(candidate)


@pytest.mark.parametrize(
    "born",
    ["19990230", "20010229", "19000229", "19991301", "19990001", "19990100", "19990431"],
)
def test_impossible_birth_date_is_not_an_id_even_with_a_correct_check_digit(born: str) -> None:
    candidate = make_id("110105", born)
    assert candidate[-1] == id_check(candidate[:17])
    assert Kind.ID_CARD not in kinds(candidate)


def test_leap_day_is_a_real_date() -> None:
    assert kinds(make_id("110105", "20000229")) == [Kind.ID_CARD]


def test_future_birth_date_is_not_an_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(detect, "_today", lambda: datetime.date(2020, 1, 1))
    assert kinds(make_id("110105", "20191231")) == [Kind.ID_CARD]
    assert Kind.ID_CARD not in kinds(make_id("110105", "20200102"))


@pytest.mark.parametrize("region", ["990101", "100101", "010101", "720101", "840101"])
def test_unknown_province_is_not_an_id(region: str) -> None:
    assert Kind.ID_CARD not in kinds(make_id(region, "19900101"))


def test_id_inside_a_longer_run_is_found_at_its_own_span() -> None:
    # an ID glued into an order number is still an ID (see test_pii_corpus for more)
    assert [(f.kind, f.start, f.end) for f in scan("9" + VALID_ID)] == [(Kind.ID_CARD, 1, 19)]
    assert [(f.kind, f.start, f.end) for f in scan(VALID_ID + "7")] == [(Kind.ID_CARD, 0, 18)]
    assert [(f.kind, f.start, f.end) for f in scan("A" + VALID_ID)] == [(Kind.ID_CARD, 1, 19)]


def test_valid_id_rejects_short_and_non_digit_bodies() -> None:
    assert not pii.valid_id(VALID_ID[:17])
    assert not pii.valid_id("11010519491231A02X")


PROVINCE = st.sampled_from(sorted(detect.PROVINCES))


@given(
    PROVINCE,
    st.integers(0, 9999),
    st.dates(datetime.date(1900, 1, 1), datetime.date(2020, 12, 31)),
    st.integers(0, 999),
)
def test_generated_valid_ids_are_found_and_one_wrong_digit_is_not(
    province: int, area: int, born: datetime.date, seq: int
) -> None:
    body = f"{province:02d}{area:04d}{born:%Y%m%d}{seq:03d}"
    good = body + id_check(body)
    found = scan(f"id {good} end")
    assert [(f.kind, f.start, f.end) for f in found] == [(Kind.ID_CARD, 3, 21)]
    for wrong in "0123456789X":
        if wrong != good[-1]:
            assert Kind.ID_CARD not in kinds(body + wrong)


# -- bank cards ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "card",
    [
        "4111111111111111",
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "6222021234567890" + "",
        "3782 822463 10005",
        "5555555555554444",
    ],
)
def test_luhn_valid_cards_are_found(card: str) -> None:
    if card.startswith("6222"):
        card = card[:15] + luhn_digit(card[:15])
    assert kinds(f"card: {card}.") == [Kind.BANK_CARD]


@pytest.mark.parametrize(
    "card",
    [
        "4111111111111112",
        "4111 1111 1111 1112",
        "1712345678903",  # first digit 1 (a timestamp shape) is never a card
        "0111111111111111",
        "411111111111",  # 12 digits
        "41111111111111111111",  # 20 digits
        "4111 1111-1111 1111",  # mixed separators
    ],
)
def test_not_cards(card: str) -> None:
    assert Kind.BANK_CARD not in kinds(card)


def test_luhn_reference() -> None:
    assert pii.luhn("79927398713")
    assert not pii.luhn("79927398710")
    assert pii.valid_card("4111111111111111")


@given(st.integers(2, 9), st.lists(st.integers(0, 9), min_size=11, max_size=17))
def test_generated_cards_pass_and_a_wrong_check_digit_fails(first: int, rest: list[int]) -> None:
    body = str(first) + "".join(map(str, rest))
    good = body + luhn_digit(body)
    assert kinds(f"pay {good} now") == [Kind.BANK_CARD]
    wrong = body + str((int(good[-1]) + 1) % 10)
    assert Kind.BANK_CARD not in kinds(f"pay {wrong} now")


# -- mobile numbers and e-mail -------------------------------------------------------------------


@pytest.mark.parametrize(
    "phone",
    [
        "13812345678",
        "138 1234 5678",
        "138-1234-5678",
        "+8613812345678",
        "+86 138 1234 5678",
        "0086-19912345678",
        "(+86)15012345678",
    ],
)
def test_mobile_numbers_are_found(phone: str) -> None:
    found = scan(f"电话{phone}转")
    assert [f.kind for f in found] == [Kind.MOBILE]
    assert found[0].start == 2
    assert found[0].end == 2 + len(phone)


@pytest.mark.parametrize("text", ["12812345678", "1381234567", "138123456789", "2138123456789"])
def test_not_mobile_numbers(text: str) -> None:
    assert Kind.MOBILE not in kinds(text)


def test_email_and_overlaps() -> None:
    assert kinds("mail a.b+c@mail.example.com now") == [Kind.EMAIL]
    assert kinds("13812345678@163.com") == [Kind.EMAIL]  # one finding, not two
    assert kinds("not@an-email") == []


def test_findings_are_ordered_and_carry_no_value() -> None:
    text = f"x@y.cn {VALID_ID} 13812345678 4111111111111111"
    found = scan(text)
    assert [f.kind for f in found] == [Kind.EMAIL, Kind.ID_CARD, Kind.MOBILE, Kind.BANK_CARD]
    assert all(VALID_ID not in repr(f) for f in found)


def test_scan_honours_kinds() -> None:
    assert kinds("13812345678 a@b.cn") == [Kind.MOBILE, Kind.EMAIL]
    assert [f.kind for f in scan("13812345678 a@b.cn", frozenset({Kind.EMAIL}))] == [Kind.EMAIL]
    only_mobile = scan("13812345678@163.com", frozenset({Kind.MOBILE}))
    assert [f.kind for f in only_mobile] == [Kind.MOBILE]


# -- apply / apply_value -------------------------------------------------------------------------

TEXT = f"call +86 138-1234-5678, id {VALID_ID}, card 4111 1111 1111 1111, mail alice@example.com"


def test_full_strength_tags() -> None:
    out = apply(TEXT, Surface.MODEL, store=masking()).unwrap()
    assert out == "call [MOBILE], id [ID_CARD], card [BANK_CARD], mail [EMAIL]"


def test_partial_strength_keeps_recognisable_edges() -> None:
    out = apply(TEXT, Surface.LOG, store=masking(Strength.PARTIAL)).unwrap()
    assert out == (
        "call +86 138-****-5678, id 110*************2X, card **** **** **** 1111, "
        "mail a***@example.com"
    )


def test_each_surface_uses_its_own_action() -> None:
    store = PolicyStore(Policy(model=Action.MASK, log=Action.BLOCK, display=Action.OFF))
    model = apply(TEXT, Surface.MODEL, store=store)
    log = apply(TEXT, Surface.LOG, store=store)
    display = apply(TEXT, Surface.DISPLAY, store=store)
    assert model.action is Action.MASK
    assert "13812345678" not in (model.value or "")
    assert log.blocked
    assert log.value is None
    assert len(log.findings) == 4
    assert display.value is TEXT
    assert display.findings == ()
    assert not display.blocked


def test_block_is_a_signal_never_a_silent_mask() -> None:
    store = masking(model=Action.BLOCK)
    result = apply("my phone 13812345678", Surface.MODEL, store=store)
    assert result.blocked
    assert result.value is None
    with pytest.raises(BlockedError, match="mobile") as info:
        result.unwrap()
    assert info.value.surface is Surface.MODEL
    clean = apply("nothing here", Surface.MODEL, store=store)
    assert not clean.blocked
    assert clean.unwrap() == "nothing here"


def test_surface_must_be_explicit_and_known() -> None:
    with pytest.raises(PolicyError):
        apply("x", "screen")  # type: ignore[arg-type]
    with pytest.raises(PolicyError):
        apply("x", 1)  # type: ignore[arg-type]
    assert apply("13812345678", "model").value == "[MOBILE]"  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        apply(b"13812345678", Surface.MODEL)  # type: ignore[arg-type]


def test_default_store_masks_every_surface() -> None:
    for surface in Surface:
        assert apply("13812345678", surface).value == "[MOBILE]"


def test_apply_value_walks_structures() -> None:
    value: dict[str, Any] = {
        "user": {"phone": "13812345678", "ids": [VALID_ID, "plain"], "tags": ("a@b.cn",)},
        "card": 4111111111111111,
        "ratio": 0.5,
        "ok": True,
        "none": None,
        "set": {"x@y.cn"},
        "frozen": frozenset({"13912345678"}),
        "blob": b"13812345678",
        7: "13812345678",
    }
    result = apply_value(value, Surface.MODEL, store=masking())
    out = result.unwrap()
    assert out["user"] == {"phone": "[MOBILE]", "ids": ["[ID_CARD]", "plain"], "tags": ("[EMAIL]",)}
    assert out["card"] == "[BANK_CARD]"
    assert out["ratio"] == 0.5
    assert out["ok"] is True
    assert out["set"] == {"[EMAIL]"}
    assert out["frozen"] == frozenset({"[MOBILE]"})
    assert out[7] == "[MOBILE]"
    assert out["blob"] == b"13812345678"
    assert result.unscanned == ("$.blob",)
    assert {f.path for f in result.findings} == {
        "$.user.phone",
        "$.user.ids[0]",
        "$.user.tags[0]",
        "$.card",
        "$.set{}",
        "$.frozen{}",
        "$[7]",
    }
    assert value["user"]["phone"] == "13812345678"  # the input is not mutated


def test_apply_value_keeps_unchanged_objects() -> None:
    value = {"a": ["plain", 1, 2.5], "b": ("x",), "c": {"y"}}
    result = apply_value(value, Surface.LOG, store=masking())
    assert result.value is value
    assert result.findings == ()


def test_apply_value_masks_keys_and_refuses_collisions() -> None:
    out = apply_value({"13812345678": 1}, Surface.LOG, store=masking()).unwrap()
    assert out == {"[MOBILE]": 1}
    with pytest.raises(pii.KeyCollisionError):
        apply_value({"13812345678": 1, "13912345678": 2}, Surface.LOG, store=masking())


def test_apply_value_block_on_a_nested_finding() -> None:
    result = apply_value(
        {"deep": [[{"x": "a@b.cn"}]]}, Surface.LOG, store=masking(log=Action.BLOCK)
    )
    assert result.blocked
    assert result.value is None
    assert result.findings[0].path == "$.deep[0][0].x"


def test_apply_value_depth_and_cycles_fail_closed() -> None:
    deep: list[Any] = ["13812345678"]
    for _ in range(pii.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(pii.TooDeepError):
        apply_value(deep, Surface.MODEL, store=masking())
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(pii.TooDeepError):
        apply_value(cycle, Surface.MODEL, store=masking())


def test_off_surface_scans_nothing() -> None:
    result = apply_value({"p": "13812345678"}, Surface.DISPLAY, store=masking(display=Action.OFF))
    assert result.findings == ()
    assert result.unwrap() == {"p": "13812345678"}


def test_policy_kinds_limit_what_is_redacted() -> None:
    store = PolicyStore(Policy(kinds=frozenset({Kind.EMAIL})))
    assert apply("13812345678 a@b.cn", Surface.MODEL, store=store).value == "13812345678 [EMAIL]"


def test_decimal_parts_are_not_identifiers() -> None:
    # a shell duration of 1.5156207139993057 s once came back as "1.[BANK_CARD]"
    card = "4111111111111111"
    ident = "11010519491231002X"
    phone = "13812345678"
    assert pii.valid_card(card)
    for value in (card, ident, phone):
        assert kinds(f'"duration": 1.{value}, ') == []  # fraction part
        assert kinds(f"x = {value}.25") == []  # integer part
        assert kinds(f"see {value}. Next") != []  # a full stop still ends a finding
        assert kinds(f"v1.2 {value}") != []
        assert kinds(f"12,{value},x") != []  # a CSV neighbour column does not hide it
