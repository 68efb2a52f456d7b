"""tooldisclose disclosure state, execution gate and chain stage."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call, Chain, Decision, FuncStage, Verdict
from yagent.kernel.judge.tooldisclose import (
    UNLIMITED,
    Budget,
    Catalog,
    Disclosure,
    Gate,
    LoadedSet,
    Param,
    SnapshotError,
    Stage,
    ToolEntry,
    UnknownToolError,
)


def entry(name: str, description: str = "", n_params: int = 0) -> ToolEntry:
    return ToolEntry(
        name,
        f"brief of {name}",
        description,
        tuple(Param(f"p{i}", i == 0, "a parameter") for i in range(n_params)),
    )


CATALOG = Catalog(
    [
        entry("alpha"),
        entry("bravo"),
        entry("charlie"),
        entry("delta"),
        entry("echo_logs", "read the echo logs"),
        entry("big", "x" * 2000, 10),
    ]
)


def sizes(e: ToolEntry) -> int:
    return 100 if e.name == "big" else 10


# --- disclosure -----------------------------------------------------------------------------


def test_hot_tools_must_be_in_the_catalog() -> None:
    with pytest.raises(UnknownToolError, match="ghost"):
        Disclosure(CATALOG, always={"alpha", "ghost"})


def test_starts_with_hot_tools_visible_and_nothing_loaded() -> None:
    d = Disclosure(CATALOG, always={"alpha"})
    assert d.catalog is CATALOG
    assert d.hot == frozenset({"alpha"})
    assert d.loaded() == ()
    assert d.visible() == ("alpha",)
    assert d.is_visible("alpha")
    assert not d.is_visible("bravo")


def test_load_reports_every_name_in_exactly_one_place() -> None:
    d = Disclosure(CATALOG, always={"alpha"}, sizer=sizes)
    d.load(["bravo"])
    result = d.load(
        ["charlie", "alpha", "bravo", "ghost", "charlie", "delta"], Budget(max_schemas=1)
    )
    assert result.added == ("charlie",)
    assert result.already == ("alpha", "bravo")
    assert result.trimmed == ("delta",)
    assert result.unknown == ("ghost",)
    assert result.size == 10
    assert not result.complete
    assert d.loaded() == ("bravo", "charlie")
    assert d.visible() == ("alpha", "bravo", "charlie")
    assert "ghost" not in d.visible()


def test_size_budget_is_first_fit_in_the_given_order() -> None:
    d = Disclosure(CATALOG, sizer=sizes)
    result = d.load(["alpha", "big", "bravo", "charlie"], Budget(max_size=25))
    assert result.added == ("alpha", "bravo")
    assert result.trimmed == ("big", "charlie")
    assert result.size == 20


def test_both_budgets_apply_together() -> None:
    d = Disclosure(CATALOG, sizer=sizes)
    result = d.load(["alpha", "bravo", "charlie"], Budget(max_schemas=5, max_size=15))
    assert result.added == ("alpha",)
    assert result.trimmed == ("bravo", "charlie")


def test_unlimited_load_is_complete() -> None:
    d = Disclosure(CATALOG)
    result = d.load(CATALOG.names, UNLIMITED)
    assert result.added == CATALOG.names
    assert result.complete
    assert d.visible_entries() == tuple(CATALOG)


@pytest.mark.parametrize("kwargs", [{"max_schemas": 0}, {"max_size": 0}, {"max_schemas": -1}])
def test_budget_values_must_be_positive(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Budget(**kwargs)


def test_snapshot_restores_the_loaded_set_without_reloading() -> None:
    first = Disclosure(CATALOG, always={"alpha"})
    first.load(["charlie", "bravo"])
    data = first.snapshot().to_dict()
    assert data == {"version": 1, "loaded": ["bravo", "charlie"]}

    resumed = Disclosure(CATALOG, always={"alpha"})
    result = resumed.restore(LoadedSet.from_dict(data))
    assert result.added == ("bravo", "charlie")
    assert resumed.loaded() == first.loaded()
    # The resumed run's call passes at once: no NOT_LOADED round trip.
    assert Gate(resumed).check("bravo").allowed


def test_restore_reports_names_the_catalog_no_longer_has() -> None:
    d = Disclosure(CATALOG)
    result = d.restore(LoadedSet(("alpha", "removed_tool")))
    assert result.added == ("alpha",)
    assert result.unknown == ("removed_tool",)
    assert d.loaded() == ("alpha",)


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"version": 2, "loaded": []},
        {"version": 1},
        {"version": 1, "loaded": "alpha"},
        {"version": 1, "loaded": ["alpha", 3]},
        {"version": 1, "loaded": [""]},
        ["alpha"],
    ],
)
def test_unreadable_snapshots_are_refused(data: object) -> None:
    with pytest.raises(SnapshotError):
        LoadedSet.from_dict(data)  # type: ignore[arg-type]


def test_restore_refuses_what_is_not_a_snapshot() -> None:
    with pytest.raises(SnapshotError):
        Disclosure(CATALOG).restore({"version": 1, "loaded": []})  # type: ignore[arg-type]


def test_snapshot_from_dict_is_canonical() -> None:
    assert LoadedSet.from_dict({"version": 1, "loaded": ["b", "a", "b"]}).loaded == ("a", "b")


def test_concurrent_loads_add_each_tool_exactly_once() -> None:
    d = Disclosure(CATALOG)
    results = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        results.append(d.load(CATALOG.names))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    added = [name for r in results for name in r.added]
    assert sorted(added) == sorted(CATALOG.names)


# --- gate -----------------------------------------------------------------------------------


def test_visible_tools_pass() -> None:
    d = Disclosure(CATALOG, always={"alpha"})
    d.load(["bravo"])
    gate = Gate(d)
    for name in ("alpha", "bravo"):
        verdict = gate.check(name)
        assert verdict.allowed
        assert verdict.stage == "tooldisclose"


def test_cataloged_but_not_loaded_is_a_retryable_denial_that_loads_it() -> None:
    d = Disclosure(CATALOG)
    gate = Gate(d)
    verdict = gate.check("charlie")
    assert verdict.decision is Decision.DENY
    assert verdict.kind is toolfail.Kind.NOT_LOADED
    assert verdict.retryable is True
    assert "call it again now" in verdict.reason
    assert "schema is loaded now" in verdict.reason
    assert d.loaded() == ("charlie",)
    assert gate.check("charlie").allowed


def test_uncataloged_tool_is_forbidden_never_loaded_and_stays_forbidden() -> None:
    d = Disclosure(CATALOG)
    gate = Gate(d)
    for _ in range(3):
        verdict = gate.check("echo_log")
        assert verdict.decision is Decision.DENY
        assert verdict.kind is toolfail.Kind.FORBIDDEN
        assert verdict.retryable is False
    assert d.visible() == ()
    assert "No such tool 'echo_log'" in verdict.reason
    assert "listed in the catalog" in verdict.reason
    assert "echo_logs" in verdict.reason  # the closest catalog tool is suggested


def test_empty_tool_name_is_forbidden() -> None:
    verdict = Gate(Disclosure(CATALOG)).check("")
    assert verdict.kind is toolfail.Kind.FORBIDDEN
    assert "Closest" not in verdict.reason


@given(st.text(max_size=20).filter(lambda n: n not in CATALOG))
def test_no_uncataloged_name_ever_passes_or_loads(name: str) -> None:
    d = Disclosure(CATALOG, always={"alpha"})
    gate = Gate(d)
    first, second = gate.check(name), gate.check(name)
    assert first.kind is second.kind is toolfail.Kind.FORBIDDEN
    assert not first.allowed
    assert not second.allowed
    assert d.visible() == ("alpha",)


def test_gate_names_its_stage() -> None:
    verdict = Gate(Disclosure(CATALOG), stage="disclosure").check("alpha")
    assert verdict.stage == "disclosure"


# --- the gate as a ring of the chain ---------------------------------------------------------


async def run(call: Call) -> str:
    return f"ran {call.tool}"


@pytest.mark.anyio
async def test_stage_retry_goes_through_the_normal_path() -> None:
    d = Disclosure(CATALOG)
    stage = Stage(Gate(d))
    assert stage.name == "tooldisclose"
    seen: list[str] = []

    async def audit(call: Call) -> Verdict:
        seen.append(call.tool)
        return Verdict.allow()

    chain = Chain([stage, FuncStage("audit", audit)])
    first = await chain.invoke(Call("delta"), run)
    assert not first.executed
    assert first.verdict.kind is toolfail.Kind.NOT_LOADED
    assert first.verdict.stage == "tooldisclose"
    assert seen == []  # the denial stopped the chain: nothing after the gate ran

    retry = await chain.invoke(Call("delta"), run)
    assert retry.executed
    assert retry.result == "ran delta"
    assert seen == ["delta"]  # the retry passed every later ring too


@pytest.mark.anyio
async def test_stage_never_executes_an_uncataloged_tool() -> None:
    chain = Chain([Stage(Gate(Disclosure(CATALOG)))])
    for _ in range(2):
        outcome = await chain.invoke(Call("rm_everything"), run)
        assert not outcome.executed
        assert outcome.verdict.kind is toolfail.Kind.FORBIDDEN
        assert not outcome.verdict.retryable
