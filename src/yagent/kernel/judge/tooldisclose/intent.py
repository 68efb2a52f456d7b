"""intent: whether a request asks to look at something or to change it, and which tools do which.

Contract:
- `tool_action(name, brief, description)` is a tool's action class: `READ` (it lists, gets,
  searches, shows, counts …), `WRITE` (it creates, changes, deletes, sends, starts, moves …) or
  `NONE` (it cannot be told: "Run a query", "Wait for text"). It is the first word of the name
  that is a verb of `READ_VERBS` or `WRITE_VERBS` (`get_build_logs` reads: names put the verb
  first); else the description's first word, then the brief's, when one is such a verb (as
  written: "Changes of …" is a noun, not `change`); else `NONE` when one of them opens with a
  `NEUTRAL_VERBS` verb; else `READ` — a brief that opens with a noun ("Details of …", "Columns
  of a table") names what the tool gives back.
- `query_intent(query)` is the request's intent, read from the word that opens each clause
  (clauses split at `,`, `;`, `?`, `.`, `!`, "and", "then", "but"), after lead-ins such as
  "please", "can you", "I need to", "how do I": an interrogative (`which`, `what`, `how many`,
  `is`, `are`, `any` …) or a read verb (`show`, `list`, `find` …) opens a `READ` clause, a write
  verb (`create`, `delete`, `move` …) a `WRITE` clause; a clause opened by anything else says
  nothing. The request's intent is the clauses' when they agree, `NONE` when they disagree or
  none says anything ("rename it and show its size" is both, so neither). `open` followed by
  "a", "an" or "new" creates ("open a PR"), any other `open` reads ("open the email", "open
  a.txt"); "give me", "tell me", "get me" read.
- `mismatch(intent, action)` is true only when both are known and differ: the catalog weighs a
  tool down by it, never drops it.
- `NEUTRAL_VERBS` (`run`, `execute`, `open`, `pull`, `log` …) are neither read nor write verbs
  ("run a query" reads, "run a container" writes; "open a file" reads, "open a PR" writes).
Everything is general English usage, written by hand: no tool, server or benchmark query in it.
Deterministic and pure.
"""

from __future__ import annotations

import re
from enum import Enum
from functools import lru_cache


class Action(Enum):
    """What a tool does to the things it names, or what a request asks of them."""

    READ = "read"
    WRITE = "write"
    NONE = "none"


READ_VERBS: frozenset[str] = frozenset(
    """
    list get read show describe view display search find query fetch retrieve look lookup
    inspect check count diff compare preview explain validate verify export download watch
    monitor scan browse see print tail grep filter analyze analyse summarize summarise audit
    simulate test know understand
    """.split()  # noqa: SIM905 - a word list reads better as text
)
WRITE_VERBS: frozenset[str] = frozenset(
    """
    create add make insert put set update edit change modify alter rename move delete remove
    drop destroy purge clear kill terminate cancel stop start restart reboot scale deploy install
    upgrade uninstall rollback undo revert apply merge push commit publish post send reply
    comment upload write append assign invite link label tag archive mute unmute acknowledge
    resolve close approve accept reject star fork schedule book share finalize finalise refund
    transition cordon uncordon promote retry rerun trigger build fill type click press
    choose hover drag resize navigate save draft stage unstage reset checkout switch record
    relate lock unlock enable disable pause resume mark bump spin boot halt shutdown wipe nuke
    erase flush invalidate expire grant revoke attach detach rotate subscribe unsubscribe notify
    pin unpin hide join leave submit replace overwrite provision launch ship bounce
    recycle silence snooze dismiss ignore reopen enqueue drain evict remember memorize forget
    kick text email ping dm page clean roll shut tear
    """.split()  # noqa: SIM905
)
# Verbs whose object decides: "run a query" reads, "run a container" writes; "select an option"
# changes a form, "select rows" reads. A tool or a request opened by one says nothing (`open` is
# read by `query_intent` from the word after it).
NEUTRAL_VERBS: frozenset[str] = frozenset(
    """
    run execute invoke open give pull log wait take bring ask convert forward select
    """.split()  # noqa: SIM905
)
# Words that open a question about the state of things.
INTERROGATIVES: frozenset[str] = frozenset(
    """
    what which who whom whose when where why how is are was were does did do any has have
    whats
    """.split()  # noqa: SIM905
)
# Words a request may start with before its verb or question word.
LEAD_INS: frozenset[str] = frozenset(
    """
    please can could would will you i we want need needs to let lets go id like help me kindly
    just quickly now actually also ok okay hey so then first im
    """.split()  # noqa: SIM905
)
# Question openings that ask how to do something: the verb after them decides.
_HOW_TO = re.compile(r"\bhow (?:do|can|should|would) (?:i|we|you)\b|\bhow to\b")
# "open a PR" / "open a new ticket" creates; "open the email", "open README.md" reads.
_OPEN_NEW = re.compile(r"\bopen\s+(?:a|an|new)\s")
_OPEN_OLD = re.compile(r"\bopen\b(?!\s+(?:a|an|new)\s)")
# "give me …", "tell me …" ask to be shown something.
_GIVE_ME = re.compile(r"\b(?:give|tell|get)\s+me\b")
_CLAUSE = re.compile(r"[,;?.!]+|\b(?:and|then|but)\b")
_WORD = re.compile(r"[a-z][a-z0-9']*")
_NAME_WORD = re.compile(r"[a-z]+")


def _verb(word: str) -> Action:
    """The class of a word as written (`Changes`, a noun, is not the verb `change`)."""
    if word in WRITE_VERBS:
        return Action.WRITE
    if word in READ_VERBS:
        return Action.READ
    return Action.NONE


def _first_word(text: str) -> str:
    match = _NAME_WORD.search(text.lower())
    return match.group(0) if match else ""


@lru_cache(maxsize=4096)
def tool_action(name: str, brief: str, description: str = "") -> Action:
    """A tool's action class (see the module contract)."""
    for word in _NAME_WORD.findall(name.lower()):
        action = _verb(word)
        if action is not Action.NONE:
            return action
    openers = [_first_word(description), _first_word(brief)]
    for word in openers:
        action = _verb(word)
        if action is not Action.NONE:
            return action
    if any(word in NEUTRAL_VERBS for word in openers):
        return Action.NONE
    return Action.READ


def _clause_intent(raw: list[str]) -> Action:
    """What the word opening one clause asks, after its lead-ins."""
    words = [w.split("'")[0] for w in raw]  # `what's` is `what`, `i'd` is `i`
    i = 0
    while i < len(words) and words[i] in LEAD_INS:
        i += 1
    if i == len(words):
        return Action.NONE
    word = words[i]
    if word in INTERROGATIVES:
        return Action.READ
    if word in NEUTRAL_VERBS:
        return Action.NONE
    return _verb(word)


def query_intent(query: str) -> Action:
    """A request's intent (see the module contract)."""
    text = _HOW_TO.sub(" ", query.lower())
    text = _OPEN_NEW.sub(" create ", _OPEN_OLD.sub(" show ", _GIVE_ME.sub(" show ", text)))
    seen = {
        action
        for clause in _CLAUSE.split(text)
        if (action := _clause_intent(_WORD.findall(clause))) is not Action.NONE
    }
    return seen.pop() if len(seen) == 1 else Action.NONE


def mismatch(intent: Action, action: Action) -> bool:
    """True when a request's intent and a tool's action class are both known and differ."""
    return Action.NONE not in (intent, action) and intent is not action
