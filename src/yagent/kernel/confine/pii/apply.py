"""pii entry points: `apply(text, surface)` and `apply_value(obj, surface)` — nothing else redacts.

Guarantees:
- The surface is required and explicit; one policy snapshot decides the action for the call.
- OFF: the value comes back unchanged and nothing is scanned (findings empty).
- MASK: every finding is replaced per the policy's strength; findings say what and where.
- BLOCK: if anything is found the Result is blocked, its `value` is None and `unwrap()` raises
  BlockedError — a block is never a silent mask. Nothing found: the value passes unchanged.
- apply_value walks dicts (values and string keys), lists, tuples, sets and frozensets, and scans
  str, int and float leaves (a number that is PII comes back as its masked string). A value made
  of those alone is first scanned whole, in ONE pass over its texts joined by a line break (no
  kind's pattern matches a line break, and every pattern treats one as it treats a string's end:
  the pass finds an item exactly when some leaf holds one); only a value where that pass finds
  something is walked leaf by leaf: same findings, same result, one scan for a clean value.
  Leaves of other types (bytes, custom objects) are not scanned and their paths are listed in
  `unscanned`. `is_clean(value, kinds)` is that whole-value pass alone (True: unchanged on
  every surface). Nesting deeper than MAX_DEPTH (or a cycle) raises TooDeepError; two keys that mask
  to the same text raise KeyCollisionError rather than silently dropping one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from yagent.kernel.confine.pii.detect import Finding, Kind, Strength, _redact, scan
from yagent.kernel.confine.pii.policy import Action, PiiError, PolicyStore, Surface, surface_of

T = TypeVar("T")
MAX_DEPTH = 64


class BlockedError(PiiError):
    """unwrap() of a blocked Result: the surface's policy is block and PII was found."""

    def __init__(self, surface: Surface, findings: tuple[Finding, ...]) -> None:
        kinds = sorted({f.kind.value for f in findings})
        super().__init__(f"pii blocked on surface {surface}: {', '.join(kinds)}")
        self.surface = surface
        self.findings = findings


class TooDeepError(PiiError):
    """The value nests deeper than MAX_DEPTH (or contains a cycle): it cannot be judged."""


class KeyCollisionError(PiiError):
    """Masking two distinct mapping keys produced the same key."""


@dataclass(frozen=True, slots=True)
class Result(Generic[T]):
    value: T | None
    blocked: bool
    findings: tuple[Finding, ...]
    surface: Surface
    action: Action
    generation: int
    unscanned: tuple[str, ...] = ()

    def unwrap(self) -> T:
        """The value to use; raises BlockedError when the surface blocked it."""
        if self.blocked:
            raise BlockedError(self.surface, self.findings)
        assert self.value is not None or self.findings == ()
        return self.value  # type: ignore[return-value]


DEFAULT_STORE = PolicyStore()


def apply(text: str, surface: Surface, *, store: PolicyStore | None = None) -> Result[str]:
    """Judge one string for `surface`."""
    if not isinstance(text, str):
        raise TypeError("apply() takes a str; use apply_value() for structured values")
    return apply_value(text, surface, store=store)


def apply_value(value: T, surface: Surface, *, store: PolicyStore | None = None) -> Result[T]:
    """Judge a structured value for `surface` (see module contract)."""
    which = surface_of(surface)
    snap = (store or DEFAULT_STORE).snapshot()
    action = snap.policy.action(which)
    if action is Action.OFF:
        return Result(value, False, (), which, action, snap.generation)
    if _clean(value, snap.policy.kinds):
        return Result(value, False, (), which, action, snap.generation)
    walker = _Walker(snap.policy.kinds, snap.policy.strength)
    out = walker.walk(value, "$", 0)
    findings = tuple(walker.findings)
    if action is Action.BLOCK and findings:
        return Result(None, True, findings, which, action, snap.generation, tuple(walker.unscanned))
    result = out if action is Action.MASK else value
    return Result(result, False, findings, which, action, snap.generation, tuple(walker.unscanned))


SEPARATOR = "\n"  # between the texts of one whole-value pass (see the module contract)


def is_clean(value: Any, kinds: frozenset[Kind]) -> bool:
    """True when `value` is judged whole (every leaf scannable, within MAX_DEPTH) and holds no
    finding of `kinds`: `apply_value` then returns it unchanged on every surface, whatever the
    action — so one call answers for several surfaces. False says nothing: judge it per surface."""
    return _clean(value, kinds)


