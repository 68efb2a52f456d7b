"""netguard address layer: which class an IP address falls in, and why.

Guarantees: `classify` returns None only for an ordinary public unicast address. Every embedding of
an IPv4 address in IPv6 (IPv4-mapped, SIIT-translated, IPv4-compatible, NAT64 64:ff9b::/96, 6to4
2002::/16) is judged by the IPv4 address it carries; forms whose real destination cannot be read off
the address (Teredo, the local-use NAT64 prefix 64:ff9b:1::/48) are refused as tunnels. IPv6
outside global unicast 2000::/3 is reserved. Known cloud metadata addresses are their own class,
checked first, so no Allow flag ever opens them (they sit inside link-local, CGNAT and ULA ranges).
Only LOOPBACK and PRIVATE are openable; the host decides that through `Allow`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_network

IPAddress = IPv4Address | IPv6Address


class AddrClass(enum.StrEnum):
    LOOPBACK = "loopback"
    PRIVATE = "private"
    LINK_LOCAL = "link-local"
    METADATA = "metadata"
    MULTICAST = "multicast"
    UNSPECIFIED = "unspecified"
    BROADCAST = "broadcast"
    DOCUMENTATION = "documentation"
    RESERVED = "reserved"
    TUNNEL = "tunnel"


OPENABLE = frozenset({AddrClass.LOOPBACK, AddrClass.PRIVATE})


@dataclass(frozen=True, slots=True)
class Classification:
    cls: AddrClass
    reason: str


_METADATA = frozenset(
    {
        IPv4Address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack, DigitalOcean
        IPv4Address("169.254.170.2"),  # AWS ECS task metadata
        IPv4Address("169.254.169.253"),  # AWS VPC DNS
        IPv4Address("100.100.100.200"),  # Alibaba Cloud
        IPv6Address("fd00:ec2::254"),  # AWS IMDS over IPv6
    }
)

_V4: tuple[tuple[IPv4Network, AddrClass, str], ...] = tuple(
    (IPv4Network(net), cls, why)
    for net, cls, why in (
        ("0.0.0.0/8", AddrClass.UNSPECIFIED, "this-network 0.0.0.0/8"),
        ("10.0.0.0/8", AddrClass.PRIVATE, "RFC 1918 private 10.0.0.0/8"),
        ("100.64.0.0/10", AddrClass.PRIVATE, "carrier-grade NAT 100.64.0.0/10"),
        ("127.0.0.0/8", AddrClass.LOOPBACK, "loopback 127.0.0.0/8"),
        ("169.254.0.0/16", AddrClass.LINK_LOCAL, "link-local 169.254.0.0/16"),
        ("172.16.0.0/12", AddrClass.PRIVATE, "RFC 1918 private 172.16.0.0/12"),
        ("192.0.0.0/24", AddrClass.RESERVED, "IETF protocol assignments 192.0.0.0/24"),
        ("192.0.2.0/24", AddrClass.DOCUMENTATION, "documentation TEST-NET-1"),
        ("192.88.99.0/24", AddrClass.RESERVED, "6to4 relay anycast 192.88.99.0/24"),
        ("192.168.0.0/16", AddrClass.PRIVATE, "RFC 1918 private 192.168.0.0/16"),
        ("198.18.0.0/15", AddrClass.RESERVED, "benchmarking 198.18.0.0/15"),
        ("198.51.100.0/24", AddrClass.DOCUMENTATION, "documentation TEST-NET-2"),
        ("203.0.113.0/24", AddrClass.DOCUMENTATION, "documentation TEST-NET-3"),
        ("224.0.0.0/4", AddrClass.MULTICAST, "multicast 224.0.0.0/4"),
        ("255.255.255.255/32", AddrClass.BROADCAST, "limited broadcast"),
        ("240.0.0.0/4", AddrClass.RESERVED, "reserved 240.0.0.0/4"),
    )
)


def _v6(net: str) -> IPv6Network:
    parsed = ip_network(net)
    assert isinstance(parsed, IPv6Network)
    return parsed


_MAPPED = _v6("::ffff:0:0/96")
_TRANSLATED = _v6("::ffff:0:0:0/96")
_COMPATIBLE = _v6("::/96")
_NAT64 = _v6("64:ff9b::/96")
_SIXTOFOUR = _v6("2002::/16")
_GLOBAL = _v6("2000::/3")

# Judged in order, after the embeddings; the first match wins.
_V6: tuple[tuple[IPv6Network, AddrClass, str], ...] = tuple(
    (_v6(net), cls, why)
    for net, cls, why in (
        ("64:ff9b:1::/48", AddrClass.TUNNEL, "local-use NAT64 64:ff9b:1::/48"),
        ("100::/64", AddrClass.RESERVED, "discard-only 100::/64"),
        ("fc00::/7", AddrClass.PRIVATE, "unique local fc00::/7"),
        ("fe80::/10", AddrClass.LINK_LOCAL, "link-local fe80::/10"),
        ("fec0::/10", AddrClass.PRIVATE, "site-local fec0::/10"),
        ("ff00::/8", AddrClass.MULTICAST, "multicast ff00::/8"),
        ("2001:db8::/32", AddrClass.DOCUMENTATION, "documentation 2001:db8::/32"),
        ("3fff::/20", AddrClass.DOCUMENTATION, "documentation 3fff::/20"),
        ("2001::/32", AddrClass.TUNNEL, "Teredo 2001::/32"),
        ("2001::/23", AddrClass.RESERVED, "IETF protocol assignments 2001::/23"),
    )
)


def classify(ip: IPAddress) -> Classification | None:
    """The blocked class of `ip`, or None for a public unicast address."""
    if ip in _METADATA:
        return Classification(AddrClass.METADATA, f"cloud metadata address {ip}")
    if isinstance(ip, IPv4Address):
        return _classify_v4(ip)
    return _classify_v6(ip)


def _classify_v4(ip: IPv4Address) -> Classification | None:
    for net, cls, why in _V4:
        if ip in net:
            return Classification(cls, why)
    return None


def _classify_v6(ip: IPv6Address) -> Classification | None:
    if int(ip) == 0:
        return Classification(AddrClass.UNSPECIFIED, "unspecified ::")
    if int(ip) == 1:
        return Classification(AddrClass.LOOPBACK, "loopback ::1")
    for net, form in ((_MAPPED, "IPv4-mapped"), (_TRANSLATED, "IPv4-translated")):
        if ip in net:
            return _embedded(IPv4Address(int(ip) & 0xFFFFFFFF), form)
    if ip in _COMPATIBLE:
        inner = _embedded(IPv4Address(int(ip) & 0xFFFFFFFF), "IPv4-compatible")
        return inner or Classification(AddrClass.RESERVED, "deprecated IPv4-compatible form")
    if ip in _NAT64:
        return _embedded(IPv4Address(int(ip) & 0xFFFFFFFF), "NAT64")
    for net, cls, why in _V6:
        if ip in net:
            return Classification(cls, why)
    if ip not in _GLOBAL:
        return Classification(AddrClass.RESERVED, "outside IPv6 global unicast 2000::/3")
    if ip in _SIXTOFOUR:
        return _embedded(IPv4Address((int(ip) >> 80) & 0xFFFFFFFF), "6to4")
    return None


def _embedded(v4: IPv4Address, form: str) -> Classification | None:
    inner = classify(v4)
    if inner is None:
        return None
    return Classification(inner.cls, f"{form} embedding of {v4}: {inner.reason}")
