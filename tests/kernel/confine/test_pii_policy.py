"""pii runtime policy: values, atomic swaps with generations, subscriptions."""

from __future__ import annotations

import threading

import pytest

from yagent.kernel.confine import pii
from yagent.kernel.confine.pii import (
    Action,
    Kind,
    Policy,
    PolicyError,
    PolicyGeneration,
    PolicyStore,
    ReentrantSwapError,
    StaleGenerationError,
    Strength,
    Surface,
    apply,
)

# -- policy value and store ----------------------------------------------------------------------


def test_policy_accepts_names_and_refuses_unknown_values() -> None:
    p = Policy(model="block", strength="partial", kinds=frozenset({"email"}))  # type: ignore[arg-type]
    assert p.model is Action.BLOCK
    assert p.strength is Strength.PARTIAL
    assert p.kinds == {Kind.EMAIL}
    for bad in (
        {"model": "shout"},
        {"strength": "medium"},
        {"kinds": frozenset({"ssn"})},
        {"kinds": "email"},
        {"log": None},
    ):
        with pytest.raises(PolicyError):
            Policy(**bad)  # type: ignore[arg-type]
    assert Policy().with_action(Surface.LOG, Action.OFF).log is Action.OFF
    assert Policy().with_action(Surface.LOG, Action.OFF).model is Action.MASK


def test_swap_changes_the_next_call_and_generation() -> None:
    store = PolicyStore()
    first = apply("13812345678", Surface.MODEL, store=store)
    assert first.generation == 0
    swapped = store.set_action(Surface.MODEL, Action.BLOCK)
    assert swapped.snapshot.generation == 1 == store.generation
    assert swapped.previous.generation == 0
    second = apply("13812345678", Surface.MODEL, store=store)
    assert second.blocked
    assert second.generation == 1


def test_compare_and_swap() -> None:
    store = PolicyStore()
    store.compare_and_swap(0, Policy(log=Action.OFF))
    with pytest.raises(StaleGenerationError):
        store.compare_and_swap(0, Policy())
    assert store.snapshot().policy.log is Action.OFF


def test_swap_func_keeps_a_concurrent_update() -> None:
    store = PolicyStore()
    raced = False

    def mutate(p: Policy) -> Policy:
        nonlocal raced
        if not raced:
            raced = True
            store.swap(p.with_action(Surface.LOG, Action.OFF))
        return p.with_action(Surface.MODEL, Action.BLOCK)

    landed = store.swap_func(mutate).snapshot
    assert landed.generation == 2
    assert landed.policy.model is Action.BLOCK
    assert landed.policy.log is Action.OFF


def test_concurrent_writers_get_unique_generations() -> None:
    store = PolicyStore()
    gens: list[int] = []
    lock = threading.Lock()

    def worker(surface: Surface) -> None:
        for i in range(50):
            action = (Action.OFF, Action.MASK, Action.BLOCK)[i % 3]
            gen = store.set_action(surface, action).snapshot.generation
            with lock:
                gens.append(gen)

    threads = [threading.Thread(target=worker, args=(s,)) for s in Surface]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(gens) == list(range(1, 151))
    final = store.snapshot().policy
    assert (final.model, final.log, final.display) == (Action.MASK,) * 3  # i=49 -> MASK, none lost


def test_subscribers_are_told_and_can_leave() -> None:
    store = PolicyStore()
    seen: list[tuple[int, int]] = []
    token = store.subscribe(lambda old, new: seen.append((old.generation, new.generation)))
    store.swap(Policy(log=Action.OFF))
    store.swap(Policy(log=Action.BLOCK))
    assert seen == [(0, 1), (1, 2)]
    assert store.unsubscribe(token)
    assert not store.unsubscribe(token)
    store.swap(Policy())
    assert seen == [(0, 1), (1, 2)]


def test_raising_subscriber_does_not_undo_the_swap() -> None:
    store = PolicyStore()
    later: list[int] = []

    def bad(old: PolicyGeneration, new: PolicyGeneration) -> None:
        raise RuntimeError("subscriber broke")

    bad_token = store.subscribe(bad)
    store.subscribe(lambda old, new: later.append(new.generation))
    swapped = store.swap(Policy(model=Action.BLOCK))
    assert store.snapshot().policy.model is Action.BLOCK
    assert store.generation == 1
    assert later == [1]
    assert swapped.notified
    assert [f.token for f in swapped.failures] == [bad_token]
    assert isinstance(swapped.failures[0].error, RuntimeError)


def test_subscriber_may_not_swap_from_its_callback() -> None:
    store = PolicyStore()

    def meddler(old: PolicyGeneration, new: PolicyGeneration) -> None:
        store.swap(Policy(model=Action.OFF))

    store.subscribe(meddler)
    swapped = store.swap(Policy(model=Action.BLOCK))
    assert isinstance(swapped.failures[0].error, ReentrantSwapError)
    assert store.snapshot().policy.model is Action.BLOCK
    assert store.generation == 1
    store.swap_func(lambda p: p)  # the store is usable afterwards
    assert store.generation == 2


def test_notifications_arrive_in_generation_order_and_may_coalesce() -> None:
    store = PolicyStore()
    seen: list[int] = []
    entered = threading.Event()
    release = threading.Event()

    def slow(old: PolicyGeneration, new: PolicyGeneration) -> None:
        seen.append(new.generation)
        if new.generation == 1:
            entered.set()
            assert release.wait(10)

    store.subscribe(slow)
    results: list[pii.Swapped] = []
    first = threading.Thread(target=lambda: results.append(store.swap(Policy(log=Action.OFF))))
    first.start()
    assert entered.wait(10)
    others = [
        threading.Thread(target=lambda: results.append(store.swap(Policy(log=Action.BLOCK))))
        for _ in range(2)
    ]
    for t in others:
        t.start()
    while store.generation < 3:
        threading.Event().wait(0.001)
    release.set()
    for t in (first, *others):
        t.join(10)
    assert seen == [1, 3]
    assert sorted(r.notified for r in results) == [False, True, True]
