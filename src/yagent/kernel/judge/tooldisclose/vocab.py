"""vocab: the general developer vocabulary tool search reads a request with.

Contract:
- `SAME` lists words and phrases a developer uses interchangeably (abbreviations, spellings:
  `PR` / `pull request`, `k8s` / `kubernetes`, `repo` / `repository`); `RELATED` lists families
  of words that ask for the same action or name the same kind of thing (`delete` / `remove` /
  `drop`, `bug` / `issue` / `ticket`). Both are general English and developer usage, written by
  hand for any catalog: no tool name, no server name beyond the common abbreviations of a few
  platforms, nothing taken from a benchmark's queries.
- `Vocabulary.expand(words)` takes a query's analysed words (`bm25.words`) and returns one group
  per concept: each query word with weight 1.0, joined by the other members of every family one
  of its phrases belongs to — at `SAME_WEIGHT` for `SAME`, at `RELATED_WEIGHT` for `RELATED`.
  A one-word alternative joins the group of the phrase's head (last) word; a multi-word `SAME`
  alternative adds each of its words as a group of its own (`PR` → `pull`, `request`), a
  multi-word `RELATED` one adds nothing (`run` ~ "kick off" would add `off`). Phrases are matched
  on analysed words, longest first, so `pull requests` and `Pull-Request` match `pull request`.
- `Vocabulary.read(query, known)` is what the index calls: it reads the raw text with `phrasing`
  first (URLs, file names, identifiers, idioms, verb senses), then `owner/name` slugs
  (one slash between two plain names, no file extension: `acme/web`, `torvalds/linux`) as a
  repository — the way developers name one — when the catalog does not know the owner's word:
  the slug's words are values, not concepts, so they are dropped and a `repository` concept is
  added at `RELATED_WEIGHT`. A slug whose first part the catalog knows (`deployment/api`,
  `kubernetes/kubernetes`) is read as its words. Then it analyses the rest and calls `expand`.
  A `STATE_WORDS` word (`open`, `closed`, `merged`, `resolved`) is a verb when it opens the
  request (after lead-ins such as "please", "can you") and a state anywhere else ("show open
  PRs"): read as a state, its group also holds `state` at `RELATED_WEIGHT`, the word tools that
  filter by state use. A participle after a copula ("pods are crashlooping", "still running") is
  a state too: its group also holds `status` and `state` at `RELATED_WEIGHT`. The concepts the
  raw text implies (`file`, `code`, and `repository` for a slug) join as groups of their own at
  `RELATED_WEIGHT`, unless a query word already stands for them.
- Expansion is query-side only and deterministic; the groups say nothing about whether the
  catalog holds a word (`bm25.Index` drops the ones it does not).
What a match is worth (BM25, field weights) is `bm25`'s and `catalog`'s business.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from yagent.kernel.judge.tooldisclose.bm25 import Analyser
from yagent.kernel.judge.tooldisclose.intent import LEAD_INS
from yagent.kernel.judge.tooldisclose.phrasing import mark

Group = dict[str, float]

# Interchangeable spellings: a match on one is a match on the other.
SAME: tuple[tuple[str, ...], ...] = (
    ("pr", "pull request"),
    ("mr", "merge request"),
    ("k8s", "kubernetes", "kube"),
    ("repo", "repository"),
    ("db", "database"),
    ("dir", "directory", "folder"),
    ("env", "environment"),
    ("env var", "environment variable"),
    ("config", "configuration"),
    ("vm", "virtual machine"),
    ("msg", "message"),
    ("ack", "acknowledge"),
    ("ttl", "time to live"),
    ("ci", "continuous integration"),
    ("doc", "document"),
    ("docs", "documentation"),
    ("auth", "authentication"),
    ("creds", "credentials"),
    ("perms", "permissions"),
    ("stats", "statistics"),
    ("deps", "dependencies"),
    ("vuln", "vulnerability"),
    ("ns", "namespace"),
    ("svc", "service"),
    ("mem", "memory"),
    ("tz", "time zone", "timezone"),
    ("regex", "regular expression"),
    ("dm", "direct message"),
    ("info", "information"),
    ("img", "image"),
    ("pkg", "package"),
    ("email", "mail"),
    ("sms", "text message"),
    ("url", "link"),
    ("ls", "list"),
    ("rm", "delete"),
    ("mv", "move"),
    ("cp", "copy"),
    ("mkdir", "make directory"),
    ("app", "application"),
    ("cert", "certificate"),
    ("tls", "ssl"),
)

# Words that ask for the same action or name the same kind of thing in a developer's request.
RELATED: tuple[tuple[str, ...], ...] = (
    ("delete", "remove", "drop", "erase", "destroy", "wipe", "discard", "tear down", "nuke"),
    ("create", "add", "new", "insert", "provision"),
    ("update", "edit", "change", "modify", "alter", "amend"),
    ("run", "execute", "invoke", "trigger", "launch", "kick off"),
    ("start", "boot", "spin up"),
    ("stop", "halt", "shut down", "shutdown"),
    ("kill", "terminate", "cancel", "abort", "stop"),
    ("restart", "reboot", "bounce", "recycle"),
    ("send", "post", "deliver", "notify"),
    ("search", "find", "look up", "lookup", "look for", "locate", "grep"),
    ("list", "enumerate"),
    ("read", "view", "see", "display", "inspect"),
    ("download", "fetch", "retrieve", "grab"),
    ("upload", "attach"),
    ("write", "save", "store"),
    ("overwrite", "replace"),
    ("rename", "move"),
    ("copy", "duplicate", "clone"),
    ("undo", "revert", "roll back", "rollback"),
    ("approve", "accept", "sign off"),
    ("comment", "reply", "respond", "note", "remark"),
    ("close", "resolve"),
    ("mute", "silence", "snooze"),
    ("deploy", "ship", "roll out"),
    ("validate", "verify", "lint", "check"),
    ("monitor", "watch", "observe"),
    ("schedule", "book"),
    ("preview", "dry run"),
    ("count", "how many", "number of"),
    ("diff", "difference", "compare", "patch"),
    ("changed", "modified", "touched", "edited"),
    ("bug", "issue", "ticket", "defect"),
    ("create issue", "file bug", "report bug", "raise issue"),
    ("error", "exception", "crash", "failure", "fail", "broken"),
    ("vm", "machine", "box", "instance"),
    ("user", "member", "people", "person", "username", "account"),
    ("aggregate", "group", "sum", "average"),
    ("meeting", "event", "appointment", "standup"),
    ("spreadsheet", "sheet"),
    ("secret", "password", "credential"),
    ("alert", "alarm"),
    ("incident", "outage"),
    ("cost", "spend", "spending", "billing"),
    ("latest", "newest", "most recent"),
    ("free", "available"),
    ("size", "big", "large", "disk space"),
    ("expire", "expiry", "expiration", "ttl"),
    ("remember", "memorize", "memory"),
    ("customer", "client"),
    ("payment", "charge", "transaction"),
    ("invoice", "bill"),
    ("dropdown", "drop-down", "combobox", "select"),
    ("popup", "pop-up", "dialog", "modal"),
    ("click", "press", "tap"),
    ("type", "enter", "input"),
    ("screenshot", "capture"),
    ("navigate", "go to", "visit", "browse"),
    ("web", "internet", "online"),
    ("near", "nearby", "around", "local"),
    ("image", "picture", "photo"),
    ("contents", "inside"),
    ("schema", "structure", "columns", "fields"),
    ("column", "field", "attribute"),
    ("input", "field", "text box", "textbox"),
    ("row", "record", "entry"),
    ("star", "favorite", "bookmark"),
    ("purge", "clear", "flush", "invalidate"),
    ("describe", "details", "inspect"),
    ("label", "tag"),
    ("usage", "utilization", "consumption", "use"),
    ("log", "output", "stdout", "stderr"),
    ("commit", "revision", "sha", "changeset"),
    ("permission", "access", "privilege"),
    ("metric", "timeseries", "time series"),
)

SAME_WEIGHT = 1.0
# What a related word weighs against the word the user typed (a `RELATED` match is a guess).
RELATED_WEIGHT = 0.6
_LONGEST = 3  # words in the longest phrase matched
# `owner/name`: one slash between two plain names, not part of a path or a file name.
_SLUG = re.compile(r"(?<![\w./-])([A-Za-z0-9][\w-]*)/[A-Za-z0-9][\w-]*(?![\w./-])")
REPOSITORY = "repository"
# Words that are a verb when they open a request ("open a PR") and a state anywhere else ("show
# open PRs", "list closed issues"): read as a state, they also stand for `STATE`.
STATE_WORDS = ("open", "closed", "merged", "resolved")
STATE = "state"
# A participle after a copula ("pods are crashlooping", "jobs still failing") is a state: it also
# stands for `STATUS` and `STATE`.
_PARTICIPLE = re.compile(r"\b(?:is|are|was|were|still|currently)\s+(\w+ing)\b", re.IGNORECASE)
STATUS = "status"
_RAW_WORD = re.compile(r"[\w']+")


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Families of phrases, each phrase kept as its analysed words (see the module contract)."""

    analyse: Analyser
    same: Sequence[Sequence[str]] = SAME
    related: Sequence[Sequence[str]] = RELATED
    same_weight: float = SAME_WEIGHT
    related_weight: float = RELATED_WEIGHT
    _links: dict[tuple[str, ...], dict[tuple[str, ...], float]] = field(
        init=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        for families, weight in (
            (self.same, self.same_weight),
            (self.related, self.related_weight),
        ):
            for family in families:
                phrases = [p for p in dict.fromkeys(tuple(self.analyse(m)) for m in family) if p]
                for phrase in phrases:
                    links = self._links.setdefault(phrase, {})
                    for other in phrases:
                        if other != phrase and links.get(other, 0.0) < weight:
                            links[other] = weight

    def related_to(self, phrase: Iterable[str]) -> dict[tuple[str, ...], float]:
        """The phrases one analysed phrase stands for, with their weights (empty when none)."""
        return dict(self._links.get(tuple(phrase), {}))

    def expand(self, words: Sequence[str]) -> list[Group]:
        """One group per concept of the query (see the module contract)."""
        groups: dict[str, Group] = {w: {w: 1.0} for w in words}
        extra: dict[str, float] = {}
        i = 0
        while i < len(words):
            size = next(
                (
                    n
                    for n in range(min(_LONGEST, len(words) - i), 0, -1)
                    if tuple(words[i : i + n]) in self._links
                ),
                0,
            )
            if not size:
                i += 1
                continue
            span = tuple(words[i : i + size])
            for other, weight in self._links[span].items():
                if len(other) == 1:
                    # A one-word alternative stands in for the span's last (head) word.
                    group = groups[span[-1]]
                    group[other[0]] = max(group.get(other[0], 0.0), weight)
                    continue
                if weight < self.same_weight:
                    # A related phrase's words alone ("kick off": `off`) say nothing of it.
                    continue
                for word in other:
                    if word not in groups:
                        extra[word] = max(extra.get(word, 0.0), weight)
            i += size
        merged = {w for group in groups.values() for w in group}
        return [*groups.values(), *({w: v} for w, v in extra.items() if w not in merged)]

    def read(self, query: str, known: Callable[[str], bool]) -> list[Group]:
        """The groups of a raw query: slugs first, then `expand` (see the module contract)."""
        slugs = 0

        def owner_name(match: re.Match[str]) -> str:
            nonlocal slugs
            owner = self.analyse(match.group(1))
            if owner and all(known(w) for w in owner):
                return match.group(0).replace("/", " ")
            slugs += 1
            return " "

        text, marked = mark(query)
        implied = list(marked)
        text = _SLUG.sub(owner_name, text)
        groups = self.expand(self.analyse(text, known))
        lead = next(
            (w for w in _RAW_WORD.findall(text.lower()) if w.split("'")[0] not in LEAD_INS), ""
        )
        states = {w for s in STATE_WORDS if s != lead for w in self.analyse(s)}
        state = self.analyse(STATE)
        for group in groups:
            head = next(iter(group))
            if head in states and group[head] == 1.0:
                for w in state:
                    group[w] = max(group.get(w, 0.0), self.related_weight)
        for match in _PARTICIPLE.finditer(text):
            for w in self.analyse(match.group(1)):
                for group in groups:
                    if next(iter(group)) == w and group[w] == 1.0:
                        for s in self.analyse(f"{STATUS} {STATE}"):
                            group[s] = max(group.get(s, 0.0), self.related_weight)
        if slugs:
            implied.append(REPOSITORY)
        taken = {w for group in groups for w in group}
        for concept in implied:
            for w in self.analyse(concept):
                if w not in taken:
                    groups.append({w: self.related_weight})
                    taken.add(w)
        return groups
