"""pii: the gaps a hidden corpus found (fullwidth forms, IDN e-mail, grouped IDs and cards, IDs
born before 1900, IDs glued into longer tokens) and the look-alikes that must stay untouched."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.confine.pii import (
    Kind,
    Policy,
    PolicyStore,
    Strength,
    Surface,
    apply,
    luhn,
    scan,
)
from yagent.kernel.confine.pii.fold import fold

WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
VALID_ID = "11010519491231002X"


def make_id(region: str, born: str, seq: str = "123") -> str:
    body = region + born + seq
    return body + "10X98765432"[sum(int(d) * w for d, w in zip(body, WEIGHTS, strict=True)) % 11]


def luhn_complete(body: str) -> str:
    return next(body + d for d in "0123456789" if luhn(body + d))


def to_fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def spans(text: str) -> list[tuple[Kind, str]]:
    return [(f.kind, text[f.start : f.end]) for f in scan(text)]


def masked(text: str, strength: Strength = Strength.FULL) -> str:
    return apply(text, Surface.MODEL, store=PolicyStore(Policy(strength=strength))).unwrap()


ID_DIGITS = make_id("110105", "19491231", "001")  # a check digit that is a digit
CARD16 = luhn_complete("622202123456789")
CARD19 = luhn_complete("622202123456789012")


# -- fullwidth forms: folded with NFKC, the original span masked --------------------------------


@pytest.mark.parametrize(
    ("plain", "kind"),
    [
        ("13812345678", Kind.MOBILE),
        ("+86 138 1234 5678", Kind.MOBILE),
        (VALID_ID, Kind.ID_CARD),
        ("4111 1111 1111 1111", Kind.BANK_CARD),
        ("alice@example.com", Kind.EMAIL),
    ],
)
def test_fullwidth_items_are_found_at_their_original_span(plain: str, kind: Kind) -> None:
    wide = to_fullwidth(plain)
    assert wide != plain
    text = f"联系：{wide}，谢谢"
    assert spans(text) == [(kind, wide)]
    assert masked(text) == f"联系：[{kind.upper()}]，谢谢"


def test_fullwidth_at_and_dot_in_an_ascii_address() -> None:
    assert masked("mail alice＠example．com now") == "mail [EMAIL] now"


def test_ideographic_space_groups_a_card() -> None:
    grouped = "　".join(CARD16[i : i + 4] for i in range(0, 16, 4))
    assert spans(f"卡号{grouped}") == [(Kind.BANK_CARD, grouped)]


def test_partial_masking_keeps_the_original_characters() -> None:
    assert masked("电话１３８１２３４５６７８", Strength.PARTIAL) == "电话１３８****５６７８"
    wide_id = to_fullwidth(VALID_ID)
    assert masked(wide_id, Strength.PARTIAL) == "１１０*************２Ｘ"
    assert (
        masked("ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ", Strength.PARTIAL)
        == "ａ***＠ｅｘａｍｐｌｅ．ｃｏｍ"
    )
    assert masked("＋８６ １３８１２３４５６７８", Strength.PARTIAL) == "＋８６ １３８****５６７８"


def test_mixed_width_text_keeps_every_other_character() -> None:
    text = "ｎｏｔｅ：订单 42，电话１３８１２３４５６７８；ｏｋ"
    assert masked(text) == "ｎｏｔｅ：订单 42，电话[MOBILE]；ｏｋ"


def test_fold_maps_expansions_to_their_source_character() -> None:
    folded = fold("a㍿１")
    assert folded.text == "a株式会社1"
    assert [folded.at(i) for i in range(len(folded.text))] == [0, 1, 1, 1, 1, 2]
    assert folded.span(1, 3) == (1, 2)
    assert fold("plain").origin is None
    assert fold("中文已是规范形式").origin is None


# -- IDN e-mail ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address", ["用户@例子.广告", "почта@пример.рф", "user@例子.中国", "info@xn--fiqs8s.xn--55qx5d"]
)
def test_internationalised_email_addresses(address: str) -> None:
    assert spans(f"写信到 {address} 吧") == [(Kind.EMAIL, address)]


def test_email_does_not_swallow_the_sentence_end() -> None:
    assert spans("发到 a@b.com。") == [(Kind.EMAIL, "a@b.com")]


# -- resident IDs: grouping, old birth years, glued into tokens ---------------------------------


@pytest.mark.parametrize(
    "grouped",
    ["110105 19491231 002X", "110105-19491231-002X", "110105 1949 1231 002X"],
)
def test_grouped_ids(grouped: str) -> None:
    assert spans(f"身份证 {grouped} 。") == [(Kind.ID_CARD, grouped)]


def test_grouping_must_be_consistent_and_valid() -> None:
    assert spans("110105 19491231-002X") == []
    assert spans("110105 19491231 0021") == []  # wrong check digit: neither ID nor anything else


@pytest.mark.parametrize("born", ["18991231", "18800101", "18500615"])
def test_birth_year_before_1900_is_an_id_by_its_checksum(born: str) -> None:
    ident = make_id("110105", born)
    assert spans(f"id {ident}") == [(Kind.ID_CARD, ident)]


def test_an_id_that_also_passes_luhn_is_reported_as_an_id() -> None:
    ident = next(
        make_id("110105", "18990101", f"{seq:03d}")
        for seq in range(1000)
        if make_id("110105", "18990101", f"{seq:03d}")[-1] != "X"
        and luhn(make_id("110105", "18990101", f"{seq:03d}"))
    )
    assert spans(ident) == [(Kind.ID_CARD, ident)]


def test_id_glued_into_an_order_number() -> None:
    text = "订单号911010519491231002X1"
    assert spans(text) == [(Kind.ID_CARD, VALID_ID)]
    assert masked(text) == "订单号9[ID_CARD]1"
    assert masked(f"ref ABC{VALID_ID}Z9") == "ref ABC[ID_CARD]Z9"


def test_a_decimal_number_still_hides_nothing() -> None:
    assert spans(f"t=1.9{ID_DIGITS}") == []
    assert spans(f"t=9{ID_DIGITS}.5") == []


# -- bank cards: more groupings -------------------------------------------------------------------


@pytest.mark.parametrize(
    "grouped",
    [
        f"{CARD19[:6]} {CARD19[6:]}",
        f"{CARD19[:6]}-{CARD19[6:]}",
        " ".join([CARD19[0:4], CARD19[4:8], CARD19[8:12], CARD19[12:16], CARD19[16:]]),
        "-".join([CARD19[0:4], CARD19[4:8], CARD19[8:12], CARD19[12:16], CARD19[16:]]),
        " ".join(CARD16[i : i + 4] for i in range(0, 16, 4)),
        f"{CARD16[:6]} {CARD16[6:]}",
    ],
)
def test_grouped_cards(grouped: str) -> None:
    assert spans(f"卡号:{grouped}。") == [(Kind.BANK_CARD, grouped)]


def test_grouped_card_with_a_wrong_check_digit_is_not_a_card() -> None:
    wrong = CARD19[:-1] + str((int(CARD19[-1]) + 1) % 10)
    assert spans(f"{wrong[:6]} {wrong[6:]}") == []


# -- look-alikes that stay as they are ------------------------------------------------------------

LOOKALIKES = [
    "3f786850e387550fdab836ed7e6dc881de23001b",  # git hash
    "commit 4111111111111111411111111111111111111111",  # an all-digit 40-character digest
    "sha256 " + "4111111111111111" * 4,
    "123e4567-e89b-12d3-a456-426614174000",  # UUID
    "12345678-4111-1111-1111-111111111111",  # an all-digit UUID
    "2024-01-31T12:34:56.789Z",
    "20240131123456",  # compact timestamps
    "20240131123456789",
    "1706704496123",  # epoch milliseconds
    "1706704496.123456",
    "order 42, total 1234.56, qty 1000000",
    "version 1.2.3, port 8080, pid 138123",
    "x = 0.13812345678",
    "sum(1, 2, 3) == 6",
]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_are_not_masked(text: str) -> None:
    assert scan(text) == ()
    assert masked(text) == text


def test_luhn_passing_timestamps_and_digest_runs_are_not_cards() -> None:
    stamps = [f"2024013112{m:02d}{sec:02d}" for m in range(60) for sec in range(60)]
    stamp = next(t for t in stamps if luhn(t))
    millis = next(t + f"{ms:03d}" for t in stamps for ms in range(1000) if luhn(t + f"{ms:03d}"))
    assert scan(f"at {stamp} and {millis}") == ()
    for glued in (CARD16, "13812345678", ID_DIGITS):
        digest = f"ab{glued}cdef".ljust(40, "0")
        assert scan(f"commit {digest}") == ()
        assert (
            scan(f"id {digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}")
            == ()
        )


@given(st.integers(0, 2**160 - 1))
def test_hex_digests_are_never_masked(value: int) -> None:
    digest = f"{value:040x}"
    assert scan(f"commit {digest}") == ()


@given(st.uuids())
def test_uuids_are_never_masked(value: object) -> None:
    assert scan(f"id={value}") == ()
