"""The projector's vocabulary: generic signal kinds, and the host's table that maps its own event
types onto them.

The projector knows seven kinds of signal and nothing else: a step starts / ends, a call is made /
its result arrives, a span (any other interval the host cares about) starts / ends, and the turn
ends. A host describes, per event type, which kind it is and which payload fields carry the row's
identity, its parent, its name, its lane (scope), success and outcome, the calls a step declared,
and which payload values become row attributes. `RuleBook` turns one host event into signals;
everything it cannot recognise is reported (`None`), never dropped in silence.

Row ids are `namespace:part/part`, built from payload values (a `/` or `%` inside a value is
escaped, so different field values never collide); a reference with a missing field, or whose
fields are all empty, resolves to no row. Row ids are unique within one turn only — the trace
boundary.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

from yagent.kernel.trace.trajectory.errors import VocabularyError

EMPTY: Mapping[str, Any] = MappingProxyType({})


class Kind(enum.StrEnum):
    """What one signal tells the projector."""

    STEP_START = "step_start"
    STEP_END = "step_end"
    CALL = "call"
    RESULT = "result"
    SPAN_START = "span_start"
    SPAN_END = "span_end"
    TURN_END = "turn_end"


class RowKind(enum.StrEnum):
    STEP = "step"
    CALL = "call"
    SPAN = "span"


OPENS: Mapping[Kind, RowKind] = MappingProxyType(
    {Kind.STEP_START: RowKind.STEP, Kind.CALL: RowKind.CALL, Kind.SPAN_START: RowKind.SPAN}
)
CLOSES: Mapping[Kind, RowKind] = MappingProxyType(
    {Kind.STEP_END: RowKind.STEP, Kind.RESULT: RowKind.CALL, Kind.SPAN_END: RowKind.SPAN}
)


@dataclass(frozen=True, slots=True)
class Signal:
    """One generic observation. `row` is None when the host event lacked the fields naming its
    row (the projector counts it as malformed). `ts` None means no time was measured."""

    kind: Kind
    row: str | None
    ts: float | None = None
    seq: int | None = None
    name: str = ""
    parent: str | None = None
    scope: str = ""
    ok: bool | None = None
    outcome: str | None = None
    declares: tuple[str, ...] = ()
    attrs: Mapping[str, Any] = field(default_factory=lambda: EMPTY)


class PairingSignal(NamedTuple):
    """A `Signal` cut to what pairing calls with steps reads (`watchdog.PAIRING`): what
    `RuleBook.pairing` makes for a host that keeps no rows — no time, seq, name, outcome or
    attribute is read or built."""

    kind: Kind
    row: str | None
    parent: str | None = None
    scope: str = ""
    declares: tuple[str, ...] = ()


class Vocabulary(Protocol):
    """Host event → signals. `None`: not recognised (counted); `()`: deliberately ignored."""

    def translate(
        self,
        type: str,
        payload: Mapping[str, Any],
        *,
        ts: float | None = None,
        seq: int | None = None,
    ) -> tuple[Signal, ...] | None: ...


Getter = Callable[[Mapping[str, Any]], Any]


@functools.lru_cache(maxsize=1024)
def getter(path: str) -> Getter:
    """A compiled dotted-path reader (a missing step, or a non-mapping on the way, is None)."""
    parts = tuple(path.split("."))
    if len(parts) == 1:
        key = parts[0]
        return lambda payload: payload.get(key)

    def get(payload: Mapping[str, Any]) -> Any:
        value: Any = payload
        for part in parts:
            if not isinstance(value, Mapping):
                return None
            value = value.get(part)
        return value

    return get


def pick(payload: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path (`usage.input_tokens`), or None when any step is missing."""
    return getter(path)(payload)


def _part(value: Any) -> str:
    if type(value) is str:
        text = value
    else:
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    if "%" in text or "/" in text:
        text = text.replace("%", "%25").replace("/", "%2F")
    return text


