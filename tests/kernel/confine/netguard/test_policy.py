"""Allow (the named opening) and the atomically swapped extension policy."""

from __future__ import annotations

import threading

import pytest

from yagent.kernel.confine.netguard import (
    OPENABLE,
    STRICT,
    AddrClass,
    Allow,
    NameBlockedError,
    Policy,
    PolicyError,
    PolicyStore,
    StaleGenerationError,
    check,
)

from .conftest import PUBLIC, MapResolver


def test_zero_allow_is_strict() -> None:
    assert Allow() == STRICT
    assert STRICT.opens("127.0.0.1", 80) == frozenset()


def test_flags_open_only_their_class() -> None:
    assert Allow(loopback=True).opens("x", 1) == {AddrClass.LOOPBACK}
    assert Allow(private=True).opens("x", 1) == {AddrClass.PRIVATE}
    assert Allow(loopback=True, private=True).opens("x", 1) == OPENABLE


@pytest.mark.parametrize(
    ("entry", "host", "port", "opened"),
    [
        ("svc.test", "svc.test", 1234, True),
        ("SVC.test.", "svc.test", 1, True),
        ("svc.test:8080", "svc.test", 8080, True),
        ("svc.test:8080", "svc.test", 8081, False),
        ("127.0.0.1:5000", "127.0.0.1", 5000, True),
        ("127.0.0.1:5000", "127.0.0.1", 5001, False),
        ("[::1]:80", "::1", 80, True),
        ("[::1]", "::1", 9, True),
        ("::1", "::1", 9, True),
        ("svc.test", "other.test", 1, False),
    ],
)
def test_hosts_open_named_origins_only(entry: str, host: str, port: int, opened: bool) -> None:
    assert (Allow(hosts=frozenset({entry})).opens(host, port) == OPENABLE) is opened


@pytest.mark.parametrize("entry", ["127.1", "a b", "[::1]x", "h:0", "h:99999", "[zz]", "0x7f.1:80"])
def test_bad_allow_entries_refused(entry: str) -> None:
    with pytest.raises(PolicyError):
        Allow(hosts=frozenset({entry}))


def test_allow_hosts_must_be_a_collection() -> None:
    with pytest.raises(PolicyError):
        Allow(hosts="svc.test")  # type: ignore[arg-type]


def test_policy_patterns() -> None:
    p = Policy(blocked=("Evil.COM.", "*.bad.test"), allowed=("api.svc.internal",))
    assert p.blocks("evil.com")
    assert p.blocks("x.bad.test")
    assert not p.blocks("bad.test")
    assert not p.blocks("notevil.com")
    assert p.allows("api.svc.internal")
    assert not p.allows("other.svc.internal")
    assert p.with_blocked(["x.test"]).blocks("x.test")
    assert p.with_allowed(["y.internal"]).allows("y.internal")


@pytest.mark.parametrize("pattern", ["*.", "a..b", "*.10.0.0.1", "2130706433", "bad name"])
def test_bad_patterns_refused(pattern: str) -> None:
    with pytest.raises(PolicyError):
        Policy(blocked=(pattern,))


def test_policy_lists_must_be_sequences() -> None:
    with pytest.raises(PolicyError):
        Policy(blocked="evil.com")  # type: ignore[arg-type]


def test_store_generation_and_snapshot() -> None:
    store = PolicyStore()
    first = store.snapshot()
    assert first.generation == 0
    second = store.swap(Policy(blocked=("a.test",)))
    assert second.generation == 1 == store.generation
    assert store.snapshot().policy.blocks("a.test")
    assert first.policy.blocked == ()  # an old snapshot is never mutated


def test_compare_and_swap_refuses_stale_generation() -> None:
    store = PolicyStore()
    store.compare_and_swap(0, Policy(blocked=("a.test",)))
    with pytest.raises(StaleGenerationError) as info:
        store.compare_and_swap(0, Policy())
    assert (info.value.expected, info.value.actual) == (0, 1)
    assert store.snapshot().policy.blocks("a.test")


def test_swap_func_retries_when_another_writer_lands_first() -> None:
    store = PolicyStore()
    raced = False

    def mutate(p: Policy) -> Policy:
        nonlocal raced
        if not raced:
            raced = True
            store.swap(p.with_blocked(["other.test"]))  # a concurrent writer lands here
        return p.with_blocked(["mine.test"])

    snap = store.swap_func(mutate)
    assert snap.generation == 2
    assert snap.policy.blocks("mine.test")
    assert snap.policy.blocks("other.test")  # not lost


def test_concurrent_swap_func_loses_no_update_and_generations_are_unique() -> None:
    store = PolicyStore()
    seen: list[int] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        for j in range(25):
            snap = store.swap_func(lambda p, n=f"w{i}-{j}.test": p.with_blocked([n]))
            with lock:
                seen.append(snap.generation)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = store.snapshot()
    assert final.generation == 200
    assert len(final.policy.blocked) == 200
    assert sorted(seen) == list(range(1, 201))


@pytest.mark.anyio
async def test_blocked_extension_beats_every_allow() -> None:
    store = PolicyStore(Policy(blocked=("*.evil.test",)))
    resolver = MapResolver({"a.evil.test": [PUBLIC]})
    opened = Allow(loopback=True, private=True, hosts=frozenset({"a.evil.test"}))
    with pytest.raises(NameBlockedError, match="policy"):
        await check("http://a.evil.test/", opened, resolver=resolver, policy=store)
    assert resolver.calls == []  # refused before resolution


@pytest.mark.anyio
async def test_blocked_extension_applies_to_literals() -> None:
    store = PolicyStore(Policy(blocked=("8.8.8.8",)))
    with pytest.raises(NameBlockedError):
        await check("http://8.8.8.8/", policy=store)


@pytest.mark.anyio
async def test_allowed_extension_opens_name_layer_but_addresses_still_judged() -> None:
    store = PolicyStore(Policy(allowed=("api.svc.internal",)))
    public = MapResolver({"api.svc.internal": [PUBLIC], "db.svc.internal": [PUBLIC]})
    checked = await check("http://api.svc.internal/", resolver=public, policy=store)
    assert checked.generation == 0
    with pytest.raises(NameBlockedError):
        await check("http://db.svc.internal/", resolver=public, policy=store)
    private = MapResolver({"api.svc.internal": ["10.1.1.1"]})
    with pytest.raises(Exception, match="private"):
        await check("http://api.svc.internal/", resolver=private, policy=store)


@pytest.mark.anyio
async def test_allowed_extension_cannot_open_metadata_names() -> None:
    store = PolicyStore(Policy(allowed=("metadata.google.internal",)))
    with pytest.raises(NameBlockedError, match="metadata"):
        await check("http://metadata.google.internal/", policy=store)


@pytest.mark.anyio
async def test_swap_takes_effect_for_the_next_check() -> None:
    store = PolicyStore()
    resolver = MapResolver({"x.test": [PUBLIC]})
    assert (await check("http://x.test/", resolver=resolver, policy=store)).generation == 0
    store.swap(Policy(blocked=("x.test",)))
    with pytest.raises(NameBlockedError):
        await check("http://x.test/", resolver=resolver, policy=store)
