"""Prefix rules and their deterministic matching.

Guarantees:
- A `PrefixRule` matches an argv when its prefix tokens equal the argv's first tokens, compared
  token by token after tokenising — never as text.
- Conflicts resolve the same way every time: the longer prefix wins; at the same length the stricter
  verdict wins; at the same verdict the smallest name wins.
- A word only known at run time (`None`) equals no rule token. When such a word (or arguments an
  `xargs` appends) could still make a stricter rule match, an allow becomes a prompt (AMBIGUOUS).
- A path-qualified command (`/bin/rm`, `./ls`) is matched exactly first; failing that, by its
  basename — where an allow is capped at prompt (PATH), because `./ls` is not the `ls` the rule
  meant, while `/bin/rm -rf` is still the `rm -rf` a forbid rule meant.
- A rule that restricts (forbidden, prompt) also matches by meaning (`meaning.covers`): `rm -r
  --force -- //` is `rm -rf /`, and so is `rm -rf /usr/.. other`. A meaning match stricter than
  the spelling's answer wins, unless a looser rule matched by spelling is longer and names each
  of its operands itself (a deliberate carve-out: allow `git push --force origin feature` under
  forbidden `git push --force`). An allow rule matches by spelling only: a respelling of an
  allowed command is asked about, never allowed by a rule it does not spell.
- When a run-time word could make a forbidden rule match (by spelling or by meaning), the command
  carries an UNCHECKABLE signal: nobody can tell before it runs whether it is forbidden
  (docs/adr/0031-run-time-words-are-not-auto-approved.md). So does a command whose words spell a
  forbidden one — as their tail (`strace rm -rf /`), as one word (`script -c 'rm -rf /'`) or as
  a string quoted inside one (`python3 -c 'os.system("rm -rf /")'`) — unless it only prints or
  searches them (`echo`, `printf`, `grep`): a program cmdpolicy does not know may run it.
Refuses: a malformed rule (`PolicyError`) — empty name or prefix, non-string or NUL-bearing tokens,
a verdict that is not a `Permission`.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from yagent.kernel.confine.cmdpolicy import meaning, operands
from yagent.kernel.confine.cmdpolicy.errors import PolicyError
from yagent.kernel.confine.cmdpolicy.model import Arg, Permission, Signal, SignalKind, basename

_NO, _DEFINITE, _POSSIBLE = operands.NO, operands.DEFINITE, operands.POSSIBLE
_QUOTED = re.compile(r"""(["'`])(.+?)\1""")
# commands that only print or search their words: a forbidden command among them is text
_PRINTERS = frozenset({"echo", "printf", "true", "false", ":", "grep", "egrep", "fgrep", "rg"})


@dataclass(frozen=True, slots=True)
class PrefixRule:
    """A token-prefix rule with its own examples, checked when a `Policy` is built."""

    name: str
    prefix: tuple[str, ...]
    verdict: Permission
    match: tuple[str, ...] = ()
    not_match: tuple[str, ...] = ()
    justification: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise PolicyError(f"rule name must be a non-empty string, got {self.name!r}")
        for attr in ("prefix", "match", "not_match"):
            value = getattr(self, attr)
            if isinstance(value, str) or not isinstance(value, Iterable):
                raise PolicyError(f"rule {self.name!r}: {attr} must be a sequence of strings")
            items = tuple(value)
            if not all(isinstance(item, str) for item in items):
                raise PolicyError(f"rule {self.name!r}: {attr} must hold only strings")
            object.__setattr__(self, attr, items)
        if not self.prefix:
            raise PolicyError(f"rule {self.name!r}: empty prefix")
        if any(not token or "\x00" in token for token in self.prefix):
            raise PolicyError(f"rule {self.name!r}: empty or NUL-bearing prefix token")
        if not isinstance(self.verdict, Permission):
            raise PolicyError(f"rule {self.name!r}: verdict must be a Permission")
        if not isinstance(self.justification, str):
            raise PolicyError(f"rule {self.name!r}: justification must be a string")

    @property
    def order(self) -> tuple[int, int, str]:
        """Sort key: longer prefix, then stricter verdict, then smaller name first."""
        return (-len(self.prefix), -self.verdict.strictness, self.name)

    def fits(self, values: Sequence[str | None], open_tail: bool = False) -> int:
        """_DEFINITE, _POSSIBLE (only with run-time words) or _NO."""
        if len(self.prefix) > len(values) and not open_tail:
            return _NO
        possible = len(self.prefix) > len(values)
        for token, value in zip(self.prefix, values, strict=False):
            if value is None:
                possible = True
            elif value != token:
                return _NO
        return _POSSIBLE if possible else _DEFINITE


@dataclass(frozen=True, slots=True)
class PrefixMatch:
    """The pure prefix answer for one argv: the decision and the rule that gave it (if any)."""

    decision: Permission
    rule: PrefixRule | None


class RuleIndex:
    """Rules grouped by their first token, each group in resolution order; the restricting
    rules (forbidden, prompt) also as meanings, strictest first."""

    __slots__ = ("_by_head", "_heads", "_mention", "_restricting")

    def __init__(self, rules: Iterable[PrefixRule]) -> None:
        by_head: dict[str, list[PrefixRule]] = {}
        given = tuple(rules)
        for rule in given:
            by_head.setdefault(rule.prefix[0], []).append(rule)
        self._by_head = {
            head: tuple(sorted(g, key=lambda r: r.order)) for head, g in by_head.items()
        }
        strict_first = sorted(
            (r for r in given if r.verdict is not Permission.ALLOW),
            key=lambda r: (-r.verdict.strictness, -len(r.prefix), r.name),
        )
        self._restricting = tuple(
            (r, meaning.read(tuple(Arg.of(t) for t in r.prefix))) for r in strict_first
        )
        # the programs a forbidden command embedded in another's words may start with, and a
        # cheap look for their names in a word before it is read as a command
        self._heads = frozenset(m.program.split()[0] for _, m in self._restricting) | {"find"}
        self._heads |= meaning.WRITERS
        names = "|".join(sorted(map(re.escape, self._heads)))
        self._mention = re.compile(rf"(?:^|[^\w.-])(?:{names})(?![\w-])") if names else None

    def has_head(self, head: str) -> bool:
        return head in self._by_head or basename(head) in self._by_head

    def best(self, values: Sequence[str | None], open_tail: bool = False) -> PrefixRule | None:
        """The winning definite match among the rules sharing `values[0]`."""
        head = values[0] if values else None
        if head is None:
            return None
        for rule in self._by_head.get(head, ()):
            if rule.fits(values, open_tail) == _DEFINITE:
                return rule
        return None

    def judge(
        self,
        values: Sequence[str | None],
        open_tail: bool,
        default: Permission,
        words: Sequence[Arg] = (),
        where: operands.Where = operands.NOWHERE,
    ) -> tuple[Permission, PrefixRule | None, tuple[Signal, ...]]:
        """Permission, deciding rule and signals for one argv whose first word is static;
        `words` are its words as read (globs, `$HOME`), when the caller has them; `where` says
        where it runs (see `operands.Where`)."""
        head = values[0]
        assert head is not None
        rule = self.best(values, open_tail)
        group = head
        signals: list[Signal] = []
        if rule is None and "/" in head and basename(head):
            group = basename(head)
            rule = self.best((group, *values[1:]), open_tail)
        decision = default if rule is None else rule.verdict
        if rule is not None and group != head and decision is Permission.ALLOW:
            decision = Permission.PROMPT
            signals.append(
                Signal(SignalKind.PATH, f"{head} is not allowed by basename rule {rule.name!r}")
            )
        read = tuple(words) or tuple(Arg(v, "$…" if v is None else v) for v in values)
        if meaning.program_of(head) in self._heads:  # some restricting rule may concern it
            meant = meaning.read(read, open_tail)
            concerned = self._concerning(meant)
            found: dict[str, int] = {}  # each rule's `covers` (above=True), asked once
            stricter = self._meant(meant, concerned, rule, decision, where, found)
            if stricter is not None:
                decision, rule = stricter.verdict, stricter
            possible = [
                other
                for other, other_meaning in concerned
                if other.verdict.strictness > decision.strictness
                and _covers_once(found, other, other_meaning, meant, where) == _POSSIBLE
            ]
            if possible:
                decision = Permission.strictest(decision, Permission.PROMPT)
                signals.extend(_possible(possible))
        if decision is not Permission.FORBIDDEN and basename(head) not in _PRINTERS:
            embedded = self._embedded(read, open_tail, where)
            if embedded is not None:
                decision = Permission.strictest(decision, Permission.PROMPT)
                signals.append(embedded)
        return decision, rule, tuple(signals)

    def _embedded(
        self, words: Sequence[Arg], open_tail: bool, where: operands.Where
    ) -> Signal | None:
        """A forbidden command spelled inside another one's words — as its tail (`strace rm -rf
        /`, `chroot / rm -rf /`) or as one word (`script -c 'rm -rf /'`, `ssh h 'rm -rf /'`):
        a program yagent does not know may run it."""
        mention = self._mention
        for i in range(1, len(words)):
            word = words[i].value
            if not word or mention is None or mention.search(word) is None:
                continue
            tails: list[tuple[Arg, ...]] = []
            if meaning.program_of(word) in self._heads:
                tails.append(tuple(words[i:]))
            # the word as a command line, and each string quoted inside it (interpreter code:
            # `python3 -c 'os.system("rm -rf /")'`, `perl -e`, `awk 'BEGIN{system(…)}'`)
            for text in (word, *(m.group(2) for m in _QUOTED.finditer(word))):
                if " " not in text:
                    continue
                with contextlib.suppress(ValueError):
                    tokens = shlex.split(text.lstrip("!"))  # vim's and git aliases' `!cmd`
                    if tokens and meaning.program_of(tokens[0]) in self._heads:
                        tails.append(tuple(Arg.of(t) for t in tokens))
            for tail in tails:
                meant = meaning.read(tail, open_tail)
                for rule, rule_meaning in self._concerning(meant):
                    found = meaning.covers(rule_meaning, meant, where=where)
                    if rule.verdict is Permission.FORBIDDEN and found != _NO:
                        return Signal(
                            SignalKind.UNCHECKABLE,
                            f"{basename(words[0].value or '')} may run {meant.shown()!r}, "
                            f"which forbidden rule {rule.name!r} names",
                        )
        return None

    def _concerning(self, meant: meaning.Meaning) -> list[tuple[PrefixRule, meaning.Meaning]]:
        """The restricting rules written for the program(s) `meant` runs (strictest first)."""
        programs = {meant.program, *(a.program for a in meant.also)}
        if "git ?" in programs:
            return [(r, m) for r, m in self._restricting if m.program.split()[0] == "git"]
        return [(r, m) for r, m in self._restricting if m.program in programs]

    def _meant(
        self,
        meant: meaning.Meaning,
        concerned: list[tuple[PrefixRule, meaning.Meaning]],
        spelled: PrefixRule | None,
        decision: Permission,
        where: operands.Where,
        found: dict[str, int],
    ) -> PrefixRule | None:
        """The strictest restricting rule `meant` definitely falls under, when it beats the
        spelling's answer (see the module contract for the carve-out)."""
        deletes = any(m.table is not None and m.table.deletes for m in (meant, *meant.also))
        for above in (False, True) if deletes else (True,):  # the very path is the better name
            for rule, rule_meaning in concerned:
                if rule.verdict.strictness <= decision.strictness:
                    break
                if above:
                    covered = _covers_once(found, rule, rule_meaning, meant, where)
                else:
                    covered = meaning.covers(rule_meaning, meant, above=False, where=where)
                if covered != _DEFINITE:
                    continue
                if spelled is not None and _narrower(spelled, rule):
                    words = meaning.read(tuple(map(Arg.of, spelled.prefix)))
                    if all(
                        o.shown in {w.shown for w in words.operands} for o in rule_meaning.operands
                    ):
                        continue
                return rule
        return None


def _covers_once(
    found: dict[str, int],
    rule: PrefixRule,
    rule_meaning: meaning.Meaning,
    meant: meaning.Meaning,
    where: operands.Where,
) -> int:
    """`meaning.covers(rule_meaning, meant, where=where)`, kept in `found` by the rule's name."""
    if rule.name not in found:
        found[rule.name] = meaning.covers(rule_meaning, meant, where=where)
    return found[rule.name]


def _narrower(spelled: PrefixRule, rule: PrefixRule) -> bool:
    """`spelled` is written for fewer commands than `rule`: longer, or naming the program by a
    path where `rule` names it bare (`/usr/bin/ls` under `ls`)."""
    head, other = spelled.prefix[0], rule.prefix[0]
    return len(spelled.prefix) > len(rule.prefix) or (head != other and "/" in head)


def _possible(rules: list[PrefixRule]) -> list[Signal]:
    """One signal per kind: forbidden rules a run-time word may make match (UNCHECKABLE), and
    prompt rules it may make match where the spelling's answer was allow (AMBIGUOUS)."""
    out: list[Signal] = []
    forbidden = [r.name for r in rules if r.verdict is Permission.FORBIDDEN]
    if forbidden:
        named = ", ".join(repr(n) for n in forbidden)
        out.append(
            Signal(
                SignalKind.UNCHECKABLE,
                f"a word known only at run time may make forbidden rule {named} match",
            )
        )
    others = [r.name for r in rules if r.verdict is not Permission.FORBIDDEN]
    if others:
        out.append(Signal(SignalKind.AMBIGUOUS, f"run-time arguments may match rule {others[0]!r}"))
    return out
