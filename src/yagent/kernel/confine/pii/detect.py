"""pii detection: where personal data sits in a string, validated, never guessed from shape alone.

Guarantees:
- Detection runs on the text folded to NFKC one character at a time (`fold`): fullwidth digits,
  letters, `＠`, `．`, `＋` and the ideographic space count as their ASCII forms. Findings carry the
  positions of the ORIGINAL text, so masking replaces the original characters.
- Chinese mainland mobile numbers: 11 digits `1[3-9]x xxxx xxxx`, optionally prefixed by `+86`,
  `0086` or `(+86)`, groups optionally separated by one space or hyphen; never inside a longer run
  of digits.
- Resident ID numbers (GB 11643-1999, 18 characters): a known province code, a real calendar
  birth date between 1800-01-01 and today, and the ISO 7064 MOD 11-2 check digit (X = 10); the
  check decides the kind, so an ID that also passes Luhn is an ID. Written whole, grouped 6-8-4 or
  6-4-4-4 with one consistent space or hyphen, or glued inside a longer letters-and-digits token
  (`订单号911010519491231002X1`: the first valid 18-character window, left to right). An ID with a
  wrong check digit or an impossible date is NOT an ID.
- Bank cards: 13-19 digits not preceded by `+` (contiguous, 4-digit groups with one consistent
  separator and an optional last group of 1-3, the 4-6-5 layout, or 6 then 10-13), first digit 2-9
  (0 and 1 are not payment-card industries; this keeps epoch timestamps out), passing the Luhn
  check. A contiguous run opening with a real YYYYMMDDhhmmss (1970-2099) is a timestamp, not a card.
- E-mail addresses: local@domain.tld, letters of any script (IDN: `用户@例子.广告`) or a punycode
  (`xn--`) top-level label.
- A digit run that is the fraction or the integer part of a decimal number (`1.5234…`, a
  timing, a coordinate) is none of the numeric kinds: `.` followed by digits on either side
  disqualifies it. A comma does not (a CSV row may put an ID right after a number column).
- Hexadecimal digests of 32+ characters (git hashes, checksums) and UUIDs hold none of the
  numeric kinds.
- Findings never overlap: e-mail > ID > card > mobile wins a contested span. A Finding carries
  kind and position, never the value itself (findings go to logs).
Known limits: 15-digit first-generation IDs, landlines, and phone numbers prefixed by a bare `86`
are not detected; a card or mobile number glued between letters is found, one glued between
digits is not. Luhn admits one random digit run in ten, so a 13-19-digit number starting 2-9
that happens to pass is treated as a card.
"""

from __future__ import annotations

import datetime
import enum
import re
from collections.abc import Callable
from dataclasses import dataclass

from yagent.kernel.confine.pii.fold import fold


class Kind(enum.StrEnum):
    MOBILE = "mobile"
    ID_CARD = "id_card"
    BANK_CARD = "bank_card"
    EMAIL = "email"


ALL_KINDS = frozenset(Kind)


@dataclass(frozen=True, slots=True)
class Finding:
    """One detected item: kind and [start, end) inside the scanned string; `path` locates the
    string inside a structured value ("" for plain text)."""

    kind: Kind
    start: int
    end: int
    path: str = ""


PROVINCES = frozenset(
    {11, 12, 13, 14, 15, 21, 22, 23, 31, 32, 33, 34, 35, 36, 37, 41, 42, 43, 44, 45, 46}
    | {50, 51, 52, 53, 54, 61, 62, 63, 64, 65, 71, 81, 82, 83, 91}
)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"

