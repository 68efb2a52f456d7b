"""run_program's bindings and prompt section, built once per catalog and bound names (issue 17):
every run built them again for its system prompt. Counted, not timed."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.kernel.ptc import bindings
from yagent.tools import programbindings
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.settings import Settings
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec import Effect, Spec, Tier
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile
from yagent.toolspec.program import RUN_PROGRAM

EXTERNAL = Spec("srv__count", "Count things.", {"type": "object"}, Effect.READ, Tier.COLD)


def surface_for(workspace: Path, home: Path) -> Surface:
    """A run's surface: the coding tools and one external (cold: deferred until loaded)."""
    guard = WorkspaceGuard(workspace, settings=Settings(home))
    return Surface(
        (*BUILTIN, RUN_PROGRAM),
        profile("coding"),
        guard,
        external=(EXTERNAL,),
        options=SurfaceOptions(deferred=True),
    )


def test_surfaces_of_the_same_tools_assemble_the_bindings_once(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assembled: list[tuple[str, ...]] = []
    assemble = bindings.Bindings.assemble.__func__  # type: ignore[attr-defined]

    def counting(cls: type[bindings.Bindings], entries: list[object]) -> bindings.Bindings:
        made = assemble(cls, entries)
        assembled.append(made.tools)
        return made

    monkeypatch.setattr(bindings.Bindings, "assemble", classmethod(counting))
    programbindings._bindings.cache_clear()
    programbindings._section.cache_clear()
    first, second = surface_for(workspace, home), surface_for(workspace, home)
    assert first.disclosure.catalog is second.disclosure.catalog  # one catalog per tool set
    sections = {programbindings.prompt_section(s) for s in (first, second, first)}
    bound = {programbindings.bindings_for(s).tools for s in (first, second)}
    assert len(assembled) == 1
    assert len(sections) == 1
    assert len(bound) == 1
    loaded = EXTERNAL.name
    assert loaded in first.deferred_names()
    assert f"host.{loaded}(" not in sections.pop()
    first.disclosure.load([loaded])  # the visible set changed: its own bindings
    assert f"host.{loaded}(" in programbindings.prompt_section(first)
    assert loaded in programbindings.bindings_for(first).tools
    assert loaded not in programbindings.bindings_for(second).tools  # the other run's own set
    assert len(assembled) == 2
