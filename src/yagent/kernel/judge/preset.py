"""preset: named, read-only, load-time checked bundles of sandbox level × approval mode × egress.

Guarantees:
- A `Preset{name, level, mode, egress, unsafe, justification}` is frozen and checked when a
  `Presets` catalogue is built: a plain name; a valid egress spec; all three axes at their loosest
  (IN_PROCESS, NEVER_ASK, UNRESTRICTED) only with `unsafe=True` and a non-empty justification;
  `unsafe=True` only on a preset that really is all loose (a stale flag misleads the reader).
- Two names with the same meaning (level, mode, and egress compared as sets) are an error: a
  report showing two names would suggest two permission sets ran when one did.
- `resolve(name)` of an unknown name raises `UnknownPresetError` — never a fallback, whose
  direction (looser or stricter) nobody could predict from a typo.
- `BUILTIN` ships `read-only`, `workspace-write`, `full-auto` and `yolo` (unsafe, justified).
- `from_mapping` reads configuration documents with unknown keys refused by name.
Direction: preset knows gatecheck (`Preset.requirement`, `Preset.gate`); gatecheck knows no preset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from yagent.kernel.confine import egress
from yagent.kernel.confine.sandbox import EgressMode, Level, Registry
from yagent.kernel.judge.gatecheck import ApprovalMode, Gate, Requirement

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_KEYS = frozenset({"name", "level", "mode", "egress", "unsafe", "justification"})
_EGRESS_KEYS = frozenset({"mode", "allow", "bypass"})


class PresetError(Exception):
    """Root of this module's errors."""


class InvalidPresetError(PresetError, ValueError):
    """A preset, or a catalogue of presets, that fails its load-time checks."""