_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w.%+-]{1,64}@"
    r"(?:[^\W_](?:(?:[^\W_]|-){0,61}[^\W_])?\.)+"
    r"(?:[^\W\d_]{2,63}|xn--[A-Za-z0-9-]{1,59})(?![\w-])"
)
# Digit runs that are part of a decimal number (`1.5…`, `….25`) are none of the numeric kinds.
_NOT_DECIMAL_BEFORE = r"(?<![0-9][.])"
_NOT_DECIMAL_AFTER = r"(?![.][0-9])"
_ID_DATE = r"(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
_ID_WINDOW = re.compile(rf"(?=([1-9][0-9]{{5}}{_ID_DATE}[0-9]{{3}}[0-9Xx]))")
_ALNUM_TOKEN = re.compile(
    rf"(?<![0-9A-Za-z]){_NOT_DECIMAL_BEFORE}[0-9A-Za-z]{{18,}}(?![0-9A-Za-z]){_NOT_DECIMAL_AFTER}"
)
_ID_GROUPED = re.compile(
    rf"(?<![0-9A-Za-z]){_NOT_DECIMAL_BEFORE}[1-9][0-9]{{5}}(?P<sep>[ -])"
    r"(?:(?:18|19|20)[0-9]{6}|(?:18|19|20)[0-9]{2}(?P=sep)[0-9]{4})"
    rf"(?P=sep)[0-9]{{3}}[0-9Xx](?![0-9A-Za-z]){_NOT_DECIMAL_AFTER}"
)
_CARD = re.compile(
    rf"(?<![0-9+]){_NOT_DECIMAL_BEFORE}(?:[0-9]{{13,19}}"
    r"|[0-9]{4}([ -])[0-9]{4}(?:\1[0-9]{4}){1,2}(?:\1[0-9]{1,3})?"
    r"|[0-9]{4}([ -])[0-9]{6}\2[0-9]{5}"
    rf"|[0-9]{{6}}([ -])[0-9]{{10,13}})(?![0-9]){_NOT_DECIMAL_AFTER}"
)
_MOBILE = re.compile(
    rf"(?<![0-9]){_NOT_DECIMAL_BEFORE}(?P<prefix>\(?(?:\+|00)86\)?[ -]?)?"
    r"(?P<number>1[3-9][0-9](?:[ -]?[0-9]{4}){2})"
    rf"(?![0-9]){_NOT_DECIMAL_AFTER}"
)
# Spans no numeric kind is looked for in: hexadecimal digests (git hashes, checksums) and UUIDs.
_DIGEST = re.compile(
    r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{32,}"
    r"|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})"
    r"(?![0-9A-Za-z])"
)
_OLDEST_BIRTH = datetime.date(1800, 1, 1)


def _today() -> datetime.date:
    """Seam: the upper bound for a birth date (tests patch it)."""
    return datetime.date.today()


