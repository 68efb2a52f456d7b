"""A `Policy`: rules, a default for unmatched commands, and the environment steering list.

Guarantees:
- Building a policy runs every rule's `match` and `not_match` examples through `decide_command` —
  the real decision path, AST facts included. A `match` example must be decided by its rule with
  the rule's verdict (or get that verdict from another rule while this one, judged alone, also
  decides it — two forbidden rules may both name `rm -rf /*`); a `not_match` example must not
  be decided by it. Any disagreement, or an example that cannot be judged, is a
  `RuleExampleError` naming the rule and the example: a rule that was never seen to fire is not
  trusted to fire. A host may say a rule set's examples were
  checked already (`check_examples=False`: its own built-in rules, which its tests check — the
  check parses every example, which is what a host's start-up would otherwise pay for each
  time: docs/adr/0029-built-in-rule-examples-checked-by-tests.md); rules added later
  (`with_rules`) are checked with the rest.
- The default for unmatched commands is prompt; it may be set to forbidden, never to allow (an
  allow-by-default guard is a deny-list, which prefix rules cannot make safe).
- `from_mapping` / `from_toml` read a plain document and reject unknown keys by name.
- `decide(argv)` is the pure prefix answer (no AST facts) for hosts that hold an argv already.
Leaves to the host: where rules come from (project / user config) and persisting new ones.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from yagent.kernel.confine.cmdpolicy.decide import RuleBook, Verdict, decide_command
from yagent.kernel.confine.cmdpolicy.errors import PolicyError, RuleExampleError, UnjudgeableError
from yagent.kernel.confine.cmdpolicy.model import Arg, Permission, Signal
from yagent.kernel.confine.cmdpolicy.operands import NOWHERE, Where
from yagent.kernel.confine.cmdpolicy.rules import PrefixMatch, PrefixRule, RuleIndex
from yagent.kernel.confine.cmdpolicy.tokens import scan

# Variables that change which program a command runs or what code it loads. Assigning one — as a
# prefix, standalone, via export/declare, as a `for` variable, or through env/sudo — floors the
# verdict at prompt: `PATH=/tmp git status` is not the `git status` an allow rule meant.
DEFAULT_STEERING_ENV: tuple[str, ...] = (
    "PATH", "LD_*", "DYLD_*", "BASH_ENV", "ENV", "BASH_FUNC_*", "SHELLOPTS", "BASHOPTS", "PS4",
    "PROMPT_COMMAND", "IFS", "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "SHELL", "GIT_*",
    "*PAGER", "*EDITOR", "VISUAL", "*_COMMAND", "*ASKPASS", "PYTHON*", "PERL*", "RUBY*",
    "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
    "CLASSPATH", "LESSOPEN", "LESSCLOSE", "BROWSER", "npm_config_*", "NPM_CONFIG_*",
)  # fmt: skip

_TOP_KEYS = frozenset({"default", "rules", "steering_env"})
_RULE_KEYS = frozenset({"name", "prefix", "verdict", "match", "not_match", "justification"})


class Policy:
    """An immutable, example-checked rule set."""

    __slots__ = ("_default", "_index", "_rules", "_steering")

    def __init__(
        self,
        rules: Iterable[PrefixRule],
        *,
        default: Permission = Permission.PROMPT,
        steering_env: Iterable[str] = DEFAULT_STEERING_ENV,
        check_examples: bool = True,
    ) -> None:
        if not isinstance(default, Permission):
            raise PolicyError(f"default must be a Permission, got {default!r}")
        if default is Permission.ALLOW:
            raise PolicyError(
                "default must be prompt or forbidden: an allow default is a deny-list"
            )
        given = tuple(rules)
        for rule in given:
            if not isinstance(rule, PrefixRule):
                raise PolicyError(f"not a PrefixRule: {rule!r}")
        ordered = tuple(sorted(given, key=lambda r: r.name))
        names = [r.name for r in ordered]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise PolicyError(f"duplicate rule names: {dupes}")
        patterns = tuple(steering_env)
        if not all(isinstance(p, str) and p for p in patterns):
            raise PolicyError("steering_env must hold non-empty strings")
        self._rules = ordered
        self._index = RuleIndex(ordered)
        self._default = default
        self._steering = patterns
        if check_examples:
            self._check_examples()

    @property
    def rules(self) -> tuple[PrefixRule, ...]:
        return self._rules

    @property
    def default(self) -> Permission:
        return self._default

    @property
    def steering_env(self) -> tuple[str, ...]:
        return self._steering

    def decide(self, argv: Sequence[str]) -> PrefixMatch:
        """Pure prefix decision for a static argv: no AST facts, no wrappers, no floors."""
        rule = self._index.best(tuple(argv))
        return PrefixMatch(self._default if rule is None else rule.verdict, rule)

    def judge_args(
        self,
        values: Sequence[str | None],
        open_tail: bool = False,
        words: Sequence[Arg] = (),
        where: Where = NOWHERE,
    ) -> tuple[Permission, PrefixRule | None, tuple[Signal, ...]]:
        """One command's decision with run-time words taken into account (first word static);
        `words`, when given, are the same words as read (globs and `$HOME` for meanings), and
        `where` where it runs (`meaning.Where`)."""
        return self._index.judge(values, open_tail, self._default, words, where)

    def names(self, head: str) -> bool:
        """Whether some rule is written for the command `head` (exactly or by basename)."""
        return self._index.has_head(head)

    def is_steering(self, variable: str) -> bool:
        return any(fnmatch.fnmatchcase(variable, p) for p in self._steering)

    def with_rules(self, *rules: PrefixRule) -> Policy:
        """A new policy with `rules` added (examples checked again); this one is unchanged."""
        return Policy((*self._rules, *rules), default=self._default, steering_env=self._steering)

    def _check_examples(self) -> None:
        for rule in self._rules:
            for example in rule.match:
                verdict = self._judge_example(rule, example)
                decided = any(r.name == rule.name for r in verdict.rules) or (
                    verdict.decision is rule.verdict and self._fires_alone(rule, example)
                )
                if not decided or verdict.decision is not rule.verdict:
                    by = ", ".join(r.name for r in verdict.rules) or "no rule"
                    raise RuleExampleError(
                        rule.name, example, f"is decided {verdict.decision.value} by {by}"
                    )
            for example in rule.not_match:
                verdict = self._judge_example(rule, example)
                if any(r.name == rule.name for r in verdict.rules):
                    raise RuleExampleError(rule.name, example, "is decided by it (not_match)")

    def _fires_alone(self, rule: PrefixRule, example: str) -> bool:
        """Whether `rule` on its own decides `example` (another rule of the same verdict may
        decide it first: `rm -rf /*` under both `rm -rf` and `rm -rf /`)."""
        alone = _Alone(rule, self)
        return any(r.name == rule.name for r in self._judge_example(rule, example, alone).rules)

    def _judge_example(
        self, rule: PrefixRule, example: str, book: RuleBook | None = None
    ) -> Verdict:
        try:
            return decide_command(self if book is None else book, example)
        except UnjudgeableError as exc:
            raise RuleExampleError(rule.name, example, f"cannot be judged: {exc.reason}") from exc

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, check_examples: bool = True) -> Policy:
        """A policy from a plain document (the shape TOML / YAML / JSON give)."""
        if not isinstance(data, Mapping):
            raise PolicyError(f"a policy document must be a mapping, got {type(data).__name__}")
        _no_unknown(data, _TOP_KEYS, "policy")
        raw_rules = data.get("rules", [])
        if isinstance(raw_rules, Mapping):
            raw_rules = [{"name": k, **_table(v, f"rule {k!r}")} for k, v in raw_rules.items()]
        if isinstance(raw_rules, str) or not isinstance(raw_rules, Sequence):
            raise PolicyError("rules must be a list of tables (or a table of tables)")
        rules = [_rule_from(_table(item, "rule")) for item in raw_rules]
        default = _decision(data.get("default", "prompt"), "default")
        steering = data.get("steering_env", DEFAULT_STEERING_ENV)
        if isinstance(steering, str) or not isinstance(steering, Sequence):
            raise PolicyError("steering_env must be a list of strings")
        return cls(rules, default=default, steering_env=steering, check_examples=check_examples)

    @classmethod
    def from_toml(cls, text: str) -> Policy:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PolicyError(f"policy TOML: {exc}") from exc
        return cls.from_mapping(data)


class _Alone:
    """One rule on its own, with its policy's default, wrappers and steering list."""

    __slots__ = ("_index", "_policy")

    def __init__(self, rule: PrefixRule, policy: Policy) -> None:
        self._index = RuleIndex((rule,))
        self._policy = policy

    @property
    def default(self) -> Permission:
        return self._policy.default

    def judge_args(
        self,
        values: Sequence[str | None],
        open_tail: bool = False,
        words: Sequence[Arg] = (),
        where: Where = NOWHERE,
    ) -> tuple[Permission, PrefixRule | None, tuple[Signal, ...]]:
        return self._index.judge(values, open_tail, self._policy.default, words, where)

    def names(self, head: str) -> bool:
        return self._policy.names(head)

    def is_steering(self, variable: str) -> bool:
        return self._policy.is_steering(variable)


