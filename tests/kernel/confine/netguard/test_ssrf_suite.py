"""Adversarial SSRF suite: every payload is refused by the check AND never dialled by the client.

The resolver knows the names an attacker controls (nip.io style, mixed answers, IPv6 answers);
an unknown name fails resolution. Each payload goes through `check` (must raise BlockedError) and
through the real httpx client on the guarded transport with a recording backend that never opens
a socket (zero dials to any non-public address; for these payloads, zero dials at all). Legit URLs
with public answers are the control: they pass the check and ARE dialled, so the recorder is live.
"""

from __future__ import annotations

from ipaddress import ip_address

import httpx
import pytest

from yagent.kernel.confine.netguard import BlockedError, check, classify, new_client

from .conftest import PUBLIC, MapResolver, Recorder, SequenceResolver

ATTACKER_DNS = {
    "localtest.me": ["127.0.0.1"],
    "127.0.0.1.nip.io": ["127.0.0.1"],
    "10.0.0.1.nip.io": ["10.0.0.1"],
    "169.254.169.254.nip.io": ["169.254.169.254"],
    "mixed.example": [PUBLIC, "10.0.0.1"],
    "mixed6.example": ["2606:4700::1111", "fd00::1"],
    "v6loop.example": ["::1"],
    "meta.example": ["169.254.169.254"],
    "mapped.example": ["::ffff:10.0.0.1"],
    "nat64.example": ["64:ff9b::7f00:1"],
    "sixtofour.example": ["2002:c0a8:101::1"],
    "zero.example": ["0.0.0.0"],
    "cgnat.example": ["100.64.0.1"],
    "empty.example": [],
    "garbage.example": ["not-an-address"],
    "example.com": [PUBLIC],
    "good.com": [PUBLIC],
}

PAYLOADS = [
    # IPv4 numeric spellings
    "http://127.0.0.1/",
    "http://127.0.0.1:80/",
    "http://127.1/",
    "http://127.0.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0x7f.0x0.0x0.0x1/",
    "http://0177.0.0.1/",
    "http://0177.0000.0000.0001/",
    "http://017700000001/",
    "http://0x7f.1/",
    "http://127.000.000.001/",
    "http://0x7f.0.0.01/",
    "http://127.0x0.1/",
    "http://0/",
    "http://0.0.0.0/",
    "http://0x0/",
    "http://10.0.0.1/",
    "http://012.0.0.1/",
    "http://167772161/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://3232235777/",
    "http://0xc0.0xa8.0x1.0x1/",
    "http://0300.0250.0.1/",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/",
    "http://0xa9fea9fe/",
    "http://0251.0376.0251.0376/",
    "http://169.254.43518/",
    "http://100.100.100.200/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://240.0.0.1/",
    "http://192.0.2.1/",
    "http://198.18.0.1/",
    "http://127.0.0.1./",
    "http://127.1.2.3/",
    "http://127.0.0.1:65535/",
    "http://1.1.1.1.1/",
    "http://08.0.0.1/",
    # IPv6 forms
    "http://[::1]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::127.0.0.1]/",
    "http://[::8.8.8.8]/",
    "http://[64:ff9b::127.0.0.1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[64:ff9b:1::1]/",
    "http://[2002:7f00:1::]/",
    "http://[2002:a9fe:a9fe::1]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "http://[fc00::1]/",
    "http://[fd00:ec2::254]/",
    "http://[fe80::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fec0::1]/",
    "http://[ff02::1]/",
    "http://[2001:db8::1]/",
    "http://[::ffff:0:7f00:1]/",
    "http://[100::1]/",
    "http://[::1]:8080/",
    "http://[127.0.0.1]/",
    "http://[::1/",
    # userinfo and parser confusion
    "http://good.com@127.0.0.1/",
    "http://127.0.0.1#@good.com",
    "http://127.0.0.1?@good.com/",
    "http://good.com\\@127.0.0.1/",
    "http://127.0.0.1\\@good.com/",
    "http://user:pass@10.0.0.1/",
    "http://good.com:80@127.0.0.1/",
    "http://good.com%40127.0.0.1/",
    "http://%31%32%37.0.0.1/",
    "http://127.0.0.1%2f@good.com/",
    "http://127。0。0。1/",
    "http://127｡0｡0｡1/",
    "http://１２７.０.０.１/",
    "http://①②⑦.0.0.1/",
    "http://127.0.0\u200b.1/",
    "http://loc\u0430lhost/",
    " http://127.0.0.1/",
    "http://127.0.0.1\t/",
    "http:\\\\127.0.0.1\\",
    "http:/127.0.0.1/",
    "http:127.0.0.1",
    "http:///127.0.0.1/",
    "http://example.com:0/",
    "http://example.com:99999/",
    # names
    "http://localhost/",
    "http://LOCALHOST/",
    "http://localhost./",
    "http://foo.localhost/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata/",
    "http://metadata.google.internal./",
    "http://instance-data/",
    "http://printer.local/",
    "http://db.internal/",
    "http://router.lan/",
    "http://localtest.me/",
    "http://127.0.0.1.nip.io/",
    "http://10.0.0.1.nip.io/",
    "http://169.254.169.254.nip.io/",
    "http://mixed.example/",
    "http://mixed6.example/",
    "http://v6loop.example/",
    "http://meta.example/",
    "http://mapped.example/",
    "http://nat64.example/",
    "http://sixtofour.example/",
    "http://zero.example/",
    "http://cgnat.example/",
    "http://empty.example/",
    "http://garbage.example/",
    "http://unresolvable.example/",
    # schemes
    "file:///etc/passwd",
    "gopher://127.0.0.1:6379/_INFO",
    "ftp://example.com/",
    "ws://example.com/",
    "wss://example.com/",
    "data:text/plain,hello",
    "dict://127.0.0.1:11211/",
    "//example.com/",
    "/relative/path",
    "",
    "javascript:alert(1)",
    "jar:http://example.com!/",
    "netdoc:///etc/passwd",
]

