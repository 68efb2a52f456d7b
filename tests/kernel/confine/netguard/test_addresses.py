"""Address classes: every blocked range, every IPv4-in-IPv6 embedding, public ones pass."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.confine.netguard import AddrClass, classify

A = AddrClass


@pytest.mark.parametrize(
    ("addr", "cls"),
    [
        ("0.0.0.0", A.UNSPECIFIED),
        ("0.1.2.3", A.UNSPECIFIED),
        ("10.1.2.3", A.PRIVATE),
        ("100.64.0.1", A.PRIVATE),
        ("100.127.255.254", A.PRIVATE),
        ("127.0.0.1", A.LOOPBACK),
        ("127.255.255.254", A.LOOPBACK),
        ("169.254.1.1", A.LINK_LOCAL),
        ("169.254.169.254", A.METADATA),
        ("169.254.170.2", A.METADATA),
        ("100.100.100.200", A.METADATA),
        ("172.16.0.1", A.PRIVATE),
        ("172.31.255.255", A.PRIVATE),
        ("192.0.0.8", A.RESERVED),
        ("192.0.2.5", A.DOCUMENTATION),
        ("192.88.99.1", A.RESERVED),
        ("192.168.0.1", A.PRIVATE),
        ("198.18.0.1", A.RESERVED),
        ("198.19.255.255", A.RESERVED),
        ("198.51.100.7", A.DOCUMENTATION),
        ("203.0.113.9", A.DOCUMENTATION),
        ("224.0.0.1", A.MULTICAST),
        ("239.255.255.250", A.MULTICAST),
        ("240.0.0.1", A.RESERVED),
        ("255.255.255.255", A.BROADCAST),
        ("::", A.UNSPECIFIED),
        ("::1", A.LOOPBACK),
        ("::ffff:127.0.0.1", A.LOOPBACK),
        ("::ffff:10.0.0.1", A.PRIVATE),
        ("::ffff:169.254.169.254", A.METADATA),
        ("::ffff:0:7f00:1", A.LOOPBACK),
        ("::127.0.0.1", A.LOOPBACK),
        ("::8.8.8.8", A.RESERVED),
        ("64:ff9b::127.0.0.1", A.LOOPBACK),
        ("64:ff9b::a9fe:a9fe", A.METADATA),
        ("64:ff9b::c0a8:101", A.PRIVATE),
        ("64:ff9b:1::8.8.8.8", A.TUNNEL),
        ("100::1", A.RESERVED),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", A.TUNNEL),
        ("2001:2::1", A.RESERVED),
        ("2001:db8::1", A.DOCUMENTATION),
        ("3fff::1", A.DOCUMENTATION),
        ("2002:7f00:1::", A.LOOPBACK),
        ("2002:a00:1::1", A.PRIVATE),
        ("2002:a9fe:a9fe::", A.METADATA),
        ("fc00::1", A.PRIVATE),
        ("fd12:3456::1", A.PRIVATE),
        ("fd00:ec2::254", A.METADATA),
        ("fe80::1", A.LINK_LOCAL),
        ("fe80::1%eth0", A.LINK_LOCAL),
        ("fec0::1", A.PRIVATE),
        ("ff02::1", A.MULTICAST),
        ("4000::1", A.RESERVED),
        ("5f00::1", A.RESERVED),
    ],
)
def test_blocked_classes(addr: str, cls: AddrClass) -> None:
    found = classify(ip_address(addr))
    assert found is not None, addr
    assert found.cls is cls
    assert found.reason


@pytest.mark.parametrize(
    "addr",
    [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.216.34",
        "100.63.255.255",
        "100.128.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "223.255.255.255",
        "2606:4700::1111",
        "2a00:1450:4001::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::8.8.8.8",
        "2002:808:808::1",
    ],
)
def test_public_addresses_pass(addr: str) -> None:
    assert classify(ip_address(addr)) is None


def test_embedding_reason_names_the_form() -> None:
    found = classify(ip_address("2002:7f00:1::"))
    assert found is not None
    assert "6to4" in found.reason
    assert "127.0.0.1" in found.reason


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_v4_judged_the_same_through_every_embedding(n: int) -> None:
    v4 = IPv4Address(n)
    direct = classify(v4)
    for wrapped in (
        IPv6Address((0xFFFF << 32) | n),  # ::ffff:a.b.c.d
        IPv6Address((0x0064FF9B << 96) | n),  # 64:ff9b::a.b.c.d
        IPv6Address((0x2002 << 112) | (n << 80)),  # 2002:aabb:ccdd::
    ):
        via = classify(wrapped)
        if direct is None:
            assert via is None, wrapped
        else:
            assert via is not None, wrapped
            assert via.cls is direct.cls


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_v6_outside_global_unicast_never_passes(n: int) -> None:
    ip = IPv6Address(n)
    embedded = (n >> 32) in (0xFFFF, 0x0064FF9B << 64) or (n >> 32) == 0
    if not (0x2000 << 112) <= n < (0x4000 << 112) and not embedded:
        assert classify(ip) is not None
