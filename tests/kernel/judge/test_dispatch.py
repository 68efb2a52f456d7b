"""dispatch: permission is topology — cycles refused at construction, every refusal structured."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.judge import dispatch, invoke, toolfail
from yagent.kernel.judge.dispatch import (
    CycleError,
    DenyError,
    Guard,
    MappingSource,
    Refusal,
    TopologyError,
    UnknownSlugError,
)

# --- synthetic topologies (reusable: each is slug -> allowed slugs) -------------------------------


def chain(n: int) -> dict[str, list[str]]:
    names = [f"n{i}" for i in range(n)]
    return {a: [b] for a, b in itertools.pairwise(names)} | {names[-1]: []}


DIAMOND = {"top": ["left", "right"], "left": ["bottom"], "right": ["bottom"], "bottom": []}
STAR = {"hub": ["s1", "s2", "s3", "s4"], "s1": [], "s2": [], "s3": [], "s4": []}
CYCLES = {
    1: {"a": ["a"]},
    2: {"a": ["b"], "b": ["a"]},
    3: {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]},
}


def guard(edges: Mapping[str, Iterable[str]], max_depth: int = 8) -> Guard:
    return Guard(MappingSource(edges), max_depth)


def rule_of(g: Guard, caller: object, callee: object, depth: object) -> Refusal | None:
    try:
        g.check(caller, callee, depth)  # type: ignore[arg-type]
    except DenyError as exc:
        return exc.rule
    return None


def test_chain_allows_exactly_its_edges() -> None:
    g = guard(chain(4))
    assert g.slugs == ("n0", "n1", "n2", "n3")
    for a, b in itertools.permutations(g.slugs, 2):
        expected = None if (a, b) in {("n0", "n1"), ("n1", "n2"), ("n2", "n3")} else "refused"
        assert (rule_of(g, a, b, 0) is None) == (expected is None), (a, b)
    assert rule_of(g, "n0", "n2", 0) is Refusal.NOT_ALLOWED


def test_diamond_shares_a_callee_without_being_a_cycle() -> None:
    g = guard(DIAMOND)
    assert g.permits("left", "bottom", 1)
    assert g.permits("right", "bottom", 1)
    assert not g.permits("bottom", "top", 2)
    assert g.allowed("top") == frozenset({"left", "right"})
    assert g.allowed("nobody") == frozenset()


def test_star_hub_reaches_every_spoke_and_spokes_reach_nothing() -> None:
    g = guard(STAR, max_depth=1)
    assert all(g.permits("hub", s, 0) for s in ("s1", "s2", "s3", "s4"))
    assert rule_of(g, "s1", "s2", 1) is Refusal.DEPTH
    with pytest.raises(DenyError) as err:
        g.check("s1", "s2", 0)
    assert err.value.rule is Refusal.NOT_ALLOWED
    assert "nobody" in str(err.value)


@pytest.mark.parametrize(
    ("length", "cycle"),
    [(1, ("a", "a")), (2, ("a", "b", "a")), (3, ("a", "b", "c", "a"))],
)
def test_cycles_are_refused_at_construction_and_named(length: int, cycle: tuple[str, ...]) -> None:
    with pytest.raises(CycleError) as err:
        guard(CYCLES[length])
    assert err.value.cycle == cycle
    assert " -> ".join(cycle) in str(err.value)


def test_cycle_reported_is_the_cycle_not_the_path_into_it() -> None:
    with pytest.raises(CycleError) as err:
        guard({"a": ["b"], "b": ["c"], "c": ["d"], "d": ["c"]})
    assert err.value.cycle == ("c", "d", "c")


def test_edge_to_an_unknown_slug_is_refused() -> None:
    with pytest.raises(UnknownSlugError) as err:
        guard({"a": ["b", "ghost"], "b": []})
    assert (err.value.slug, err.value.target) == ("a", "ghost")


class Source:
    def __init__(self, slugs: object, allow: object) -> None:
        self._slugs, self._allow = slugs, allow

    def slugs(self) -> Iterable[str]:
        if isinstance(self._slugs, Exception):
            raise self._slugs
        return self._slugs  # type: ignore[return-value]

    def dispatch_allow(self, slug: str) -> Iterable[str]:
        if isinstance(self._allow, Exception):
            raise self._allow
        return self._allow  # type: ignore[return-value]


@pytest.mark.parametrize(
    "source",
    [
        Source(RuntimeError("down"), []),
        Source("ab", []),
        Source(["a", ""], []),
        Source(["a", 3], []),
        Source(5, []),
        Source(["a"], KeyError("a")),
        Source(["a"], "b"),
        Source(["a"], [None]),
    ],
)
def test_an_unreadable_source_is_refused(source: Source) -> None:
    assert isinstance(source, dispatch.EdgeSource)
    with pytest.raises(TopologyError):
        Guard(source, 3)


@pytest.mark.parametrize("max_depth", [-1, True, 1.5, "2"])
def test_max_depth_must_be_a_non_negative_int(max_depth: object) -> None:
    with pytest.raises(TopologyError):
        Guard(MappingSource(DIAMOND), max_depth)  # type: ignore[arg-type]


def test_rules_and_their_order() -> None:
    g = guard(DIAMOND, max_depth=2)
    assert rule_of(g, "top", "top", 0) is Refusal.SELF_DISPATCH
    assert rule_of(g, "ghost", "ghost", 0) is Refusal.SELF_DISPATCH
    assert rule_of(g, "ghost", "top", 9) is Refusal.UNKNOWN_CALLER
    assert rule_of(g, 7, "top", 0) is Refusal.UNKNOWN_CALLER
    assert rule_of(g, "top", "ghost", 9) is Refusal.UNKNOWN_CALLEE
    assert rule_of(g, "top", None, 0) is Refusal.UNKNOWN_CALLEE
    assert rule_of(g, "bottom", "top", 2) is Refusal.DEPTH
    assert rule_of(g, "bottom", "top", 1) is Refusal.NOT_ALLOWED
    for junk in (-1, "1", 1.0, True, None):
        assert rule_of(g, "top", "left", junk) is Refusal.DEPTH


def test_depth_limit_counts_the_callees_depth() -> None:
    g = guard(chain(5), max_depth=2)
    assert g.max_depth == 2
    assert g.permits("n0", "n1", 0)
    assert g.permits("n1", "n2", 1)
    assert rule_of(g, "n2", "n3", 2) is Refusal.DEPTH
    assert rule_of(guard(chain(2), max_depth=0), "n0", "n1", 0) is Refusal.DEPTH


def test_deny_error_is_structured_and_classified() -> None:
    g = guard(DIAMOND, max_depth=3)
    with pytest.raises(DenyError) as err:
        g.check("left", "right", 1)
    e = err.value
    assert (e.rule, e.caller, e.callee, e.depth, e.max_depth) == (
        Refusal.NOT_ALLOWED,
        "left",
        "right",
        1,
        3,
    )
    assert "bottom" in str(e)
    assert isinstance(e, dispatch.DispatchError)
    assert toolfail.classify(e) is toolfail.Kind.PERMISSION


def test_matrix_is_materialised_once() -> None:
    edges = {"a": ["b"], "b": []}
    g = guard(edges)
    edges["a"].remove("b")
    edges["b"].append("a")
    edges["c"] = []
    assert g.permits("a", "b", 0)
    assert rule_of(g, "b", "a", 0) is Refusal.NOT_ALLOWED
    assert rule_of(g, "a", "c", 0) is Refusal.UNKNOWN_CALLEE


def test_find_cycle_is_deterministic_and_none_on_a_dag() -> None:
    assert dispatch.find_cycle(DIAMOND) is None
    assert dispatch.find_cycle({"b": ["a"], "a": ["b"]}) == ("a", "b", "a")
    assert dispatch.find_cycle({"x": ["y"]}) is None


# --- hypothesis: generated DAGs, and a DAG plus one back edge ------------------------------------


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[str], dict[str, list[str]]]:
    """A DAG over shuffled names: edges only go forward in a hidden topological order."""
    n = draw(st.integers(1, 8))
    order = draw(st.permutations([f"s{i}" for i in range(n)]))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    edges: dict[str, list[str]] = {name: [] for name in order}
    for i, j in chosen:
        edges[order[i]].append(order[j])
    return list(order), edges


def reaches(edges: Mapping[str, list[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(edges[node])
    return False


@given(dag=dags(), max_depth=st.integers(0, 4), depth=st.integers(0, 5))
def test_every_dag_is_accepted_and_check_follows_the_matrix(
    dag: tuple[list[str], dict[str, list[str]]], max_depth: int, depth: int
) -> None:
    _, edges = dag
    g = guard(edges, max_depth)
    for a, b in itertools.product(edges, repeat=2):
        expected = a != b and b in edges[a] and depth < max_depth
        assert g.permits(a, b, depth) is expected


@given(dag=dags(), data=st.data())
def test_a_back_edge_on_a_path_is_always_refused(
    dag: tuple[list[str], dict[str, list[str]]], data: st.DataObject
) -> None:
    order, edges = dag
    pairs = [(a, b) for a, b in itertools.product(order, repeat=2) if reaches(edges, a, b)]
    a, b = data.draw(st.sampled_from(pairs))  # a reaches b (a == b included: a self-edge)
    edges[b].append(a)
    with pytest.raises(CycleError) as err:
        guard(edges)
    cycle = err.value.cycle
    assert cycle[0] == cycle[-1]
    assert all(y in edges[x] for x, y in itertools.pairwise(cycle))


# --- the Stage adapter ------------------------------------------------------------------------


def delegation_of(call: invoke.Call) -> dispatch.Delegation | None:
    if call.tool != "delegate":
        return None
    return (call.caller, str(call.args["to"]), call.depth)


async def execute(call: invoke.Call) -> str:
    return "delegated"


@pytest.mark.anyio
async def test_stage_judges_delegations_and_passes_other_calls() -> None:
    g = guard(DIAMOND, max_depth=2)
    chain_ = invoke.Chain([dispatch.stage(g, delegation_of)])
    ok = await chain_.invoke(invoke.Call("delegate", {"to": "left"}, caller="top"), execute)
    assert ok.executed
    other = await chain_.invoke(invoke.Call("read", caller="bottom", depth=99), execute)
    assert other.executed
    refused = await chain_.invoke(invoke.Call("delegate", {"to": "top"}, caller="left"), execute)
    assert not refused.executed
    v = refused.verdict
    assert (v.decision, v.kind, v.retryable, v.stage) == (
        invoke.Decision.DENY,
        toolfail.Kind.PERMISSION,
        False,
        "dispatch",
    )
    assert isinstance(v.cause, DenyError)
    assert v.cause.rule is Refusal.NOT_ALLOWED
    deep = await chain_.invoke(
        invoke.Call("delegate", {"to": "bottom"}, caller="left", depth=2), execute
    )
    assert isinstance(deep.verdict.cause, DenyError)
    assert deep.verdict.cause.rule is Refusal.DEPTH


@pytest.mark.anyio
async def test_stage_with_a_broken_mapping_fails_closed() -> None:
    g = guard(DIAMOND)
    chain_ = invoke.Chain([dispatch.stage(g, delegation_of, name="topology")])
    outcome = await chain_.invoke(invoke.Call("delegate", caller="top"), execute)
    assert not outcome.executed
    assert outcome.verdict.stage == "topology"
    assert outcome.verdict.kind is toolfail.Kind.INTERNAL