LEGIT = [
    "http://example.com/",
    "https://example.com/search?q=1#top",
    "https://EXAMPLE.com.:443/a/b",
    "http://good.com/@127.0.0.1",
    "http://good.com/?next=http://127.0.0.1/",
    "http://8.8.8.8/",
    "http://[2606:4700::1111]/",
    "http://[::ffff:8.8.8.8]/",
]


def test_suite_is_large_enough() -> None:
    assert len(PAYLOADS) >= 80
    assert len(set(PAYLOADS)) == len(PAYLOADS)


@pytest.mark.anyio
@pytest.mark.parametrize("url", PAYLOADS)
async def test_payload_refused_by_check(url: str) -> None:
    with pytest.raises(BlockedError):
        await check(url, resolver=MapResolver(ATTACKER_DNS))


@pytest.mark.anyio
@pytest.mark.parametrize("url", PAYLOADS)
async def test_payload_never_dialled(url: str) -> None:
    rec = Recorder(live=False)
    async with new_client(resolver=MapResolver(ATTACKER_DNS), network_backend=rec) as client:
        with pytest.raises((BlockedError, httpx.InvalidURL, httpx.UnsupportedProtocol)):
            await client.get(url)
    assert rec.dials == []


@pytest.mark.anyio
@pytest.mark.parametrize("url", LEGIT)
async def test_legit_public_urls_pass_and_are_dialled(url: str) -> None:
    resolver = MapResolver(ATTACKER_DNS)
    checked = await check(url, resolver=resolver)
    assert all(classify(a) is None for a in checked.addresses)
    rec = Recorder(live=False)
    async with new_client(resolver=resolver, network_backend=rec) as client:
        with pytest.raises(httpx.ConnectError):  # the recorder has no network: it only records
            await client.get(url)
    assert len(rec.dials) == 1
    assert classify(ip_address(rec.dials[0][0])) is None


@pytest.mark.anyio
@pytest.mark.parametrize(
    "answers",
    [
        [[PUBLIC], ["127.0.0.1"]],
        [[PUBLIC], ["169.254.169.254"]],
        [[PUBLIC], ["10.0.0.1"]],
        [[PUBLIC], ["::ffff:127.0.0.1"]],
        [[PUBLIC], [PUBLIC, "192.168.0.1"]],
        [["2606:4700::1111"], ["fe80::1"]],
    ],
)
async def test_rebinding_resolver_never_reaches_private(answers: list[list[str]]) -> None:
    resolver = SequenceResolver(answers)
    await check("http://rebind.example/", resolver=resolver)  # first lookup: public, passes
    rec = Recorder(live=False)
    async with new_client(resolver=resolver, network_backend=rec) as client:
        with pytest.raises(BlockedError):
            await client.get("http://rebind.example/")  # second lookup: private, refused
    assert rec.dials == []
