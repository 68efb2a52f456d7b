"""check / check_chain: resolution, the ANY-private rule, fail-closed resolution, hops, Allow."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from ipaddress import ip_address

import pytest

from yagent.kernel.confine.netguard import (
    AddressBlockedError,
    Allow,
    BlockedError,
    Guard,
    Layer,
    NameBlockedError,
    Phase,
    ResolveBlockedError,
    SchemeBlockedError,
    SystemResolver,
    URLBlockedError,
    check,
    check_chain,
)

from .conftest import PUBLIC, MapResolver


@pytest.mark.anyio
async def test_public_name_passes_with_all_addresses() -> None:
    resolver = MapResolver({"example.com": [PUBLIC, "2606:2800:220:1::1", PUBLIC]})
    checked = await check("https://example.com/path", resolver=resolver)
    assert checked.target.host == "example.com"
    assert checked.addresses == (ip_address(PUBLIC), ip_address("2606:2800:220:1::1"))
    assert checked.url == "https://example.com/path"


@pytest.mark.anyio
async def test_any_private_answer_blocks_the_name() -> None:
    resolver = MapResolver({"mixed.test": [PUBLIC, "10.0.0.7"]})
    with pytest.raises(AddressBlockedError) as info:
        await check("http://mixed.test/", resolver=resolver)
    assert info.value.address == "10.0.0.7"
    assert info.value.layer is Layer.ADDRESS
    assert info.value.phase is Phase.CHECK
    assert "10.0.0.7" in str(info.value)


@pytest.mark.anyio
async def test_resolver_answering_address_objects() -> None:
    class Objects:
        async def resolve(self, host: str, port: int) -> Sequence[object]:
            return [ip_address(PUBLIC)]

    checked = await check("http://x.test/", resolver=Objects())  # type: ignore[arg-type]
    assert checked.addresses == (ip_address(PUBLIC),)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answers", "why"),
    [([], "no address"), (["not-an-ip"], "non-address"), (["fe80::1%eth0", PUBLIC], "link-local")],
)
async def test_resolution_answers_fail_closed(answers: list[str], why: str) -> None:
    with pytest.raises(BlockedError, match=why):
        await check("http://x.test/", resolver=MapResolver({"x.test": answers}))


@pytest.mark.anyio
async def test_resolution_failure_is_a_block() -> None:
    with pytest.raises(ResolveBlockedError, match="gaierror") as info:
        await check("http://nowhere.test/", resolver=MapResolver({}))
    assert isinstance(info.value.__cause__, socket.gaierror)


@pytest.mark.anyio
async def test_resolver_may_refuse_itself() -> None:
    class Refusing:
        async def resolve(self, host: str, port: int) -> Sequence[str]:
            raise NameBlockedError("resolver policy", target=host)

    with pytest.raises(NameBlockedError, match="resolver policy"):
        await check("http://x.test/", resolver=Refusing())


@pytest.mark.anyio
async def test_literal_addresses_skip_resolution() -> None:
    resolver = MapResolver({})
    checked = await check("http://8.8.8.8:8080/", resolver=resolver)
    assert checked.addresses == (ip_address("8.8.8.8"),)
    assert resolver.calls == []


@pytest.mark.anyio
async def test_name_layer_refuses_before_resolution() -> None:
    resolver = MapResolver({"localhost": [PUBLIC]})
    with pytest.raises(NameBlockedError):
        await check("http://localhost/", resolver=resolver)
    assert resolver.calls == []


@pytest.mark.anyio
async def test_system_resolver_resolves_for_real() -> None:
    answers = await SystemResolver().resolve("localhost", 80)
    assert answers
    assert all(ip_address(a).is_loopback for a in answers)
    checked = await check("http://localhost/", Allow(loopback=True))
    assert all(a.is_loopback for a in checked.addresses)


@pytest.mark.anyio
async def test_allow_loopback_does_not_open_private_or_metadata() -> None:
    loop = Allow(loopback=True)
    await check("http://127.0.0.1/", loop)
    await check("http://[::1]/", loop)
    for url in (
        "http://10.0.0.1/",
        "http://169.254.169.254/",
        "http://[fe80::1]/",
        "http://0.0.0.0/",
    ):
        with pytest.raises(AddressBlockedError):
            await check(url, loop)


@pytest.mark.anyio
async def test_allow_private_opens_private_names_and_addresses_only() -> None:
    resolver = MapResolver({"db.internal": ["10.0.0.5"], "x.local": ["fd00::5"]})
    opened = Allow(private=True)
    await check("http://db.internal/", opened, resolver=resolver)
    await check("http://x.local/", opened, resolver=resolver)
    await check("http://100.64.1.1/", opened)
    with pytest.raises(NameBlockedError):
        await check("http://localhost/", opened)
    for url in ("http://127.0.0.1/", "http://100.100.100.200/", "http://[fd00:ec2::254]/"):
        with pytest.raises(AddressBlockedError):
            await check(url, opened)


@pytest.mark.anyio
async def test_allow_hosts_opens_one_origin() -> None:
    resolver = MapResolver({"svc.internal": ["10.0.0.9"], "other.internal": ["10.0.0.9"]})
    opened = Allow(hosts=frozenset({"svc.internal:8443"}))
    await check("https://svc.internal:8443/", opened, resolver=resolver)
    with pytest.raises(NameBlockedError):
        await check("https://svc.internal:8444/", opened, resolver=resolver)
    with pytest.raises(NameBlockedError):
        await check("https://other.internal:8443/", opened, resolver=resolver)
    plain = MapResolver({"svc.example": ["10.0.0.9"]})
    named = Allow(hosts=frozenset({"svc.example:8443"}))
    await check("https://svc.example:8443/", named, resolver=plain)
    with pytest.raises(AddressBlockedError):
        await check("https://svc.example:8444/", named, resolver=plain)


@pytest.mark.anyio
async def test_check_chain_judges_every_hop() -> None:
    resolver = MapResolver({"a.test": [PUBLIC], "b.test": [PUBLIC], "evil.test": ["192.168.0.1"]})
    chain = await check_chain(["http://a.test/", "https://b.test/x"], resolver=resolver)
    assert [c.target.host for c in chain] == ["a.test", "b.test"]
    with pytest.raises(AddressBlockedError) as info:
        await check_chain(
            ["http://a.test/", "http://b.test/", "http://evil.test/"], resolver=resolver
        )
    assert info.value.hop == 2
    assert "hop 2" in str(info.value)
    with pytest.raises(SchemeBlockedError) as scheme:
        await check_chain(["http://a.test/", "file:///etc/passwd"], resolver=resolver)
    assert scheme.value.hop == 1


@pytest.mark.anyio
async def test_first_hop_allow_does_not_open_later_hops() -> None:
    first = Allow(hosts=frozenset({"127.0.0.1:8000"}))
    await check_chain(["http://127.0.0.1:8000/"], first_hop=first)
    with pytest.raises(AddressBlockedError) as info:
        await check_chain(
            ["http://127.0.0.1:8000/", "http://127.0.0.1:8000/again"], first_hop=first
        )
    assert info.value.hop == 1
    with pytest.raises(AddressBlockedError) as strict:
        await check_chain(["http://127.0.0.1:8000/"])
    assert strict.value.hop == 0


@pytest.mark.anyio
async def test_chain_shape_and_length() -> None:
    with pytest.raises(URLBlockedError):
        await check_chain([])
    with pytest.raises(URLBlockedError):
        await check_chain("http://8.8.8.8/")  # type: ignore[arg-type]
    urls = ["http://8.8.8.8/"] * 4
    assert len(await check_chain(urls, max_hops=3)) == 4
    with pytest.raises(URLBlockedError, match="more than 2 redirects") as info:
        await check_chain(urls, max_hops=2)
    assert info.value.hop == 3


@pytest.mark.anyio
async def test_guard_screen_is_synchronous_and_judges_literals() -> None:
    guard = Guard(MapResolver({}))
    assert guard.screen("http://x.test/").host == "x.test"
    with pytest.raises(AddressBlockedError):
        guard.screen("http://10.0.0.1/")
    with pytest.raises(NameBlockedError):
        guard.screen("http://x.localhost/")
