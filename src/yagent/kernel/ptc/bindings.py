"""ptc bindings: which host tools a program may call, under which identifiers, in which forms.

Contract:
- `Bindings.assemble(entries)` binds each tool under `toolname.normalize(name)` with its
  `tooldisclose` call form. Two tools whose names normalise to one identifier are refused with
  a `BindingCollisionError` naming both — never one silently shadowing the other; a tool listed
  twice is refused too. Parameter labels that collide are refused (`AssemblyError`).
- `resolve(ident, form, payload)` turns what the program passed into the tool's name and its JSON
  arguments. Object form (`host.t({a, b})`): keys are parameter names, or their normalised labels
  (mapped back to the names); keys that are neither pass through for the tool to judge. Positional
  form (`host.t(a, b)`): the call form's order, omitted optionals ABSENT (`args_from_positional`,
  the same function that derives the forms shown to the model). An unknown identifier is
  `UnknownBindingError`; arguments that do not fit the form are `tooldisclose.CallFormError`.
- `describe()` lists the bindings for a prompt: one `host.sig — brief` line each.
Values are not validated here: that is the tool's business, after the judgement ring.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from yagent.kernel.judge import toolfail, toolname
from yagent.kernel.judge.tooldisclose import (
    CallForm,
    CallFormError,
    IdentCollisionError,
    ToolEntry,
    args_from_positional,
    call_form,
)
from yagent.kernel.ptc.errors import AssemblyError, BindingCollisionError

OBJECT = "object"
POSITIONAL = "positional"


class UnknownBindingError(toolfail.ToolFailure, LookupError):
    """A program named a host function that is not bound."""

    def __init__(self, ident: str) -> None:
        super().__init__(toolfail.Kind.FORBIDDEN, f"host.{ident} is not a bound tool")
        self.ident = ident


@dataclass(frozen=True, slots=True)
class Binding:
    entry: ToolEntry
    form: CallForm


@dataclass(frozen=True, slots=True)
class Bindings:
    """Bound tools by identifier (sorted); build with `assemble`."""

    by_ident: Mapping[str, Binding]

    @classmethod
    def assemble(cls, entries: Iterable[ToolEntry]) -> Bindings:
        listed = list(entries)
        seen: set[str] = set()
        for entry in listed:
            if entry.name in seen:
                raise AssemblyError(f"tool {entry.name!r} is listed twice in the bindings")
            seen.add(entry.name)
        clashes = toolname.collisions(e.name for e in listed)
        if clashes:
            ident, tools = next(iter(clashes.items()))
            raise BindingCollisionError(ident, tools)
        bound: dict[str, Binding] = {}
        for entry in sorted(listed, key=lambda e: toolname.normalize(e.name)):
            try:
                form = call_form(entry)
            except IdentCollisionError as exc:
                raise AssemblyError(str(exc)) from exc
            bound[form.ident] = Binding(entry, form)
        return cls(MappingProxyType(bound))

    @classmethod
    def empty(cls) -> Bindings:
        return cls(MappingProxyType({}))

    def __len__(self) -> int:
        return len(self.by_ident)

    @property
    def idents(self) -> tuple[str, ...]:
        return tuple(self.by_ident)

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(b.entry.name for b in self.by_ident.values())

    def resolve(self, ident: str, form: str, payload: Any) -> tuple[str, dict[str, Any]]:
        """The tool name and JSON arguments a program's call stands for (see the contract)."""
        binding = self.by_ident.get(ident)
        if binding is None:
            raise UnknownBindingError(ident)
        if form == OBJECT and isinstance(payload, Mapping):
            return binding.entry.name, _from_object(binding.form, payload)
        if form == POSITIONAL and isinstance(payload, list):
            return binding.entry.name, args_from_positional(binding.entry, payload)
        raise CallFormError(
            f"host.{ident}: expected an object or positional arguments, "
            f"got {type(payload).__name__}"
        )

    def describe(self) -> str:
        """One `host.signature — brief` line per bound tool, sorted by identifier."""
        lines = []
        for binding in self.by_ident.values():
            brief = binding.entry.brief or binding.entry.description.split("\n", 1)[0]
            sig = f"host.{binding.form.signature}"
            lines.append(f"{sig} — {brief}" if brief else sig)
        return "\n".join(lines)


def _from_object(form: CallForm, payload: Mapping[str, Any]) -> dict[str, Any]:
    names = dict(zip(form.labels, form.params, strict=True))
    args: dict[str, Any] = {}
    for key, value in payload.items():
        name = key if key in form.params else names.get(key, key)
        if name in args:
            raise CallFormError(f"{form.signature}: argument {name!r} is given twice")
        args[name] = value
    return args
