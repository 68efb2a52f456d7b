"""stemmer: the Porter2 ("Snowball English") stemmer, pure Python, for tool and skill search.

Contract:
- `stem(word)` maps a lowercase English word to its stem by the published Porter2 rules
  (Snowball "English", with the R1 prefixes and double-letter rule of Snowball 3):
  inflections and common derivations meet
  (`deployment`/`deployed`/`deploys` → `deploy`, `configuration`/`configure` → `configur`,
  `validation`/`validate` → `valid`, `listing`/`lists` → `list`). One rule is added to Porter2:
  a stem ending in `ifi` loses its final `i`, so the `-ify` verbs meet their `-ification` nouns
  (`modify`/`modification` → `modif`, `notify`/`notification` → `notif`). A stem need not be a word;
  search applies the same function to both sides, so only consistency matters.
- Words that are not pure ASCII letters (identifiers with digits, non-English text) and words of
  at most two letters are returned unchanged. Deterministic, pure, memoised per word.
It holds no vocabulary beyond the algorithm's own exception list.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
_LI_ENDINGS = frozenset("cdeghkmnrt")
_EXCEPTIONS = {
    "skis": "ski",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "idly": "idl",
    "gently": "gentl",
    "ugly": "ugli",
    "early": "earli",
    "only": "onli",
    "singly": "singl",
    "sky": "sky",
    "news": "news",
    "howe": "howe",
    "atlas": "atlas",
    "cosmos": "cosmos",
    "bias": "bias",
    "andes": "andes",
}
_AFTER_1A = frozenset(
    ("inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed")
)
# Words whose R1 starts after a known prefix (Snowball 3's list: `universal` keeps `univers`).
_R1_PREFIXES = ("arsen", "commun", "emerg", "gener", "inter", "later", "organ", "past", "univers")
_STEP2 = (
    ("ization", "ize"),
    ("ational", "ate"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("iveness", "ive"),
    ("tional", "tion"),
    ("biliti", "ble"),
    ("lessli", "less"),
    ("entli", "ent"),
    ("ation", "ate"),
    ("alism", "al"),
    ("aliti", "al"),
    ("ousli", "ous"),
    ("iviti", "ive"),
    ("fulli", "ful"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("abli", "able"),
    ("izer", "ize"),
    ("ator", "ate"),
    ("alli", "al"),
    ("bli", "ble"),
    ("ogi", "og"),
    ("li", ""),
)
_STEP3 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("alize", "al"),
    ("icate", "ic"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ness", ""),
    ("ful", ""),
)
_STEP4 = (
    "ement",
    "ance",
    "ence",
    "able",
    "ible",
    "ment",
    "ant",
    "ent",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
    "ion",
    "al",
    "er",
    "ic",
)


def _vowel(word: str, i: int) -> bool:
    return word[i] in _VOWELS


def _region_after(word: str, start: int) -> int:
    """Index after the first non-vowel that follows a vowel, at or after `start`."""
    for i in range(start + 1, len(word)):
        if not _vowel(word, i) and _vowel(word, i - 1):
            return i + 1
    return len(word)


def _regions(word: str) -> tuple[int, int]:
    r1 = next((len(p) for p in _R1_PREFIXES if word.startswith(p)), None)
    if r1 is None:
        r1 = _region_after(word, 0)
    return r1, _region_after(word, r1)


def _short_syllable_at_end(word: str) -> bool:
    n = len(word)
    if n >= 3:
        a, b, c = word[-3], word[-2], word[-1]
        return a not in _VOWELS and b in _VOWELS and c not in _VOWELS and c not in "wxY"
    return n == 2 and word[0] in _VOWELS and word[1] not in _VOWELS


def _mark_ys(word: str) -> str:
    chars = list(word)
    for i, ch in enumerate(chars):
        if ch == "y" and (i == 0 or chars[i - 1] in _VOWELS):
            chars[i] = "Y"
    return "".join(chars)


def _step1a(word: str) -> str:
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("ied", "ies")):
        return word[:-2] if len(word) > 4 else word[:-1]
    if word.endswith(("us", "ss")):
        return word
    if word.endswith("s") and any(c in _VOWELS for c in word[:-2]):
        return word[:-1]
    return word


def _step1b(word: str, r1: int) -> str:
    for suffix in ("eedly", "eed"):
        if word.endswith(suffix):
            return word[: -len(suffix)] + "ee" if len(word) - len(suffix) >= r1 else word
    for suffix in ("ingly", "edly", "ing", "ed"):
        if not word.endswith(suffix):
            continue
        base = word[: -len(suffix)]
        if not any(c in _VOWELS for c in base):
            return word
        if base.endswith(("at", "bl", "iz")):
            return base + "e"
        if base.endswith(_DOUBLES):
            # A lone a/e/o before the double keeps it (Snowball 3): `added` → `add`, not `ad`.
            return base if len(base) == 3 and base[0] in "aeo" else base[:-1]
        if _short_syllable_at_end(base) and r1 >= len(base):
            return base + "e"
        return base
    return word


def _step1c(word: str) -> str:
    if len(word) > 2 and word[-1] in "yY" and word[-2] not in _VOWELS:
        return word[:-1] + "i"
    return word


def _replace(word: str, rules: tuple[tuple[str, str], ...], start: int) -> str:
    for suffix, repl in rules:
        if not word.endswith(suffix):
            continue
        if len(word) - len(suffix) < start:
            return word
        base = word[: -len(suffix)]
        if suffix == "ogi" and not base.endswith("l"):
            return word
        if suffix == "li" and (not base or base[-1] not in _LI_ENDINGS):
            return word
        return base + repl
    return word


def _step3(word: str, r1: int, r2: int) -> str:
    if word.endswith("ative"):
        return word[:-5] if len(word) - 5 >= r2 else word
    return _replace(word, _STEP3, r1)


def _step4(word: str, r2: int) -> str:
    for suffix in _STEP4:
        if not word.endswith(suffix):
            continue
        base = word[: -len(suffix)]
        if len(base) < r2:
            return word
        if suffix == "ion" and not base.endswith(("s", "t")):
            return word
        return base
    return word


def _step5(word: str, r1: int, r2: int) -> str:
    n = len(word)
    if word.endswith("e"):
        if n - 1 >= r2 or (n - 1 >= r1 and not _short_syllable_at_end(word[:-1])):
            return word[:-1]
    elif word.endswith("ll") and n - 1 >= r2:
        return word[:-1]
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Porter2 stem of one lowercase word (see the module contract)."""
    if len(word) <= 2 or not word.isascii() or not word.isalpha():
        return word
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    word = _mark_ys(word)
    r1, r2 = _regions(word)
    word = _step1a(word)
    if word in _AFTER_1A:
        return word
    word = _step1c(_step1b(word, r1))
    word = _replace(word, _STEP2, r1)
    word = _step3(word, r1, r2)
    word = _step4(word, r2)
    word = _step5(word, r1, r2)
    if word.endswith("ifi"):
        word = word[:-1]  # `modify` meets `modification` (Porter2 gives `modifi` / `modif`)
    return word.replace("Y", "y")
