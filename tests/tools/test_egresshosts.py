"""The allow-list grammar: exact hosts, `.domain` subdomains, ports, and what is refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.tools.egress.allowlist import WEB_PORTS, AllowList, AllowListError, parse_entry


def test_a_plain_host_opens_the_web_ports_only() -> None:
    hosts = AllowList.parse(["PyPI.org."])
    assert hosts.entries == ("PyPI.org.",)
    assert hosts.match("pypi.org", 443) is not None
    assert hosts.match("pypi.org", 80) is not None
    assert hosts.match("pypi.org", 8443) is None
    assert hosts.match("files.pypi.org", 443) is None, "an exact entry has no subdomains"
    assert hosts.match("evilpypi.org", 443) is None


def test_a_leading_dot_means_subdomains_not_the_domain() -> None:
    hosts = AllowList.parse([".example.org"])
    assert hosts.match("a.example.org", 443) is not None
    assert hosts.match("a.b.example.org", 80) is not None
    assert hosts.match("example.org", 443) is None
    assert hosts.match("badexample.org", 443) is None


def test_a_port_entry_opens_that_port_only_and_entries_add_up() -> None:
    hosts = AllowList.parse(["git.example.org:8443", "git.example.org"])
    assert {p for p in (80, 443, 8443, 22) if hosts.match("git.example.org", p)} == {
        80,
        443,
        8443,
    }
    assert parse_entry(".example.org:8080").ports == frozenset({8080})


def test_addresses_and_international_names_are_read_as_netguard_reads_them() -> None:
    assert parse_entry("93.184.216.34").host == "93.184.216.34"
    assert parse_entry("[2001:DB8::1]:443").host == "2001:db8::1"
    assert parse_entry("bücher.example").host == "xn--bcher-kva.example"
    assert parse_entry(" pypi.org ").ports == WEB_PORTS


@pytest.mark.parametrize(
    "entry",
    [
        "",
        "   ",
        "*",
        "*.example.org",
        "https://pypi.org",
        "pypi.org/simple",
        "user@pypi.org",
        "pypi.org:0",
        "pypi.org:70000",
        "pypi.org:http",
        "0x7f.1",  # a numeric spelling is a trick, not a host
        "2130706433",
        ".1.2.3.4",
        "[not-v6]",
        "[::1",
        "a..b",
        "exa mple.org",
        "host:1:2",
    ],
)
def test_unreadable_entries_are_errors_naming_them(entry: str) -> None:
    with pytest.raises(AllowListError, match="allow_hosts entry"):
        AllowList.parse([entry])


def test_a_string_is_not_a_list_and_empty_allows_nothing() -> None:
    with pytest.raises(AllowListError, match="not one string"):
        AllowList.parse("pypi.org")
    with pytest.raises(AllowListError):
        AllowList.parse([42])  # type: ignore[list-item]
    assert not AllowList.parse([])
    assert AllowList().match("pypi.org", 443) is None


_label = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)


@given(st.lists(_label, min_size=1, max_size=4), st.lists(_label, min_size=1, max_size=3))
def test_subdomain_entries_match_exactly_the_names_below(
    domain: list[str], below: list[str]
) -> None:
    name = ".".join(domain)
    rule = parse_entry("." + name)
    assert rule.matches(".".join([*below, name]), 443)
    assert not rule.matches(name, 443)
    assert not rule.matches(below[0] + name, 443), "a suffix of the text is not a subdomain"