@dataclass(frozen=True, slots=True)
class Ref:
    """How to name a row from payload fields: `namespace:` plus the field values."""

    namespace: str
    fields: tuple[str, ...]
    _getters: tuple[Getter, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.namespace or ":" in self.namespace or not self.fields:
            raise VocabularyError(f"a row reference needs a namespace and fields, got {self!r}")
        object.__setattr__(self, "_getters", tuple(getter(f) for f in self.fields))

    def resolve(self, *sources: Mapping[str, Any]) -> str | None:
        """The row id; the first source holding a field wins. None when a field is missing from
        every source, or when every field is empty."""
        parts = []
        if len(sources) == 1:  # the usual case (an event payload), without the inner loop
            source = sources[0]
            for get in self._getters:
                value = get(source)
                if value is None:
                    return None
                if type(value) is str and "%" not in value and "/" not in value:
                    parts.append(value)  # `_part` would return it as it is
                else:
                    parts.append(_part(value))
        else:
            for get in self._getters:
                for source in sources:
                    value = get(source)
                    if value is not None:
                        break
                else:
                    return None
                parts.append(_part(value))
        if not any(parts):
            return None
        return f"{self.namespace}:{'/'.join(parts)}"


@dataclass(frozen=True, slots=True)
class Declares:
    """The calls a step declared: a list of mappings at `field`, each named by `ref` (resolved
    against the item first, then the event payload — so a call's lane can come from the event)."""

    field: str
    ref: Ref


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True)
class SignalRule:
    """One host event type (or, with `when`, one shape of it) as a signal.

    `name`, `scope`, `ok`, `outcome` are payload paths; `attrs` maps an attribute key of the row
    (see `otelmap` for the keys the OpenTelemetry mapping reads) to a payload path; `when` holds
    path → value pairs that must all be equal for the rule to apply."""

    kind: Kind
    row: Ref | None = None
    parent: Ref | None = None
    name: str = ""
    scope: str = ""
    ok: str = ""
    outcome: str = ""
    declares: Declares | None = None
    attrs: Mapping[str, str] = field(default_factory=dict)
    when: Mapping[str, Any] = field(default_factory=dict)

    _get: tuple[Getter | None, ...] = field(init=False, repr=False, compare=False)
    _attrs: tuple[tuple[str, Getter], ...] = field(init=False, repr=False, compare=False)
    _when: tuple[tuple[Getter, Any], ...] = field(init=False, repr=False, compare=False)
    _declared_items: Getter | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind is Kind.TURN_END:
            if self.row is not None or self.parent is not None:
                raise VocabularyError("a turn end names no row: the turn is the trace itself")
        elif self.row is None:
            raise VocabularyError(f"a {self.kind.value} rule needs a row reference")
        if self.declares is not None and self.kind is not Kind.STEP_END:
            raise VocabularyError("only a step end declares calls")
        object.__setattr__(self, "attrs", _frozen(self.attrs))
        object.__setattr__(self, "when", _frozen(self.when))
        # Paths are compiled once: translation is the projector's hot path.
        paths = (self.name, self.scope, self.ok, self.outcome)
        object.__setattr__(self, "_get", tuple(getter(p) if p else None for p in paths))
        object.__setattr__(self, "_attrs", tuple((k, getter(p)) for k, p in self.attrs.items()))
        object.__setattr__(self, "_when", tuple((getter(p), v) for p, v in self.when.items()))
        declared = getter(self.declares.field) if self.declares is not None else None
        object.__setattr__(self, "_declared_items", declared)

    def matches(self, payload: Mapping[str, Any]) -> bool:
        if not self._when:
            return True
        return all(get(payload) == value for get, value in self._when)

    def _declared(self, payload: Mapping[str, Any]) -> tuple[str, ...]:
        if self.declares is None or self._declared_items is None:
            return ()
        items = self._declared_items(payload)
        if not isinstance(items, list | tuple):
            return ()
        refs = (self.declares.ref.resolve(i, payload) for i in items if isinstance(i, Mapping))
        return tuple(dict.fromkeys(r for r in refs if r is not None))

    def pairing(self, payload: Mapping[str, Any]) -> PairingSignal:
        """`signal`'s kind, row, parent, scope and declares alone (`PairingSignal`)."""
        get_scope = self._get[1]
        return PairingSignal(
            self.kind,
            self.row.resolve(payload) if self.row is not None else None,
            self.parent.resolve(payload) if self.parent is not None else None,
            _text(get_scope(payload)) if get_scope else "",
            self._declared(payload) if self.declares is not None else (),
        )

    def signal(self, payload: Mapping[str, Any], ts: float | None, seq: int | None) -> Signal:
        declared = self._declared(payload)
        attrs = {key: value for key, get in self._attrs if (value := get(payload)) is not None}
        get_name, get_scope, get_ok, get_outcome = self._get
        return Signal(
            kind=self.kind,
            row=self.row.resolve(payload) if self.row is not None else None,
            ts=_time(ts),
            seq=seq,
            name=_text(get_name(payload)) if get_name else "",
            parent=self.parent.resolve(payload) if self.parent is not None else None,
            scope=_text(get_scope(payload)) if get_scope else "",
            ok=_flag(get_ok(payload)) if get_ok else None,
            outcome=(_text(get_outcome(payload)) or None) if get_outcome else None,
            declares=declared,
            attrs=MappingProxyType(attrs) if attrs else EMPTY,
        )


