"""What `run_program` offers a program, read without loading the program runner.

Contract:
- `bindings_for(surface)`: the run's *visible* tools (`Surface.visible_specs()`, the same set a
  direct call may reach) as `kernel.ptc.bindings.Bindings`, minus `run_program` itself (no
  recursion) and flow-control / meta / delegation tools (ending the run, asking the user,
  loading tools and delegating are the loop's business, not a program's). Their call forms come
  from the surface's catalog entries, so the program sees what `tooldisclose` shows.
- `prompt_section(surface)`: the system prompt's section on programs — the bindings and when a
  program beats single calls; bindings that cannot be assembled (two tools that normalise to one
  identifier) say so there instead of offering a listing that would not work.
This module imports `kernel.ptc.bindings` only: the system prompt of a run that may write
programs is built before its first model request, the runner (`tools.program`) at its first call.
- Both are kept per catalog and bound names (the 16 last used): a surface's catalog is shared by
  every surface of the same tools and never changes (`tools.surface`), so the same names in it
  are the same bindings — every run built them again for its system prompt, and every program
  call for its bindings (issue 17). Bindings that cannot be assembled are not kept: each call of
  `bindings_for` refuses them afresh (the prompt's section keeps saying so).
"""

from __future__ import annotations

import functools

from yagent.kernel.judge.tooldisclose import Catalog
from yagent.kernel.ptc.bindings import Bindings
from yagent.kernel.ptc.errors import AssemblyError
from yagent.tools.surface import Surface
from yagent.toolspec import Effect
from yagent.toolspec.program import NAME

EXCLUDED_EFFECTS = frozenset({Effect.FLOW, Effect.META, Effect.DELEGATE})


def bindings_for(surface: Surface) -> Bindings:
    """The tools a program may call: the visible ones, as their catalog entries."""
    return _bindings(*_bound(surface))


def _bound(surface: Surface) -> tuple[Catalog, tuple[str, ...]]:
    """The surface's catalog and the names of its visible tools a program may call."""
    names = tuple(
        spec.name
        for spec in surface.visible_specs()
        if spec.name != NAME and spec.effect not in EXCLUDED_EFFECTS
    )
    return surface.disclosure.catalog, names


@functools.lru_cache(maxsize=16)
def _bindings(catalog: Catalog, names: tuple[str, ...]) -> Bindings:
    entries = [entry for name in names if (entry := catalog.get(name)) is not None]
    return Bindings.assemble(entries)


def prompt_section(surface: Surface) -> str:
    """The system-prompt section: the bindings and when a program beats single calls."""
    return _section(*_bound(surface))


@functools.lru_cache(maxsize=16)
def _section(catalog: Catalog, names: tuple[str, ...]) -> str:
    try:
        listing = _bindings(catalog, names).describe()
    except AssemblyError as exc:
        return f"run_program is unavailable here: {exc}"
    return (
        "## Programs (run_program)\n"
        "When a task needs many tool calls or reads much data to reach a short answer (scan many "
        "files, aggregate logs, compare many items), write one program instead of calling tools "
        "one by one: the raw results stay in the program and only its returned value comes "
        "back. Call tools as `await host.<name>(...)` — positional arguments in the order shown "
        "(`?` marks an optional one), or one object of named arguments. Every call is judged "
        "like a direct call; a refused call throws an error with `kind` and `message`. Return a "
        "small JSON value.\n"
        f"{listing or '(no tools can be called from a program here)'}"
    )
