"""Surface gates: one source of tools, deferred loading, budget demotion, the catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.conftest import make_surface
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions, schema_tokens
from yagent.tools.yolo import Yolo
from yagent.toolspec import Effect, Spec, Tier, tool_defs_hash
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile


def external(name: str, description: str = "An external tool. It does things.") -> Spec:
    return Spec(name, description, {"type": "object", "properties": {}}, Effect.WRITE, Tier.HOT)


def test_surface_deferred_disabled_is_legacy_behavior(workspace: Path, home: Path) -> None:
    surface = make_surface(workspace, home, deferred=False)
    names = {d["name"] for d in surface.tool_defs()}
    granted = {s.name for s in BUILTIN if profile("coding").grants(s)} - {"load_tool"}
    assert names == granted
    assert "load_tool" not in names
    assert surface.deferred_names() == ()
    assert surface.catalog_text() == ""


def test_load_tool_in_registry_does_not_switch_deferral_on(workspace: Path, home: Path) -> None:
    # the registry contains load_tool and the profile grants it; only the option decides
    surface = make_surface(workspace, home, deferred=False)
    assert surface.spec("load_tool") is None


def test_surface_deferred_puts_cold_tools_in_the_catalog(workspace: Path, home: Path) -> None:
    surface = make_surface(workspace, home)
    guard = surface.guard
    ext = [external("srv__create_issue"), external("srv__list_issues")]
    surface = Surface(BUILTIN, profile("coding"), guard, external=ext)
    visible = {d["name"] for d in surface.tool_defs()}
    assert "load_tool" in visible
    assert "srv__create_issue" not in visible
    assert set(surface.deferred_names()) == {"srv__create_issue", "srv__list_issues"}
    assert "srv__create_issue — An external tool." in surface.catalog_text()
    assert all(surface.spec(n).tier is Tier.COLD for n in surface.deferred_names())  # type: ignore[union-attr]


def test_surface_budget_demotes_warm_only(workspace: Path, home: Path) -> None:
    surface = make_surface(workspace, home, schema_budget=1)
    visible = surface.visible_specs()
    assert visible, "hot tools stay visible even over budget"
    assert all(s.tier is Tier.HOT for s in visible)
    hot = {s.name for s in BUILTIN if s.tier is Tier.HOT and profile("coding").grants(s)}
    assert {s.name for s in visible} == hot
    warm = {s.name for s in BUILTIN if s.tier is Tier.WARM and profile("coding").grants(s)}
    assert set(surface.demoted()) == warm
    assert warm <= set(surface.deferred_names())


def test_budget_demotes_largest_warm_first_and_stops_when_it_fits(
    workspace: Path, home: Path
) -> None:
    full = make_surface(workspace, home)
    total = sum(schema_tokens(s) for s in full.visible_specs())
    warm = sorted(
        (s for s in full.visible_specs() if s.tier is Tier.WARM),
        key=lambda s: (-schema_tokens(s), s.name),
    )
    budget = total - 1  # one token over: exactly the largest warm tool goes
    surface = make_surface(workspace, home, schema_budget=budget)
    assert surface.demoted() == (warm[0].name,)


def test_surface_full_yolo_removes_ask_user(workspace: Path, home: Path) -> None:
    assert make_surface(workspace, home).spec("ask_user_for_help") is not None
    assert make_surface(workspace, home, yolo=Yolo.YOLO).spec("ask_user_for_help") is not None
    assert make_surface(workspace, home, yolo=Yolo.FULL).spec("ask_user_for_help") is None


def test_external_same_name_loses_and_is_skipped(workspace: Path, home: Path) -> None:
    guard = WorkspaceGuard(workspace)
    ext = [external("read_file"), external("srv__x"), external("srv__x")]
    surface = Surface(BUILTIN, profile("coding"), guard, external=ext)
    assert surface.spec("read_file") == next(s for s in BUILTIN if s.name == "read_file")
    reasons = dict(surface.skipped())
    assert "built-in" in reasons["read_file"]
    assert [n for n, _ in surface.skipped()].count("srv__x") == 1


def test_external_tools_filtered_by_profile_grants(workspace: Path, home: Path) -> None:
    guard = WorkspaceGuard(workspace)
    surface = Surface(BUILTIN, profile("chat"), guard, external=[external("srv__x")])
    assert surface.spec("srv__x") is None
    assert "not granted" in dict(surface.skipped())["srv__x"]


def test_catalog_brief_order(workspace: Path, home: Path) -> None:
    guard = WorkspaceGuard(workspace)
    with_brief = Spec("srv__a", "First sentence. Second.", {}, Effect.READ, Tier.COLD, brief="B")
    plain = Spec("srv__b", "First sentence here. Second.", {}, Effect.READ, Tier.COLD)
    surface = Surface(
        BUILTIN,
        profile("coding"),
        guard,
        external=[with_brief, plain],
        options=SurfaceOptions(briefs={"srv__a": "adapter brief"}),
    )
    assert surface.catalog_brief(surface.spec("srv__a")) == "adapter brief"  # type: ignore[arg-type]
    bare = Surface(BUILTIN, profile("coding"), guard, external=[with_brief, plain])
    assert bare.catalog_brief(bare.spec("srv__a")) == "B"  # type: ignore[arg-type]
    assert bare.catalog_brief(bare.spec("srv__b")) == "First sentence here."  # type: ignore[arg-type]


def test_tool_defs_sorted_and_hash_is_order_independent(workspace: Path, home: Path) -> None:
    surface = make_surface(workspace, home, deferred=False)
    defs = surface.tool_defs()
    assert [d["name"] for d in defs] == sorted(d["name"] for d in defs)
    assert surface.tool_defs_hash() == tool_defs_hash(list(reversed(defs)))
    assert len(surface.tool_defs_hash()) == 16
    other = make_surface(workspace, home, deferred=False, profile_name="repo")
    assert other.tool_defs_hash() != surface.tool_defs_hash()


def test_parallel_predicate_is_read_only_and_not_serial(workspace: Path, home: Path) -> None:
    surface = make_surface(workspace, home, deferred=False)
    for spec in surface.specs():
        assert surface.is_parallelizable(spec.name) == (spec.read_only and not spec.serial)
    assert surface.is_parallelizable("read_file")
    assert not surface.is_parallelizable("run_bash")
    assert not surface.is_parallelizable("agent_exit")
    assert not surface.is_parallelizable("no_such_tool")


def test_materialized_round_trip_and_rebuild_keeps_loaded(workspace: Path, home: Path) -> None:
    guard = WorkspaceGuard(workspace)
    surface = Surface(BUILTIN, profile("coding"), guard, external=[external("srv__x")])
    surface.disclosure.load(["srv__x"])
    saved = surface.materialized()
    assert saved["loaded"] == ["srv__x"]
    surface.rebuild()
    assert "srv__x" in {d["name"] for d in surface.tool_defs()}
    fresh = Surface(BUILTIN, profile("coding"), guard, external=[external("srv__x")])
    assert "srv__x" not in {d["name"] for d in fresh.tool_defs()}
    fresh.restore_materialized(saved)
    assert "srv__x" in {d["name"] for d in fresh.tool_defs()}


def test_chain_order_is_host_then_gate_then_boundary_then_authorization(
    workspace: Path, home: Path
) -> None:
    surface = make_surface(workspace, home)
    names = [s.name for s in surface.chain.stages]
    assert names[-2:] == ["workspace_boundary", "authorization"]
    assert names.index("tooldisclose") < names.index("workspace_boundary")


def test_unknown_profile_is_an_error() -> None:
    with pytest.raises(KeyError, match="unknown tool profile"):
        profile("nope")


def test_catalog_index_is_shared_by_surfaces_of_the_same_tools_and_only_them(
    workspace: Path,
) -> None:
    # a run builds its surface twice (assembly, then the MCP rebuild): the search index of the
    # same entries is built once and shared; anything an entry holds (a description, a brief)
    # that differs gives its own index, and what a run loads stays its own
    guard = WorkspaceGuard(workspace)

    def built(description: str, briefs: dict[str, str] | None = None) -> Surface:
        options = SurfaceOptions(briefs=briefs or {})
        tool = external("srv__tracker", description)
        return Surface(BUILTIN, profile("coding"), guard, external=[tool], options=options)

    first, second = built("Creates issues. Fast."), built("Creates issues. Fast.")
    assert second.disclosure.catalog is first.disclosure.catalog
    assert second.disclosure is not first.disclosure
    first.disclosure.load(["srv__tracker"])
    assert "srv__tracker" in {d["name"] for d in first.tool_defs()}
    assert "srv__tracker" not in {d["name"] for d in second.tool_defs()}

    other = built("Deletes merged branches. Fast.")
    assert other.disclosure.catalog is not first.disclosure.catalog
    assert other.disclosure.catalog.search("merged branches", 3).names[0] == "srv__tracker"
    assert first.disclosure.catalog.search("merged branches", 3).names[:1] != ("srv__tracker",)

    briefed = built("Creates issues. Fast.", briefs={"srv__tracker": "files bug reports"})
    assert briefed.disclosure.catalog is not first.disclosure.catalog
    assert briefed.disclosure.catalog.get("srv__tracker").brief == "files bug reports"  # type: ignore[union-attr]