def _time(ts: float | None) -> float | None:
    # A time that is not a finite number is no measurement: it must not become a duration.
    if type(ts) is float:  # the usual case, first
        return ts if math.isfinite(ts) else None
    if isinstance(ts, bool) or not isinstance(ts, int | float) or not math.isfinite(ts):
        return None
    return float(ts)


def _text(value: Any) -> str:
    if type(value) is str:
        return value
    return "" if value is None else str(value)


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


class RuleBook:
    """A `Vocabulary` from a table: host event type → rule(s), first matching rule wins.

    Types in `ignore` translate to no signal on purpose; every other unmapped type, and a mapped
    event no rule's `when` matches, is reported as not recognised."""

    def __init__(
        self, rules: Mapping[str, SignalRule | Sequence[SignalRule]], *, ignore: Iterable[str] = ()
    ) -> None:
        table: dict[str, tuple[SignalRule, ...]] = {}
        for type_, entry in rules.items():
            options = (entry,) if isinstance(entry, SignalRule) else tuple(entry)
            if not options or not all(isinstance(r, SignalRule) for r in options):
                raise VocabularyError(f"event type {type_!r} needs one or more rules")
            table[type_] = options
        ignored = frozenset(ignore)
        both = sorted(ignored & table.keys())
        if both:
            raise VocabularyError(f"event types both mapped and ignored: {both}")
        self._rules = MappingProxyType(table)
        self._ignored = ignored

    @property
    def rules(self) -> Mapping[str, tuple[SignalRule, ...]]:
        return self._rules

    @property
    def ignored(self) -> frozenset[str]:
        return self._ignored

    def translate(
        self,
        type: str,
        payload: Mapping[str, Any],
        *,
        ts: float | None = None,
        seq: int | None = None,
    ) -> tuple[Signal, ...] | None:
        if type in self._ignored:
            return ()
        for rule in self._rules.get(type, ()):
            if rule.matches(payload):
                return (rule.signal(payload, ts, seq),)
        return None

    def pairing(self, type: str, payload: Mapping[str, Any]) -> tuple[PairingSignal, ...] | None:
        """`translate`, each signal as `SignalRule.pairing` makes it (for a watchdog alone)."""
        if type in self._ignored:
            return ()
        for rule in self._rules.get(type, ()):
            if rule.matches(payload):
                return (rule.pairing(payload),)
        return None