class UnknownPresetError(PresetError, LookupError):
    """No preset has that name (there is no fallback)."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown preset {name!r}; known presets: {', '.join(known)}")
        self.name = name
        self.known = known


@dataclass(frozen=True, slots=True)
class Preset:
    """One named combination of isolation level, approval mode and egress."""

    name: str
    level: Level
    mode: ApprovalMode
    egress: egress.Spec = field(default_factory=egress.Spec)
    unsafe: bool = False
    justification: str = ""

    @property
    def all_loose(self) -> bool:
        return (
            self.level is Level.IN_PROCESS
            and self.mode is ApprovalMode.NEVER_ASK
            and self.egress.mode is EgressMode.UNRESTRICTED
        )

    @property
    def meaning(self) -> tuple[Level, ApprovalMode, tuple[object, ...]]:
        """What the preset grants, independent of its name and of list order in egress."""
        return (self.level, self.mode, self.egress.meaning)

    @property
    def requirement(self) -> Requirement:
        return Requirement(self.level, self.egress.mode)

    def gate(self, registry: Registry, *, plan: bool = False) -> Gate:
        """The joint gate this preset describes, over `registry`."""
        return Gate(registry, mode=self.mode, plan=plan)

    def check(self) -> None:
        """Raise `InvalidPresetError` unless this preset passes every load-time check."""
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InvalidPresetError(
                f"preset name {self.name!r} must be lowercase letters, digits, '.', '_' or '-'"
            )
        if not isinstance(self.level, Level) or not isinstance(self.mode, ApprovalMode):
            raise InvalidPresetError(f"preset {self.name!r}: level and mode must be enum members")
        try:
            self.egress.validate()
        except egress.SpecError as exc:
            raise InvalidPresetError(f"preset {self.name!r}: {exc}") from exc
        if self.all_loose and not self.unsafe:
            raise InvalidPresetError(
                f"preset {self.name!r} loosens every axis (in-process, never-ask, unrestricted "
                "egress): it must say unsafe: true and give a justification"
            )
        if self.unsafe and not self.all_loose:
            raise InvalidPresetError(
                f"preset {self.name!r} says unsafe but is not loose on every axis: drop the flag"
            )
        if self.unsafe and not self.justification.strip():
            raise InvalidPresetError(f"unsafe preset {self.name!r} needs a justification")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Preset:
        """A preset from a configuration document (checked; unknown keys refused)."""
        if not isinstance(data, Mapping):
            raise InvalidPresetError(f"a preset must be a mapping, not {type(data).__name__}")
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise InvalidPresetError(f"unknown preset keys {unknown}; known: {sorted(_KEYS)}")
        missing = sorted({"name", "level", "mode"} - set(data))
        if missing:
            raise InvalidPresetError(f"preset is missing {missing}")
        try:
            preset = cls(
                name=data["name"],
                level=Level.parse(data["level"]),
                mode=ApprovalMode(data["mode"]),
                egress=_egress_of(data.get("egress", {})),
                unsafe=_flag(data.get("unsafe", False)),
                justification=str(data.get("justification", "")),
            )
        except ValueError as exc:
            raise InvalidPresetError(f"preset {data.get('name')!r}: {exc}") from exc
        preset.check()
        return preset


class Presets:
    """A read-only catalogue of checked presets, looked up by exact name."""

    __slots__ = ("_by_name",)
    _by_name: Mapping[str, Preset]

    def __init__(self, presets: Iterable[Preset]) -> None:
        by_name: dict[str, Preset] = {}
        by_meaning: dict[object, str] = {}
        for preset in presets:
            if not isinstance(preset, Preset):
                raise InvalidPresetError(f"not a Preset: {preset!r}")
            preset.check()
            if preset.name in by_name:
                raise InvalidPresetError(f"two presets are named {preset.name!r}")
            twin = by_meaning.get(preset.meaning)
            if twin is not None:
                raise InvalidPresetError(
                    f"presets {twin!r} and {preset.name!r} mean the same thing; keep one name"
                )
            by_name[preset.name] = preset
            by_meaning[preset.meaning] = preset.name
        object.__setattr__(self, "_by_name", MappingProxyType(by_name))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a preset catalogue is read-only; build a new one with with_presets")

    @classmethod
    def from_mappings(cls, documents: Iterable[Mapping[str, Any]]) -> Presets:
        return cls(Preset.from_mapping(document) for document in documents)

    def with_presets(self, presets: Iterable[Preset]) -> Presets:
        """A new catalogue with `presets` added (checked again as a whole)."""
        return Presets((*self._by_name.values(), *presets))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._by_name))

    def resolve(self, name: str) -> Preset:
        """The preset called exactly `name`; anything else raises `UnknownPresetError`."""
        preset = self._by_name.get(name) if isinstance(name, str) else None
        if preset is None:
            raise UnknownPresetError(str(name), self.names)
        return preset

    def __iter__(self) -> Iterator[Preset]:
        return iter(self._by_name[n] for n in self.names)

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name


def _egress_of(data: object) -> egress.Spec:
    if isinstance(data, str):
        return egress.Spec(EgressMode.parse(data))
    if not isinstance(data, Mapping):
        raise ValueError(f"egress must be a mode name or a mapping, not {type(data).__name__}")
    unknown = sorted(set(data) - _EGRESS_KEYS)
    if unknown:
        raise ValueError(f"unknown egress keys {unknown}; known: {sorted(_EGRESS_KEYS)}")
    for key in ("allow", "bypass"):
        if isinstance(data.get(key), str):
            raise ValueError(f"egress {key} must be a list of host patterns, not a string")
    return egress.Spec(
        EgressMode.parse(data.get("mode", "unrestricted")),
        tuple(data.get("allow", ())),
        tuple(data.get("bypass", ())),
    )


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"unsafe must be true or false, not {value!r}")
    return value


YOLO_JUSTIFICATION = (
    "For a disposable environment that is already isolated from anything that matters (a "
    "throw-away container or VM): no sandbox, no approval, open network — the agent acts with "
    "the user's full rights, so use it only where every prompt would be answered yes anyway."
)

BUILTIN = Presets(
    [
        Preset(
            "read-only", Level.NAMESPACES, ApprovalMode.ALLOWLIST, egress.Spec(EgressMode.DENIED)
        ),
        Preset(
            "workspace-write", Level.NAMESPACES, ApprovalMode.ASK, egress.Spec(EgressMode.DENIED)
        ),
        Preset("full-auto", Level.NAMESPACES, ApprovalMode.AUTO, egress.Spec(EgressMode.DENIED)),
        Preset(
            "yolo",
            Level.IN_PROCESS,
            ApprovalMode.NEVER_ASK,
            egress.Spec(EgressMode.UNRESTRICTED),
            unsafe=True,
            justification=YOLO_JUSTIFICATION,
        ),
    ]
)
"""The shipped presets (iteration is by name; `read-only` is the strictest)."""