def _clean(value: Any, kinds: frozenset[Kind]) -> bool:
    """True when `value` holds only scannable leaves and one pass over them finds nothing; False
    when something is found or the value needs the walk (another leaf type, too deep, a cycle)."""
    texts: list[str] = []
    if not _texts(value, texts, 0):
        return False
    return not scan(SEPARATOR.join(texts), kinds)


SHORT_INT = 10**10  # an int above -SHORT_INT and below it has 10 digits at most: no finding


def _texts(value: Any, out: list[str], depth: int) -> bool:
    """Collect every text `_Walker.walk` would scan that could hold a finding (an int of 10
    digits or fewer cannot: every numeric kind has 11 or more, and it has no `@`); False when
    the walk must decide instead.

    Event payloads are plain dicts and lists of str, int, bool and None: those are told by their
    exact type, their leaves handled in the loop (every event's payload passes here, and the
    abstract-class checks below cost more than the scan). Anything else — subclasses (a StrEnum
    member, an OrderedDict), other containers, the last level before MAX_DEPTH — takes
    `_texts_any`, which decides exactly as before."""
    kind = type(value)
    if depth >= MAX_DEPTH or (kind is not dict and kind is not list):
        return _texts_any(value, out, depth)
    if kind is dict:
        for key, item in value.items():
            if isinstance(key, str):
                out.append(key)
            leaf = type(item)
            if leaf is str:
                out.append(item)
            elif leaf is int:
                if not -SHORT_INT < item < SHORT_INT:
                    out.append(str(item))
            elif leaf is float:
                out.append(str(item))
            elif item is not None and leaf is not bool and not _texts(item, out, depth + 1):
                return False
        return True
    for item in value:  # the same leaves, of a list
        leaf = type(item)
        if leaf is str:
            out.append(item)
        elif leaf is int:
            if not -SHORT_INT < item < SHORT_INT:
                out.append(str(item))
        elif leaf is float:
            out.append(str(item))
        elif item is not None and leaf is not bool and not _texts(item, out, depth + 1):
            return False
    return True


def _texts_any(value: Any, out: list[str], depth: int) -> bool:
    """`_texts` for any value: the general type checks."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, str):
        out.append(value)
        return True
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int | float):
        if type(value) is not int or not -SHORT_INT < value < SHORT_INT:  # a subclass's str
            out.append(str(value))  # may say anything: scanned as the walk scans it
        return True
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                out.append(key)
            if not _texts(item, out, depth + 1):
                return False
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return all(_texts(item, out, depth + 1) for item in value)
    return False


class _Walker:
    def __init__(self, kinds: frozenset[Kind], strength: Strength) -> None:
        self.kinds = kinds
        self.strength = strength
        self.findings: list[Finding] = []
        self.unscanned: list[str] = []

    def text(self, text: str, path: str) -> str:
        found = scan(text, self.kinds, path=path)
        if not found:
            return text
        self.findings.extend(found)
        return _redact(text, found, self.strength)

    def walk(self, value: Any, path: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise TooDeepError(f"value nests deeper than {MAX_DEPTH} at {path}")
        if isinstance(value, str):
            return self.text(value, path)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            spelled = str(value)
            masked = self.text(spelled, path)
            return value if masked is spelled else masked
        if isinstance(value, Mapping):
            return self._mapping(value, path, depth)
        if isinstance(value, list | tuple):
            items = [self.walk(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items if isinstance(value, list) else type(value)(items)
        if isinstance(value, set | frozenset):
            members = [self.walk(v, f"{path}{{}}", depth + 1) for v in value]
            if all(a is b for a, b in zip(members, value, strict=True)):
                return value
            return type(value)(members)
        self.unscanned.append(path)
        return value

    def _mapping(self, value: Mapping[Any, Any], path: str, depth: int) -> Any:
        out: dict[Any, Any] = {}
        changed = False
        for key, item in value.items():
            where = f"{path}.{key}" if isinstance(key, str) else f"{path}[{key!r}]"
            new_key = self.text(key, f"{where}#key") if isinstance(key, str) else key
            if new_key in out:
                raise KeyCollisionError(f"masking merged two keys at {path}")
            new_item = self.walk(item, where, depth + 1)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value
