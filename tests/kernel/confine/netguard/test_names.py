"""The strict URL reading and the name layer, without any resolution."""

from __future__ import annotations

from ipaddress import IPv4Address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.confine.netguard import (
    AddrClass,
    NameBlockedError,
    SchemeBlockedError,
    URLBlockedError,
    classify_name,
    split_url,
)
from yagent.kernel.confine.netguard.names import dial_target, ipv4_spelling


@pytest.mark.parametrize(
    ("url", "host", "port"),
    [
        ("http://example.com", "example.com", 80),
        ("HTTPS://Example.COM:8443/a?b#c", "example.com", 8443),
        ("http://example.com./x", "example.com", 80),
        ("http://bücher.de/", "xn--bcher-kva.de", 80),
        ("http://例え。テスト/", "xn--r8jz45g.xn--zckzah", 80),
        ("http://8.8.8.8/", "8.8.8.8", 80),
        ("http://[2606:4700:0::1111]:81/", "2606:4700::1111", 81),
        ("http://example.com?@127.0.0.1", "example.com", 80),
        ("http://example.com/@127.0.0.1", "example.com", 80),
        ("http://under_score.example/", "under_score.example", 80),
    ],
)
def test_reads_legit_urls(url: str, host: str, port: int) -> None:
    target = split_url(url)
    assert (target.host, target.port) == (host, port)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "gopher://x/",
        "ftp://x/",
        "ws://x/",
        "wss://x/",
        "data:,x",
        "",
        "/x",
        "//x/",
    ],
)
def test_scheme_allow_list(url: str) -> None:
    with pytest.raises(SchemeBlockedError):
        split_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http:127.0.0.1",
        "http:/example.com",
        "http:///example.com",
        "http://good.com@evil.com/",
        "http://:80/",
        "http://example.com:/",
        "http://example.com:0/",
        "http://example.com:65536/",
        "http://example.com:8o/",
        "http://example.com:٨٠/",
        "http://[::1/",
        "http://[::1]x/",
        "http://[127.0.0.1]/",
        "http://[fe80::1%25eth0]/",
        "http://%65xample.com/",
        "http://exa mple.com/",
        "http://example.com\\@127.0.0.1/",
        "http://example.com\n/",
        "http://a..b/",
        "http://.example.com/",
        "http://example.com../",
        "http://ex*ample.com/",
        "http://" + "a" * 64 + ".com/",
        "http://" + ".".join(["abcdefgh"] * 30) + "/",
        "http://xn--/",
        "http://xn--99999999999/",
        "http://xn--zzzzzzzzzzzzzzz/",
        "http://xn--ab-/",
        "http://\ufffd.com/",
        "http://\u00ad.com/",
        "http://" + "x" * 70 + "\u00e9.com/",
        "http://" + "x" * 17000,
    ],
)
def test_ambiguous_or_malformed_urls_refused(url: str) -> None:
    with pytest.raises(URLBlockedError):
        split_url(url)


def test_non_string_refused() -> None:
    with pytest.raises(URLBlockedError):
        split_url(b"http://x/")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("host", "value"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("127.000.000.001", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("0x", "0.0.0.0"),
        ("134744072", "8.8.8.8"),
        ("169.254.43518", "169.254.169.254"),
    ],
)
def test_numeric_spellings_blocked_by_name(host: str, value: str) -> None:
    with pytest.raises(NameBlockedError, match=value.replace(".", r"\.")):
        split_url(f"http://{host}/")
    assert ipv4_spelling(host.split(".")) == IPv4Address(value)


@pytest.mark.parametrize(
    "host", ["08.0.0.1", "1.2.3.4.5", "256.1.1.1", "example.123", "1.0x", "4294967296"]
)
def test_invalid_numeric_hosts_blocked(host: str) -> None:
    with pytest.raises(NameBlockedError):
        split_url(f"http://{host}/")


def test_ipv4_spelling_rejects_non_numeric_parts() -> None:
    assert ipv4_spelling(["a", "1"]) is None


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_decimal_spelling_decodes_every_address(n: int) -> None:
    assert ipv4_spelling([str(n)]) == IPv4Address(n)
    assert ipv4_spelling([hex(n)]) == IPv4Address(n)
    dotted = str(IPv4Address(n))
    assert split_url(f"http://{dotted}/").ip == IPv4Address(n)


@pytest.mark.parametrize(
    ("host", "cls"),
    [
        ("localhost", AddrClass.LOOPBACK),
        ("a.b.localhost", AddrClass.LOOPBACK),
        ("printer.local", AddrClass.PRIVATE),
        ("db.internal", AddrClass.PRIVATE),
        ("metadata.google.internal", AddrClass.METADATA),
        ("metadata", AddrClass.METADATA),
        ("router.home.arpa", AddrClass.PRIVATE),
        ("example.com", None),
        ("notlocalhost.com", None),
        ("localhost.com", None),
    ],
)
def test_name_classes(host: str, cls: AddrClass | None) -> None:
    assert classify_name(host) is cls


def test_dial_target_reads_bare_ipv6_and_names() -> None:
    assert str(dial_target("::1", 80).ip) == "::1"
    assert dial_target("Example.com", 443).host == "example.com"
    assert dial_target("[::1]", 80).host == "::1"
