"""Tagged connections on the real proxy's socket: attribution, bad tag lines, the bridge's part."""

from __future__ import annotations

import socket
import sys
from collections.abc import AsyncIterator

import anyio
import pytest

from yagent.kernel.confine import egress
from yagent.kernel.confine.sandbox import EgressMode
from yagent.tools.egress import attribution, proxyserver, sandboxbridge, wire
from yagent.tools.egress.attribution import NOT_LISTED, Entry
from yagent.tools.egress.proxyserver import EgressProxy

from .egresskit import FixedResolver, Servers, ask, body, proxy_for, short_dir, status

pytestmark = pytest.mark.anyio

NAMES = {"allowed.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]}


@pytest.fixture
async def proxy(origin: Servers) -> AsyncIterator[EgressProxy]:
    with short_dir() as where:
        entries = [f"allowed.test:{origin.http_port}"]
        async with proxy_for(entries, FixedResolver(NAMES), where) as running:
            yield running


def get(host: str, port: int, path: str = "/") -> bytes:
    return f"GET http://{host}:{port}{path} HTTP/1.1\r\n\r\n".encode()


def tagged(tag: str, raw: bytes) -> bytes:
    return sandboxbridge.tag_line(tag) + raw


async def test_a_tagged_request_is_served_and_filed_under_its_tag(
    proxy: EgressProxy, origin: Servers
) -> None:
    mine, theirs = proxy.ledger.issue(), proxy.ledger.issue()
    assert mine is not None
    assert theirs is not None
    port = origin.http_port
    ok = await ask(proxy, tagged(mine, get("allowed.test", port, "/ok")))
    no = await ask(proxy, tagged(mine, get("other.test", port)))
    untagged = await ask(proxy, get("allowed.test", port, "/anon"))
    assert body(ok) == b"hello GET /ok HTTP/1.1", "the tag line never reaches the origin"
    assert status(no) == 403
    assert body(no) == f"other.test:{port} is not on the egress allow-list\n".encode()
    assert status(untagged) == 200, "a program reaching the socket itself is still served"
    report = proxy.ledger.take(mine)
    assert report.entries == (
        Entry("GET", "allowed.test", port, True, "allow-listed", 1),
        Entry("GET", "other.test", port, False, NOT_LISTED, 1),
    )
    assert not proxy.ledger.take(theirs).worth_telling
    assert [d.tag for d in proxy.decisions] == [mine, mine, None]
    assert all(b"YAGENT" not in seen for seen in origin.seen)


async def test_a_tunnel_is_attributed_and_its_first_bytes_pass(
    proxy: EgressProxy, origin: Servers
) -> None:
    tag = proxy.ledger.issue()
    assert tag is not None
    raw = f"CONNECT allowed.test:{origin.http_port} HTTP/1.1\r\n\r\n".encode()
    reply = await ask(proxy, tagged(tag, raw + get("allowed.test", origin.http_port, "/t")))
    assert reply.startswith(b"HTTP/1.1 200 Connection established\r\n\r\n")
    assert reply.endswith(b"hello GET http://allowed.test:%d/t HTTP/1.1" % origin.http_port)
    assert proxy.ledger.take(tag).allowed == 1


@pytest.mark.parametrize(
    "line",
    [
        b"YAGENT-TAG nothex\r\n",
        b"YAGENT-TAG " + b"A" * 32 + b"\r\n",  # upper case is not the form
        b"YAGENT-TAG  " + b"a" * 32 + b"\r\n",
        b"YAGENT-TAGS " + b"a" * 32 + b"\r\n",
        b"YAGENT-TAG " + b"a" * 33 + b"\r\n",
    ],
)
async def test_a_malformed_tag_line_is_refused(
    proxy: EgressProxy, origin: Servers, line: bytes
) -> None:
    tag = proxy.ledger.issue()
    reply = await ask(proxy, line + get("allowed.test", origin.http_port))
    assert status(reply) == 400
    assert body(reply) == b"malformed tag line\n"
    assert origin.seen == []
    assert proxy.decisions[-1].tag is None
    assert tag is not None
    assert not proxy.ledger.take(tag).worth_telling


async def test_a_tag_the_proxy_does_not_follow_is_refused(
    proxy: EgressProxy, origin: Servers
) -> None:
    gone = proxy.ledger.issue()
    assert gone is not None
    proxy.ledger.take(gone)
    for tag in (gone, "0123456789abcdef" * 2):
        reply = await ask(proxy, tagged(tag, get("allowed.test", origin.http_port)))
        assert status(reply) == 400
        assert b"names no command" in body(reply)
    assert origin.seen == []
    assert [d.tag for d in proxy.decisions] == [None, None]


async def test_an_oversized_tagged_head_is_refused_and_attributed(
    proxy: EgressProxy, origin: Servers
) -> None:
    tag = proxy.ledger.issue()
    assert tag is not None
    huge = b"GET http://allowed.test/ HTTP/1.1\r\nX: " + b"a" * wire.MAX_HEADER
    assert status(await ask(proxy, tagged(tag, huge))) == 431
    oversized_line = b"YAGENT-TAG " + b"a" * wire.MAX_HEADER
    assert status(await ask(proxy, oversized_line)) == 431
    report = proxy.ledger.take(tag)
    assert (report.refused, report.entries[0].reason) == (1, "request head over 16384 bytes")
    assert proxy.decisions[-1].tag is None


async def test_a_slow_tagged_head_is_attributed(
    proxy: EgressProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxyserver, "HEADER_TIMEOUT", 0.2)
    tag = proxy.ledger.issue()
    assert tag is not None
    reply = await ask(proxy, tagged(tag, b"GET http://allowed.test/ HTTP/1.1\r\n"), eof=False)
    assert status(reply) == 408
    assert proxy.ledger.take(tag).note() == (
        "[egress: 1 refused: (no target) — request head not received in time]"
    )


async def test_watch_tags_a_bridged_run_and_takes_its_report(
    proxy: EgressProxy, origin: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = egress.Spec(EgressMode.PROXY, ("allowed.test",), proxyserver.LOOPBACK_BYPASS)
    _, launcher = proxyserver.route(proxy, spec, {}, lambda argv: ["box", *argv])
    assert "--tag" not in launcher(["true"]), "the route itself is untagged"
    with proxyserver.watch(launcher) as watching:
        argv = watching.launcher(["true"]) if watching.launcher else []
        tag = argv[argv.index("--tag") + 1]
        assert argv[argv.index("--tag") + 2 :] == ["--", "true"]
        assert proxy.ledger.knows(tag)
        await ask(proxy, tagged(tag, get("other.test", origin.http_port)))
        assert watching.report is None
    assert not proxy.ledger.knows(tag)
    assert watching.report is not None
    assert watching.report.refused == 1
    with proxyserver.watch(None) as plain:
        assert plain.launcher is None
    assert plain.report is None, "not behind the proxy: nothing to report"
    monkeypatch.setattr(attribution, "MAX_TAGS", 0)
    with proxyserver.watch(launcher) as full:
        assert full.launcher is not None
        assert "--tag" not in full.launcher(["true"])
    assert full.report is not None
    assert full.report.note() == (
        "[egress: not attributed to this command: "
        "the proxy was already following 0 running commands]"
    )


async def test_the_bridge_announces_its_tag(
    proxy: EgressProxy, origin: Servers, capfd: pytest.CaptureFixture[str]
) -> None:
    tag = proxy.ledger.issue()
    assert tag is not None
    port = _free_port()
    script = (
        "import urllib.request as u\n"
        f"o = u.build_opener(u.ProxyHandler({{'http': 'http://127.0.0.1:{port}'}}))\n"
        f"print(o.open('http://allowed.test:{origin.http_port}/b').read())\n"
    )
    with anyio.fail_after(60):  # a hang guard only
        code = await sandboxbridge.bridge(
            str(proxy.socket_path), port, [sys.executable, "-c", script], tag
        )
    assert code == 0
    assert "hello GET /b HTTP/1.1" in capfd.readouterr().out
    assert proxy.ledger.take(tag).allowed == 1


def test_the_bridge_refuses_a_bad_tag() -> None:
    good = "ab" * 16
    assert sandboxbridge.tag_line(good) == f"YAGENT-TAG {good}\r\n".encode()
    with pytest.raises(ValueError, match="hex"):
        sandboxbridge.tag_line("AB" * 16)
    for tag in ("x", "AB" * 16, ""):
        argv = ["--socket", "s", "--port", "80", "--tag", tag, "--", "true"]
        assert sandboxbridge.main(argv) == sandboxbridge.SETUP_FAILED
    assert sandboxbridge.main(["--socket", "s", "--port", "80", "--tag", good]) == (
        sandboxbridge.SETUP_FAILED
    ), "no command"


def _free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port: int = probe.getsockname()[1]
        return port
