"""pii detection: where personal data sits in a string, validated, never guessed from shape alone.

Guarantees:
- Chinese mainland mobile numbers: 11 digits `1[3-9]x xxxx xxxx`, optionally prefixed by `+86`,
  `0086` or `(+86)`, groups optionally separated by one space or hyphen; never inside a longer run
  of digits.
- Resident ID numbers (GB 11643-1999, 18 characters): a known province code, a real calendar
  birth date between 1900-01-01 and today, and the ISO 7064 MOD 11-2 check digit (X = 10). An
  ID with a wrong check digit or an impossible date is NOT an ID.
- Bank cards: 13-19 digits not preceded by `+` (contiguous, or 4-digit groups with one
  consistent separator, or the 4-6-5 layout), first digit 2-9 (0 and 1 are not payment-card
  industries; this keeps millisecond timestamps out), passing the Luhn check. A run failing
  Luhn is not a card.
- E-mail addresses: local@domain.tld.
- A digit run that is the fraction or the integer part of a decimal number (`1.5234…`, a
  timing, a coordinate) is none of the numeric kinds: `.` followed by digits on either side
  disqualifies it. A comma does not (a CSV row may put an ID right after a number column).
- Findings never overlap: e-mail > ID > card > mobile wins a contested span. A Finding carries
  kind and position, never the value itself (findings go to logs).
Known limits: 15-digit first-generation IDs, landlines, IDs written with separators, and phone
numbers prefixed by a bare `86` are not detected. Luhn admits one random digit run in ten, so a
13-19-digit number starting 2-9 that happens to pass is treated as a card.
"""

from __future__ import annotations

import datetime
import enum
import re
from collections.abc import Callable
from dataclasses import dataclass


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
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?![A-Za-z0-9-])"
)
_ID = re.compile(
    r"(?<![0-9A-Za-z])(?<![0-9][.])"
    r"[1-9][0-9]{5}(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
    r"[0-9]{3}[0-9Xx](?![0-9A-Za-z])(?![.][0-9])"
)
_CARD = re.compile(
    r"(?<![0-9+])(?<![0-9][.])(?:[0-9]{13,19}"
    r"|[0-9]{4}([ -])[0-9]{4}(?:\1[0-9]{4}){1,2}(?:\1[0-9]{1,3})?"
    r"|[0-9]{4}([ -])[0-9]{6}\2[0-9]{5})(?![0-9])(?![.][0-9])"
)
_MOBILE = re.compile(
    r"(?<![0-9])(?<![0-9][.])(?P<prefix>\(?(?:\+|00)86\)?[ -]?)?"
    r"(?P<number>1[3-9][0-9](?:[ -]?[0-9]{4}){2})"
    r"(?![0-9])(?![.][0-9])"
)


def _today() -> datetime.date:
    """Seam: the upper bound for a birth date (tests patch it)."""
    return datetime.date.today()


def valid_id(text: str) -> bool:
    """GB 11643 checks on an 18-character candidate: province, birth date, check digit."""
    if len(text) != 18 or not text[:17].isdigit() or int(text[:2]) not in PROVINCES:
        return False
    try:
        born = datetime.date(int(text[6:10]), int(text[10:12]), int(text[12:14]))
    except ValueError:
        return False
    if not datetime.date(1900, 1, 1) <= born <= _today():
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


def valid_card(text: str) -> bool:
    digits = text.replace(" ", "").replace("-", "")
    return 13 <= len(digits) <= 19 and digits[0] not in "01" and luhn(digits)


def _free(taken: tuple[Finding, ...], start: int, end: int) -> bool:
    return all(end <= f.start or start >= f.end for f in taken)


def _any(_: str) -> bool:
    return True


_VALIDATED: tuple[tuple[Kind, re.Pattern[str], Callable[[str], bool]], ...] = (
    (Kind.ID_CARD, _ID, valid_id),
    (Kind.BANK_CARD, _CARD, valid_card),
    (Kind.MOBILE, _MOBILE, _any),
)


def scan(text: str, kinds: frozenset[Kind] = ALL_KINDS, *, path: str = "") -> tuple[Finding, ...]:
    """Every validated finding of the wanted kinds in `text`, in order, without overlaps."""
    taken: list[Finding] = []
    if Kind.EMAIL in kinds:
        taken.extend(Finding(Kind.EMAIL, m.start(), m.end(), path) for m in _EMAIL.finditer(text))
    # One regex never yields overlapping matches, so each kind is judged against the kinds
    # claimed before it only.
    for kind, pattern, valid in _VALIDATED:
        if kind in kinds:
            prior = tuple(taken)
            taken.extend(
                Finding(kind, m.start(), m.end(), path)
                for m in pattern.finditer(text)
                if valid(m.group()) and _free(prior, m.start(), m.end())
            )
    return tuple(sorted(taken, key=lambda f: f.start))


class Strength(enum.StrEnum):
    """FULL replaces an item by its tag; PARTIAL keeps a few characters a person can recognise."""

    FULL = "full"
    PARTIAL = "partial"


# (characters kept at the head, at the tail) of the significant characters, per kind.
_KEEP = {Kind.MOBILE: (3, 4), Kind.ID_CARD: (3, 2), Kind.BANK_CARD: (0, 4)}


def _mask_significant(text: str, head: int, tail: int) -> str:
    positions = [i for i, ch in enumerate(text) if ch.isdigit() or ch in "Xx"]
    hidden = set(positions[head : len(positions) - tail])
    return "".join("*" if i in hidden else ch for i, ch in enumerate(text))


def _mask_one(kind: Kind, item: str, strength: Strength) -> str:
    if strength is Strength.FULL:
        return f"[{kind.upper()}]"
    if kind is Kind.EMAIL:
        local, _, domain = item.rpartition("@")
        return f"{local[0]}***@{domain}"
    if kind is Kind.MOBILE:
        m = _MOBILE.fullmatch(item)
        assert m is not None
        prefix = m.group("prefix") or ""
        return prefix + _mask_significant(m.group("number"), *_KEEP[kind])
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
