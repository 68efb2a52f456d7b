"""egress: which outbound mode a run needs, and whether what the host gave it honours that mode.

Guarantees:
- Modes `UNRESTRICTED < PROXY < DENIED` (the sandbox vocabulary, zero value loosest). A `Spec`
  is `{mode, allow, bypass}`: `allow` is what the proxy may let through (a declaration handed to
  the enforcer, never a bypass); `bypass` is what goes direct, not through the proxy.
  `Spec.validate()` refuses contradictions (lists without a proxy, a target both allowed and
  bypassed, a bypass of everything, entries that would split or inject in NO_PROXY).
- `env(spec, proxy_url)` produces the six proxy variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and
  their lowercase forms), and NO_PROXY / no_proxy from `bypass` only (empty when there is none,
  so an inherited value is overridden). `verify(spec, env)` is strict: all six present, non-empty
  and identical (and equal to `proxy_url` when given); the bypass list read as the union of
  NO_PROXY and no_proxy and compared as a set (order, case and whitespace drift are not
  violations; an extra or a missing entry is).
- Strength of a verdict: `ADVISORY` (environment variables only — a program can ignore them),
  `DECLARED` (a backend says it enforces the mode: `Enforcer`), `ENFORCED` (a backend measured it:
  `EgressVerifier`, whose measurement beats any claim). A backend that says nothing enforces
  nothing.
Refuses: to fake `DENIED` — `env` and `verify` raise `DeniedError` for it (pretending to deny the
network through variables is worse than saying no); only a backend can satisfy it.
Leaves to the host: the proxy itself, where its URL comes from, and which backend runs the program.
"""

from __future__ import annotations

import enum
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from yagent.kernel.confine.sandbox import EgressEnforcer, EgressMode, egress_of

Mode = EgressMode
Enforcer = EgressEnforcer

PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)
BYPASS_VARIABLES = ("NO_PROXY", "no_proxy")
PROXY_SCHEMES = frozenset({"http", "https", "socks5", "socks5h"})
_FORBIDDEN_IN_ENTRY = frozenset(",;=\"'\\") | frozenset(chr(c) for c in range(33))


class EgressError(Exception):
    """Root of this module's errors."""


class SpecError(EgressError, ValueError):
    """A spec (or a proxy URL) that contradicts itself or cannot be written into variables."""


class DeniedError(EgressError):
    """DENIED cannot be honoured by environment variables; refusing to pretend it can."""

    def __init__(self) -> None:
        super().__init__(
            "egress mode 'denied' cannot be produced or verified through environment variables "
            "(a program can ignore them); only a backend that cuts the network can satisfy it"
        )


class ViolationError(EgressError):
    """The environment does not honour the spec; `problems` lists every deviation."""

    def __init__(self, problems: tuple[str, ...]) -> None:
        super().__init__("egress environment violates the spec: " + "; ".join(problems))
        self.problems = problems


@runtime_checkable
class EgressVerifier(Protocol):
    """A backend that can measure the egress mode it really holds (evidence, not a claim).

    `verify_egress()` returns the mode it proved; it raises when it cannot measure.
    """

    def verify_egress(self) -> Mode: ...


