"""check(): every invariant reported, by rule, and nothing reported for a sound snapshot."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.durable.taskboard import (
    BoardState,
    Invariant,
    Lease,
    Status,
    Task,
    Violation,
    check,
)


def snap(*tasks: Task) -> BoardState:
    return BoardState(tasks, 0.0)


def rules_of(snapshot: BoardState) -> list[tuple[str, Invariant]]:
    return [(v.task_id, v.rule) for v in check(snapshot)]


def claimed(task_id: str, *deps: str, owner: str = "A") -> Task:
    return Task(task_id, Status.CLAIMED, deps, owner=owner, lease=Lease("t-" + task_id, owner, 9.0))


def test_a_sound_snapshot_has_no_violations() -> None:
    assert check(snap()) == ()
    sound = snap(
        Task("a", Status.DONE, result="r"),
        claimed("b", "a"),
        Task("c", Status.FAILED, ("a",), result="boom"),
        Task("d", Status.OPEN, ("b", "c")),
        Task("e", Status.CANCELLED),
    )
    assert check(sound) == ()


def test_duplicate_ids() -> None:
    assert rules_of(snap(Task("a"), Task("a"), Task("b"))) == [("a", Invariant.DUPLICATE_ID)]


def test_missing_dependencies() -> None:
    got = check(snap(Task("a", depends_on=("x", "y"))))
    assert [(v.task_id, v.rule) for v in got] == [("a", Invariant.MISSING_DEPENDENCY)]
    assert "x" in got[0].detail
    assert "y" in got[0].detail


def test_dependency_cycles_name_every_task_on_them_and_only_those() -> None:
    assert rules_of(snap(Task("a", depends_on=("a",)))) == [("a", Invariant.DEPENDENCY_CYCLE)]
    got = rules_of(
        snap(
            Task("tail", depends_on=("a",)),
            Task("a", depends_on=("b",)),
            Task("b", depends_on=("c",)),
            Task("c", depends_on=("a",)),
            Task("free"),
        )
    )
    assert got == [
        ("a", Invariant.DEPENDENCY_CYCLE),
        ("b", Invariant.DEPENDENCY_CYCLE),
        ("c", Invariant.DEPENDENCY_CYCLE),
    ]


def test_claimed_requires_a_lease_held_by_the_owner() -> None:
    no_lease = Task("a", Status.CLAIMED, owner="A")
    no_owner = Task("b", Status.CLAIMED, lease=Lease("t", "B", 1.0))
    wrong_owner = Task("c", Status.CLAIMED, owner="A", lease=Lease("t2", "B", 1.0))
    assert rules_of(snap(no_lease, no_owner, wrong_owner)) == [
        ("a", Invariant.CLAIM_WITHOUT_LEASE),
        ("b", Invariant.CLAIM_WITHOUT_LEASE),
        ("c", Invariant.CLAIM_WITHOUT_LEASE),
    ]


def test_a_lease_or_owner_without_a_claim() -> None:
    leased = Task("a", Status.OPEN, lease=Lease("t", "A", 1.0))
    owned = Task("b", Status.FAILED, owner="B")
    assert rules_of(snap(leased, owned)) == [
        ("a", Invariant.LEASE_WITHOUT_CLAIM),
        ("b", Invariant.OWNER_WITHOUT_CLAIM),
    ]


def test_no_claim_while_a_dependency_is_unfinished() -> None:
    for status in (Status.OPEN, Status.FAILED, Status.CANCELLED):
        got = rules_of(snap(Task("a", status), claimed("b", "a")))
        assert got == [("b", Invariant.CLAIMED_WHILE_BLOCKED)]
    assert rules_of(snap(claimed("a"), claimed("b", "a", owner="B"))) == [
        ("b", Invariant.CLAIMED_WHILE_BLOCKED)
    ]


def test_terminal_tasks_have_no_owner() -> None:
    got = rules_of(snap(Task("a", Status.DONE, owner="A"), Task("b", Status.CANCELLED, owner="B")))
    assert got == [("a", Invariant.TERMINAL_WITH_OWNER), ("b", Invariant.TERMINAL_WITH_OWNER)]


def test_violations_are_data() -> None:
    (only,) = check(snap(Task("a", Status.DONE, owner="A")))
    assert only == Violation("a", Invariant.TERMINAL_WITH_OWNER, only.detail)
    assert "A" in only.detail


@st.composite
def graphs(draw: st.DrawFn) -> dict[str, tuple[str, ...]]:
    n = draw(st.integers(1, 7))
    ids = [f"t{i}" for i in range(n)]
    return {i: tuple(draw(st.sets(st.sampled_from(ids), max_size=3))) for i in ids}


def _on_cycle(graph: dict[str, tuple[str, ...]]) -> set[str]:
    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(graph[node])
        return seen

    return {node for node in graph if node in reach(node)}


@given(graphs())
def test_cycle_detection_matches_reachability(graph: dict[str, tuple[str, ...]]) -> None:
    tasks = snap(*(Task(i, depends_on=tuple(sorted(d))) for i, d in graph.items()))
    found = {v.task_id for v in check(tasks) if v.rule is Invariant.DEPENDENCY_CYCLE}
    assert found == _on_cycle(graph)
