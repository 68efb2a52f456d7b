"""The local-development opening: entries read strictly, the Allow they make is host-and-port exact,
and netguard keeps metadata, link-local and everything else refused behind it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from yagent.kernel.confine import netguard
from yagent.kernel.confine.netguard import IPAddress
from yagent.tools.localnet import (
    LocalNetError,
    allow_of,
    parse_entry,
    refusal,
    sandbox_host_problem,
)


class Names:
    """A resolver with fixed answers (no DNS in tests)."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers

    async def resolve(self, host: str, port: int) -> Sequence[str | IPAddress]:
        return self.answers.get(host, [])


def test_a_bare_port_opens_that_port_on_every_loopback_spelling() -> None:
    assert set(parse_entry("5173")) == {"localhost:5173", "127.0.0.1:5173", "[::1]:5173"}
    assert parse_entry(5173) == parse_entry("5173")


@pytest.mark.parametrize(
    ("entry", "opened"),
    [
        ("localhost:3000", "localhost:3000"),
        ("127.0.0.1:8000", "127.0.0.1:8000"),
        ("[::1]:8080", "[::1]:8080"),
        ("10.0.0.5:8000", "10.0.0.5:8000"),
        ("[fd00::5]:80", "[fd00::5]:80"),
        ("DevBox.LAN:8080", "devbox.lan:8080"),
    ],
)
def test_named_hosts_keep_their_port(entry: str, opened: str) -> None:
    assert parse_entry(entry) == (opened,)


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("localhost", "needs a port"),
        ("devbox.lan", "needs a port"),
        ("0", "1-65535"),
        ("70000", "1-65535"),
        ("localhost:0", "1-65535"),
        ("http://localhost:3000", "PORT or host:port"),
        ("localhost:3000/app", "PORT or host:port"),
        ("*.lan:80", "PORT or host:port"),
        ("", "PORT or host:port"),
        ("169.254.169.254:80", "metadata"),
        ("169.254.1.1:80", "link-local"),
        ("[fe80::1]:80", "link-local"),
        ("224.0.0.1:80", "multicast"),
        ("metadata.google.internal:80", "metadata"),
        ("8.8.8.8:53", "public address"),
        ("0x7f.1:80", "0x7f.1"),
        ("[::1:80", "[address]:port"),
    ],
)
def test_entries_that_cannot_hold_are_refused_by_name(entry: str, said: str) -> None:
    with pytest.raises(LocalNetError, match="allow_local") as err:
        parse_entry(entry)
    assert said in str(err.value)


def test_no_entries_is_strict_and_one_string_is_refused() -> None:
    assert allow_of([]) is netguard.STRICT
    with pytest.raises(LocalNetError, match="not one string"):
        allow_of("5173")


@pytest.mark.anyio
async def test_the_opening_is_that_service_only() -> None:
    allow = allow_of(["5173", "devbox.lan:8080"])
    names = Names(
        {
            "localhost": ["127.0.0.1", "::1"],
            "devbox.lan": ["192.168.1.20"],
            "sneaky.lan": ["192.168.1.21"],
        }
    )
    guard = netguard.Guard(names, netguard.PolicyStore())
    for url in ("http://127.0.0.1:5173/", "http://localhost:5173/x", "http://[::1]:5173/"):
        await guard.check(url, allow)
    await guard.check("http://devbox.lan:8080/", allow)
    for url in (
        "http://127.0.0.1:5174/",  # another port
        "http://devbox.lan:8081/",
        "http://sneaky.lan:8080/",  # another private host on the same port
        "http://10.0.0.1:5173/",  # a private address on the loopback port
        "http://169.254.169.254/latest/",  # metadata: never
    ):
        with pytest.raises(netguard.BlockedError):
            await guard.check(url, allow)


@pytest.mark.anyio
async def test_a_listed_name_answering_metadata_stays_refused() -> None:
    allow = allow_of(["devbox.lan:80"])
    guard = netguard.Guard(Names({"devbox.lan": ["169.254.169.254"]}), netguard.PolicyStore())
    with pytest.raises(netguard.AddressBlockedError, match="metadata"):
        await guard.check("http://devbox.lan/", allow)


@pytest.mark.anyio
async def test_refusal_says_how_to_open_only_what_can_be_opened() -> None:
    guard = netguard.Guard(Names({}), netguard.PolicyStore())
    with pytest.raises(netguard.BlockedError) as local:
        await guard.check("http://127.0.0.1:5173/")
    assert "--allow-local" in refusal(local.value)
    assert "loopback" in refusal(local.value)
    with pytest.raises(netguard.BlockedError) as name:
        await guard.check("http://localhost:5173/")
    assert "--allow-local" in refusal(name.value)
    with pytest.raises(netguard.BlockedError) as meta:
        await guard.check("http://169.254.169.254/", allow_of(["5173"]))
    said = refusal(meta.value)
    assert "--allow-local" not in said
    assert "no setting opens a metadata address" in said
    with pytest.raises(netguard.BlockedError) as scheme:
        await guard.check("file:///etc/passwd")
    assert "--allow-local" not in refusal(scheme.value)


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("localhost", "loopback"),
        ("10.1.2.3", "private"),
        ("devbox.local", "private"),
    ],
)
def test_sandbox_hosts_that_are_local_are_explained(host: str, local: str) -> None:
    problem = sandbox_host_problem(host, f"{host}:80")
    assert problem is not None
    assert f"a {local} host" in problem
    assert "[network] allow_local" in problem


def test_public_sandbox_hosts_pass() -> None:
    assert sandbox_host_problem("pypi.org", "pypi.org") is None
    assert sandbox_host_problem("8.8.8.8", "8.8.8.8") is None