class Strength(enum.IntEnum):
    """How much a satisfied verdict is worth, weakest first."""

    ADVISORY = 1
    DECLARED = 2
    ENFORCED = 3


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a requirement holds, how strongly, and why (`strength` is None when it fails)."""

    satisfied: bool
    strength: Strength | None
    reason: str
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Spec:
    """An egress requirement. The zero value is unrestricted."""

    mode: Mode = Mode.UNRESTRICTED
    allow: tuple[str, ...] = ()
    bypass: tuple[str, ...] = ()

    @classmethod
    def of(cls, mode: Mode | str, allow: Iterable[str] = (), bypass: Iterable[str] = ()) -> Spec:
        """A spec from loose inputs (a mode name, any iterables), validated."""
        spec = cls(Mode.parse(mode), tuple(allow), tuple(bypass))
        spec.validate()
        return spec

    def validate(self) -> None:
        """Raise `SpecError` unless the spec is coherent and writable into proxy variables."""
        if not isinstance(self.mode, Mode):
            raise SpecError(f"unknown egress mode {self.mode!r}")
        for kind, entries in (("allow", self.allow), ("bypass", self.bypass)):
            for entry in entries:
                _check_entry(kind, entry)
        if self.mode is not Mode.PROXY and (self.allow or self.bypass):
            raise SpecError(
                f"egress mode {self.mode.name.lower()!r} has no proxy: allow and bypass lists "
                "would be declarations nothing enforces"
            )
        both = _entries(self.allow) & _entries(self.bypass)
        if both:
            raise SpecError(
                f"targets both allowed through the proxy and bypassing it: {sorted(both)}"
            )
        if "*" in _entries(self.bypass):
            raise SpecError("bypass '*' sends everything direct: that is mode 'unrestricted'")

    @property
    def meaning(self) -> tuple[Mode, frozenset[str], frozenset[str]]:
        """What the spec means, with order, case and whitespace ignored (for equality checks)."""
        return (self.mode, _entries(self.allow), _entries(self.bypass))


def env(spec: Spec, proxy_url: str) -> dict[str, str]:
    """The environment variables that route a program through `proxy_url` as `spec` says.

    UNRESTRICTED needs none (empty mapping); DENIED raises `DeniedError`.
    """
    spec.validate()
    if spec.mode is Mode.DENIED:
        raise DeniedError
    if spec.mode is Mode.UNRESTRICTED:
        return {}
    url = _check_proxy_url(proxy_url)
    values = dict.fromkeys(PROXY_VARIABLES, url)
    values.update(dict.fromkeys(BYPASS_VARIABLES, ",".join(e.strip() for e in spec.bypass)))
    return values


def verify(spec: Spec, environ: Mapping[str, str], proxy_url: str | None = None) -> None:
    """Raise `ViolationError` unless `environ` honours `spec` (strictly; see the module doc)."""
    problems = _problems(spec, environ, proxy_url)
    if problems:
        raise ViolationError(problems)


def verify_verdict(spec: Spec, environ: Mapping[str, str], proxy_url: str | None = None) -> Verdict:
    """`verify` as a verdict: satisfied environments are only ever `ADVISORY`."""
    problems = _problems(spec, environ, proxy_url)
    if problems:
        return Verdict(False, None, "the environment does not honour the spec", problems)
    return Verdict(
        True,
        Strength.ADVISORY,
        "the environment routes through the proxy; programs may still ignore it",
    )


def satisfied_verdict(spec: Spec, backend: object) -> Verdict:
    """Can `backend` hold `spec.mode`? A measurement beats a claim; silence holds nothing."""
    spec.validate()
    if spec.mode is Mode.UNRESTRICTED:
        return Verdict(True, Strength.ENFORCED, "unrestricted egress needs no enforcement")
    wanted = spec.mode.name.lower()
    if isinstance(backend, EgressVerifier):
        try:
            measured = Mode(backend.verify_egress())
        except Exception as exc:  # no evidence is no enforcement: fail closed
            return Verdict(False, None, f"the backend could not prove its egress mode: {exc}")
        if measured >= spec.mode:
            return Verdict(
                True, Strength.ENFORCED, f"the backend measured {measured.name.lower()} egress"
            )
        return Verdict(
            False, None, f"the backend measured {measured.name.lower()} egress, {wanted} is needed"
        )
    claimed = egress_of(backend)
    if not isinstance(backend, Enforcer):
        return Verdict(
            False, None, f"the backend declares no egress enforcement; {wanted} is needed"
        )
    if claimed >= spec.mode:
        return Verdict(
            True, Strength.DECLARED, f"the backend declares {claimed.name.lower()} egress"
        )
    return Verdict(False, None, f"the backend declares {claimed.name.lower()}; {wanted} is needed")


def satisfied_by(spec: Spec, backend: object) -> bool:
    """Whether `backend` can hold `spec` (see `satisfied_verdict` for how strongly)."""
    return satisfied_verdict(spec, backend).satisfied


def _problems(spec: Spec, environ: Mapping[str, str], proxy_url: str | None) -> tuple[str, ...]:
    spec.validate()
    if spec.mode is Mode.DENIED:
        raise DeniedError
    if spec.mode is Mode.UNRESTRICTED:
        return ()
    expected = _check_proxy_url(proxy_url) if proxy_url is not None else None
    problems = []
    values = {name: environ.get(name, "").strip() for name in PROXY_VARIABLES}
    missing = [name for name, value in values.items() if not value]
    if missing:
        problems.append(f"missing proxy variables: {', '.join(missing)}")
    present = {value for value in values.values() if value}
    if expected is not None and present - {expected}:
        problems.append(f"proxy variables point elsewhere than {expected!r}: {sorted(present)}")
    elif len(present) > 1:
        problems.append(f"proxy variables disagree: {sorted(present)}")
    declared = _entries(spec.bypass)
    actual = set().union(*(_split(environ.get(name, "")) for name in BYPASS_VARIABLES))
    if actual - declared:
        problems.append(
            f"undeclared direct routes in NO_PROXY/no_proxy: {sorted(actual - declared)}"
        )
    if declared - actual:
        problems.append(
            f"declared bypass missing from NO_PROXY/no_proxy: {sorted(declared - actual)}"
        )
    return tuple(problems)


def _split(value: str) -> set[str]:
    return {part.strip().lower() for part in value.split(",") if part.strip()}


def _entries(entries: Iterable[str]) -> frozenset[str]:
    return frozenset(entry.strip().lower() for entry in entries)


def _check_entry(kind: str, entry: object) -> None:
    if not isinstance(entry, str) or not entry.strip():
        raise SpecError(f"{kind} entries must be non-empty strings, not {entry!r}")
    bad = sorted({c for c in entry.strip() if c in _FORBIDDEN_IN_ENTRY})
    if bad or "://" in entry:
        raise SpecError(
            f"{kind} entry {entry!r} is not a host pattern (no scheme, spaces, commas or quotes)"
        )


def _check_proxy_url(url: str) -> str:
    text = url.strip() if isinstance(url, str) else ""
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise SpecError(f"invalid proxy URL {url!r}: {exc}") from exc
    if parts.scheme.lower() not in PROXY_SCHEMES or not parts.hostname:
        raise SpecError(f"proxy URL {url!r} needs a scheme in {sorted(PROXY_SCHEMES)} and a host")
    if any(c in _FORBIDDEN_IN_ENTRY - {"="} for c in text) or port == 0:
        raise SpecError(f"invalid proxy URL {url!r}")
    return text