def _no_unknown(data: Mapping[str, Any], known: frozenset[str], what: str) -> None:
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise PolicyError(f"{what}: unknown key(s) {unknown}; known: {sorted(known)}")


def _table(item: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise PolicyError(f"{what} must be a table, got {type(item).__name__}")
    return item


def _decision(value: Any, what: str) -> Permission:
    try:
        return Permission(value)
    except ValueError:
        choices = [d.value for d in Permission]
        raise PolicyError(f"{what}: {value!r} is not one of {choices}") from None


def _rule_from(item: Mapping[str, Any]) -> PrefixRule:
    name = item.get("name")
    what = f"rule {name!r}"
    if not isinstance(name, str):
        raise PolicyError(f"{what}: name must be a string")
    _no_unknown(item, _RULE_KEYS, what)
    for key in ("prefix", "verdict"):
        if key not in item:
            raise PolicyError(f"{what}: missing {key!r}")
    prefix = item["prefix"]
    if isinstance(prefix, str):
        tokens = scan(prefix)
        if any(t.operator for t in tokens):
            raise PolicyError(f"{what}: prefix {prefix!r} holds a shell operator")
        prefix = tuple(t.text for t in tokens)
    examples = {k: item.get(k, ()) for k in ("match", "not_match")}
    for key, value in examples.items():
        examples[key] = (value,) if isinstance(value, str) else value
    return PrefixRule(
        name=name,
        prefix=prefix,
        verdict=_decision(item["verdict"], f"{what} verdict"),
        match=examples["match"],
        not_match=examples["not_match"],
        justification=item.get("justification", ""),
    )