def valid_id(text: str) -> bool:
    """GB 11643 checks on an 18-character candidate (spaces or hyphens between groups are
    ignored): province, a real birth date from 1800-01-01 to today, check digit."""
    text = text.replace(" ", "").replace("-", "")
    if len(text) != 18 or not text[:17].isdigit() or int(text[:2]) not in PROVINCES:
        return False
    try:
        born = datetime.date(int(text[6:10]), int(text[10:12]), int(text[12:14]))
    except ValueError:
        return False
    if not _OLDEST_BIRTH <= born <= _today():
        return False
    total = sum(int(d) * w for d, w in zip(text[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == text[17].upper()


def luhn(digits: str) -> bool:
    """The Luhn (mod 10) check over a string of digits."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _timestamp(digits: str) -> bool:
    """A run opening with a real date and time, YYYYMMDDhhmmss (1970-2099), is a timestamp."""
    if len(digits) < 14 or digits[:2] not in ("19", "20"):
        return False
    try:
        stamp = datetime.datetime.strptime(digits[:14], "%Y%m%d%H%M%S")
    except ValueError:
        return False
    return stamp.year >= 1970


def valid_card(text: str) -> bool:
    digits = text.replace(" ", "").replace("-", "")
    return (
        13 <= len(digits) <= 19
        and digits[0] not in "01"
        and not (digits == text and _timestamp(digits))
        and luhn(digits)
    )


Span = tuple[int, int]


def _free(taken: list[Span], start: int, end: int) -> bool:
    return all(end <= s or start >= e for s, e in taken)


def _ids(text: str) -> list[Span]:
    """ID spans: grouped forms, and the first valid 18-character window of each alphanumeric
    token (an ID glued into an order number is still an ID), left to right, never overlapping."""
    spans = [m.span() for m in _ID_GROUPED.finditer(text) if valid_id(m.group())]
    for token in _ALNUM_TOKEN.finditer(text):
        end = token.start()
        for window in _ID_WINDOW.finditer(text, token.start(), token.end()):
            start = window.start(1)
            if start >= end and valid_id(window.group(1)):
                end = start + 18
                spans.append((start, end))
    return spans


def _matches(pattern: re.Pattern[str], valid: Callable[[str], bool]) -> Callable[[str], list[Span]]:
    def find(text: str) -> list[Span]:
        return [m.span() for m in pattern.finditer(text) if valid(m.group())]

    return find


def _emails(text: str) -> list[Span]:
    return [m.span() for m in _EMAIL.finditer(text)]


# In order of precedence: a span claimed by an earlier kind is not reported for a later one.
_FINDERS: tuple[tuple[Kind, Callable[[str], list[Span]]], ...] = (
    (Kind.EMAIL, _emails),
    (Kind.ID_CARD, _ids),
    (Kind.BANK_CARD, _matches(_CARD, valid_card)),
    (Kind.MOBILE, _matches(_MOBILE, lambda _: True)),
)


# Every numeric finding holds 11 digits or more, one space or hyphen at most between two of them
# (a mobile's 11, an ID's first 17, a card's 13-19, in every layout above): a text without such a
# run holds none — one cheap search instead of every kind's patterns.
_NUMERIC_HINT = re.compile(r"[0-9](?:[ -]?[0-9]){10}")
# A necessary condition for the hint, searched first (no backtracking over the optional
# separators): every match of the hint opens with a digit and holds 11 or more of [0-9 -].
_NUMERIC_RUN = re.compile(r"[0-9][0-9 -]{10}")
SHORTEST = 11  # the fewest characters of any finding but an e-mail (a mobile's 11 digits)


def scan(text: str, kinds: frozenset[Kind] = ALL_KINDS, *, path: str = "") -> tuple[Finding, ...]:
    """Every validated finding of the wanted kinds in `text`, in order, without overlaps.
    Detection runs on the NFKC-folded text; positions are those of the original `text`."""
    is_ascii = text.isascii()  # ASCII folds to itself: judged before anything is folded
    if is_ascii and "@" not in text:
        if len(text) < SHORTEST:
            return ()  # no kind but an e-mail fits in fewer characters
        if not (_NUMERIC_RUN.search(text) and _NUMERIC_HINT.search(text)):
            return ()  # no numeric kind without 11 digits (see _NUMERIC_HINT)
    folded = fold(text)
    if (
        not is_ascii
        and "@" not in folded.text
        and not (_NUMERIC_RUN.search(folded.text) and _NUMERIC_HINT.search(folded.text))
    ):
        return ()  # no e-mail without an `@`, no numeric kind without 11 digits (see _NUMERIC_HINT)
    found: list[tuple[Kind, Span]] = []
    claimed: list[Span] = []
    for kind, finder in _FINDERS:
        if kind is Kind.ID_CARD:
            claimed.extend(m.span() for m in _DIGEST.finditer(folded.text))
        if kind in kinds:
            prior = list(claimed)
            for span in finder(folded.text):
                if _free(prior, *span):
                    found.append((kind, span))
                    claimed.append(span)
    out: list[Finding] = []
    for kind, (start, end) in sorted(found, key=lambda item: item[1]):
        start, end = folded.span(start, end)
        if not out or start >= out[-1].end:  # one original character never serves two findings
            out.append(Finding(kind, start, end, path))
    return tuple(out)


class Strength(enum.StrEnum):
    """FULL replaces an item by its tag; PARTIAL keeps a few characters a person can recognise."""

    FULL = "full"
    PARTIAL = "partial"


# (characters kept at the head, at the tail) of the significant characters, per kind.
_KEEP = {Kind.MOBILE: (3, 4), Kind.ID_CARD: (3, 2), Kind.BANK_CARD: (0, 4)}


def _mask_significant(text: str, head: int, tail: int) -> str:
    positions = [i for i, ch in enumerate(text) if fold(ch).text in _SIGNIFICANT]
    hidden = set(positions[head : len(positions) - tail])
    return "".join("*" if i in hidden else ch for i, ch in enumerate(text))


_SIGNIFICANT = frozenset("0123456789Xx")


def _mask_one(kind: Kind, item: str, strength: Strength) -> str:
    if strength is Strength.FULL:
        return f"[{kind.upper()}]"
    folded = fold(item)
    if kind is Kind.EMAIL:
        at = folded.at(folded.text.rindex("@"))
        return f"{item[0]}***{item[at:]}"
    if kind is Kind.MOBILE:
        m = _MOBILE.fullmatch(folded.text)
        assert m is not None
        number = folded.at(m.start("number"))
        return item[:number] + _mask_significant(item[number:], *_KEEP[kind])
    return _mask_significant(item, *_KEEP[kind])


def _redact(text: str, findings: tuple[Finding, ...], strength: Strength) -> str:
    """Replace every finding in `text` (findings sorted, non-overlapping, from `scan`)."""
    out: list[str] = []
    at = 0
    for f in findings:
        out.append(text[at : f.start])
        out.append(_mask_one(f.kind, text[f.start : f.end], strength))
        at = f.end
    out.append(text[at:])
    return "".join(out)
