"""cmdpolicy value types shared by the tokeniser, the AST walk, the wrappers and the decision.

`Permission` is the three-valued verdict (allow < prompt < forbidden, ordered by strictness; it maps
onto `invoke.Decision` with forbidden → deny). `Arg` is one shell word as the AST sees it: its
literal value when the word is fully static, `None` when bash would only know it at run time.
`Signal` is a fact that prefix rules cannot see (a write redirection, a dynamic expansion…); every
signal raises the line's floor to prompt. An UNCHECKABLE one also says that the forbidden rules
cannot be checked before run time (docs/adr/0031-run-time-words-are-not-auto-approved.md).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from yagent.kernel.confine.cmdpolicy.expand import Field, unread
from yagent.kernel.judge import invoke


class Permission(enum.StrEnum):
    ALLOW = "allow"
    PROMPT = "prompt"
    FORBIDDEN = "forbidden"

    @property
    def strictness(self) -> int:
        return _STRICTNESS[self]

    def to_invoke(self) -> invoke.Decision:
        """The same verdict in the judgement ring's vocabulary (forbidden is a deny)."""
        return _TO_INVOKE[self]

    @staticmethod
    def strictest(*decisions: Permission) -> Permission:
        return max(decisions, key=lambda d: _STRICTNESS[d])


_STRICTNESS = {Permission.ALLOW: 0, Permission.PROMPT: 1, Permission.FORBIDDEN: 2}
_TO_INVOKE = {
    Permission.ALLOW: invoke.Decision.ALLOW,
    Permission.PROMPT: invoke.Decision.PROMPT,
    Permission.FORBIDDEN: invoke.Decision.DENY,
}


@dataclass(frozen=True, slots=True)
class Arg:
    """One word of a command: `value` is None when it is not knowable before run time.

    `fields` are what bash makes of the word (see `expand`); a word read from the line carries
    them, a synthetic one (`Arg.of`) is its own single field.
    """

    value: str | None
    source: str
    fields: tuple[Field, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, value: str) -> Arg:
        return cls(value, value)

    @property
    def shown(self) -> str:
        return self.source if self.value is None else self.value

    @property
    def expanded(self) -> tuple[Field, ...]:
        if self.fields:
            return self.fields
        return (unread(self.source),) if self.value is None else (Field(self.value),)


def basename(word: str) -> str:
    """The command name a path-qualified word runs (`/usr/bin/git` → `git`); the one rule for it."""
    return word.rstrip("/").rsplit("/", 1)[-1]


class SignalKind(enum.StrEnum):
    WRITE = "write"  # a redirection (or option) that writes a file
    DYNAMIC = "dynamic"  # code or a command name only known at run time
    PRIVILEGE = "privilege"  # sudo / doas / su: runs as someone else
    STEERING = "steering"  # an environment variable that changes what a command runs
    CONFIG = "config"  # a per-invocation configuration override (git -c …)
    PATH = "path"  # a path-qualified command matched by its basename
    AMBIGUOUS = "ambiguous"  # a run-time argument could make a stricter rule match
    OPAQUE = "opaque"  # something not read exactly: unknown wrapper option, bare CR
    # a command name, code, or a word a forbidden rule names is known only at run time: whether
    # the line is forbidden cannot be told before it runs (no standing permission answers it)
    UNCHECKABLE = "uncheckable"


@dataclass(frozen=True, slots=True)
class Signal:
    """A fact the prefix rules cannot see; it floors the verdict at prompt."""

    kind: SignalKind
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Stdin:
    """The heredoc / here-string bodies a command reads on stdin (None: not static text)."""

    scripts: tuple[str | None, ...] = ()


NO_STDIN = Stdin()
