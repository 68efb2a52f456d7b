"""phrasing: what a request's raw text says beyond its single words.

Contract (`mark(query)` returns the text to analyse and the concepts the text implies):
- A URL (`https://…`, `www.…`) is a value: its words are dropped (`example.com/docs` is not a
  request for documentation) and the word `url` takes its place.
- A file name with a common extension (`config.yaml`, `/var/log/app.log`, `main.py`) or a path
  (`/etc/hosts`, `./build`, `~/notes`) keeps its words and implies the concept `file`.
- An identifier as code spells it (`parseConfig`, `main()`) keeps its words and implies the
  concept `code`.
- A time of day or a day to come ("at 9am", "10:30", "tomorrow", "next monday") keeps its words
  and implies the concepts `time` and `schedule`.
- An idiom of `IDIOMS` ("how many", "money back", "file a bug", "who am I") is replaced by what
  it means (`count`, `refund`, `create issue`, `authenticated user`) wherever it stands, with
  or without an article inside it ("file a bug", "file bug").
- A word of `VERB_SENSES` that opens a clause (after lead-ins such as "please", "can you") is a
  verb and is replaced by what it asks for: "text Bob that…" asks to send an SMS, "page the
  on-call" to raise an incident; the same word elsewhere ("the text of the page") is left alone.
Everything is general English and developer usage written by hand: no tool name, no server name,
nothing taken from a benchmark's queries. Deterministic and pure.
"""

from __future__ import annotations

import re
from functools import lru_cache

from yagent.kernel.judge.tooldisclose.intent import LEAD_INS

FILE = "file"
URL = "url"
CODE = "code"
WHEN = "time schedule"

_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.[^\s/]+\S*", re.IGNORECASE)
_EXTENSIONS = (
    "py pyi js mjs ts tsx jsx go rs java kt rb php c h cc cpp hpp cs swift scala sh bash zsh "
    "ps1 sql json jsonl yaml yml toml ini cfg conf env lock xml html htm css scss md rst txt "
    "csv tsv log pdf png jpg jpeg gif svg zip tar gz tgz whl tf tfvars proto ipynb dockerfile"
)
# Matched per whitespace-separated token, so the cost stays linear in the request's length.
_FILE_NAME = re.compile(r"[\w.-]*[\w-]\.(?:" + "|".join(_EXTENSIONS.split()) + ")", re.IGNORECASE)
_PATH_START = ("/", "./", "../", "~/")
_TOKEN_EDGES = "\"'`()[]{}<>,;:!?."
# An identifier as code spells it: camelCase (`parseConfig`, `getUserById`) or a call (`main()`).
_IDENTIFIER = re.compile(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b\w+\(\)")
# A time of day or a day to come: "at 9am", "10:30", "tomorrow", "next monday".
_WHEN = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\bat \d{1,2}(?::\d{2})?\b"
    r"|(?<![\w.:])\d{1,2}:\d{2}(?![\w.:])|\b(?:tomorrow|tonight)\b"
    r"|\bnext (?:week|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE,
)
_ARTICLE = r"(?:(?:a|an|the|my|our|your|this|that|some)\s+)?"

# Idioms: a phrase whose words alone would mislead, and what it asks for.
# Idioms: a phrase whose words alone would mislead, and what it asks for (said as a request, so
# the intent of `intent.query_intent` reads it too: `show` is a function word to search).
IDIOMS: tuple[tuple[str, str], ...] = (
    ("how many", "count"),
    ("number of", "count"),
    ("how big", "show size"),
    ("how large", "show size"),
    ("how much space", "show size"),
    ("how much disk", "show size"),
    ("money back", "refund"),
    ("who am i", "show authenticated user"),
    ("whoami", "show authenticated user"),
    ("logged in as", "authenticated user"),
    ("signed in as", "authenticated user"),
    ("file bug", "create issue"),
    ("file issue", "create issue"),
    ("file ticket", "create ticket"),
    ("report bug", "create issue"),
    ("raise issue", "create issue"),
    ("raise ticket", "create ticket"),
    ("log bug", "create issue"),
    ("log ticket", "create ticket"),
    ("what time is it", "show current time"),
    ("get rid of", "delete"),
)
# Words that, opening a request, are verbs with a meaning their noun does not have.
VERB_SENSES: dict[str, str] = {
    "text": "send text message sms",
    "page": "page on-call incident alert",
    "ping": "notify send message",
    "email": "send email",
    "mail": "send email",
    "dm": "send direct message",
    "curl": "fetch url",
    "cat": "read file",
    "tail": "read last lines",
}
_CLAUSE = re.compile(r"([,;?.!]+\s*|\b(?:and|then|but)\s+)")


def _idiom_pattern(phrase: str) -> str:
    return r"\b" + (r"\s+" + _ARTICLE).join(map(re.escape, phrase.split())) + r"\b"


_IDIOM_MEANINGS = dict(IDIOMS)
_IDIOMS = re.compile(
    "|".join(
        f"(?P<i{n}>{_idiom_pattern(phrase)})"
        for n, phrase in sorted(enumerate(_IDIOM_MEANINGS), key=lambda item: -len(item[1]))
    ),
    re.IGNORECASE,
)
_IDIOM_OF = {f"i{n}": phrase for n, phrase in enumerate(_IDIOM_MEANINGS)}


def _meaning(match: re.Match[str]) -> str:
    return f" {_IDIOM_MEANINGS[_IDIOM_OF[match.lastgroup or '']]} "


_WORD = re.compile(r"[\w']+")


def _senses(clause: str) -> str:
    """A clause whose opening verb has a sense of its own, with the verb replaced by it."""
    for match in _WORD.finditer(clause):
        word = match.group(0).lower()
        if word in LEAD_INS:
            continue
        sense = VERB_SENSES.get(word)
        if sense is None:
            return clause
        return clause[: match.start()] + sense + clause[match.end() :]
    return clause


def _is_file(token: str) -> bool:
    """A file name with a common extension (its last path part) or a path from a root."""
    token = token.strip(_TOKEN_EDGES) if not token.startswith(_PATH_START) else token.rstrip(",;!?")
    if "@" in token:
        return False
    if token.startswith(_PATH_START) and len(token) > 2 and any(c.isalnum() for c in token):
        return True
    return bool(_FILE_NAME.fullmatch(token.rsplit("/", 1)[-1]))


@lru_cache(maxsize=1)
def mark(query: str) -> tuple[str, tuple[str, ...]]:
    """The text to analyse and the concepts its values imply (see the module contract). The last
    request's marking is kept: a search reads its intent and its words from the same one (a
    larger memory would make repeated benchmark queries look cheaper than new ones)."""
    concepts: list[str] = []
    text = _URL.sub(f" {URL} ", query)
    if any(_is_file(token) for token in text.split()):
        concepts.append(FILE)
    if _IDENTIFIER.search(text):
        concepts.append(CODE)
    if _WHEN.search(text):
        concepts.append(WHEN)
    text = _IDIOMS.sub(_meaning, text)
    parts = _CLAUSE.split(text)
    text = "".join(part if i % 2 else _senses(part) for i, part in enumerate(parts))
    return text, tuple(concepts)
