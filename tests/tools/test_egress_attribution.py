"""run_bash behind the egress proxy says what the proxy decided for it: real bwrap, the real
proxy on a unix socket, loopback origins, the real adapter and surface."""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.kernel.confine import egress
from yagent.kernel.confine.sandbox import EgressMode
from yagent.kernel.judge.preset import BUILTIN as PRESETS
from yagent.tools import registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.bash import UNATTRIBUTED_BACKGROUND_NOTE
from yagent.tools.commands import CommandGate
from yagent.tools.egress import attribution, proxyserver
from yagent.tools.egress.proxyserver import EgressProxy
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.invocation import PUBLISH
from yagent.tools.settings import Settings
from yagent.tools.shellrules import build_policy
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

from .egresskit import FixedResolver, Servers, proxy_for, short_dir

pytestmark = pytest.mark.anyio

NAMES = {"allowed.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]}
PY = sys.executable
FETCH = textwrap.dedent(
    """
    import socket, sys, urllib.request as u
    kind, url = sys.argv[1], sys.argv[2]
    if kind == "socket":  # straight to the proxy's socket, past the bridge: no tag
        s = socket.socket(socket.AF_UNIX)
        s.connect(sys.argv[3])
        s.sendall(f"GET {url} HTTP/1.1\\r\\n\\r\\n".encode())
        print("socket", s.recv(100).split(b" ")[1].decode())
        sys.exit()
    try:
        print("body", u.urlopen(url, timeout=20).read().decode())
    except Exception as e:
        print("failed", getattr(e, "code", ""))
    """
)
WAIT = "for i in $(seq 1200); do [ -e {0} ] && break; sleep 0.05; done; [ -e {0} ]"
"""A bounded wait for a file another command writes (ordering, not timing)."""


@pytest.fixture
async def proxy(origin: Servers) -> AsyncIterator[EgressProxy]:
    with short_dir() as where:
        entries = [f"allowed.test:{origin.http_port}"]
        async with proxy_for(entries, FixedResolver(NAMES), where / "p") as running:
            yield running


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "fetch.py").write_text(FETCH)
    return root


def adapter(ws: Path, proxy: EgressProxy, events: list[tuple[str, Any]] | None = None) -> Adapter:
    spec = egress.Spec(EgressMode.PROXY, ("allowed.test",), proxyserver.LOOPBACK_BYPASS)
    preset = dataclasses.replace(PRESETS.resolve("workspace-write"), egress=spec)
    gate = CommandGate(build_policy([]), preset, ws, egress_proxy=proxy)
    guard = WorkspaceGuard(ws, settings=Settings(ws.parent / "home"), yolo=Yolo.YOLO)
    options = SurfaceOptions(yolo=Yolo.YOLO, commands=gate)
    surface = Surface(BUILTIN, profile("coding"), guard, options=options)
    ctx = ToolContext(ws, surface, state_dir=ws.parent / "state", delegation_id="d1")
    if events is not None:
        ctx.services.put(PUBLISH, lambda kind, payload: events.append((kind, payload)))
    return Adapter(ctx, registry.executors())


async def bash(a: Adapter, command: str, call_id: str = "c1", **extra: Any) -> dict[str, Any]:
    with anyio.fail_after(120):  # a hang guard only
        result = await a.call("run_bash", json.dumps({"command": command, **extra}), call_id)
    assert result.ok, result.content
    out: dict[str, Any] = json.loads(result.content)
    return out


async def test_a_command_is_told_what_the_proxy_allowed_and_refused(
    ws: Path, proxy: EgressProxy, origin: Servers
) -> None:
    events: list[tuple[str, Any]] = []
    a = adapter(ws, proxy, events)
    port = origin.http_port
    done = await bash(
        a,
        f"{PY} fetch.py proxy http://allowed.test:{port}/one; "
        f"{PY} fetch.py proxy http://allowed.test:{port}/two; "
        f"{PY} fetch.py proxy http://other.test:{port}/no",
    )
    assert done["text"].splitlines() == [
        "body hello GET /one HTTP/1.1",
        "body hello GET /two HTTP/1.1",
        "failed 403",
        f"[egress: 2 requests allowed (allowed.test:{port} ×2); "
        f"1 refused: other.test:{port} — not on [sandbox] allow_hosts]",
    ]
    assert done["egress"]["allowed"] == 2
    assert done["egress"]["requests"][1]["host"] == "other.test"
    [(kind, event)] = events
    assert kind == "egress"
    assert (event["call_id"], event["delegation_id"], event["name"]) == ("c1", "d1", "run_bash")
    assert event["requests"] == done["egress"]["requests"]
    assert proxy.ledger.following == 0, "the tag is taken when the command ends"


async def test_a_quiet_command_gets_no_note(ws: Path, proxy: EgressProxy) -> None:
    events: list[tuple[str, Any]] = []
    done = await bash(adapter(ws, proxy, events), "echo hi")
    assert done["text"] == "hi\n"
    assert "egress" not in done
    assert events == []


async def test_concurrent_commands_each_see_only_their_own_requests(
    ws: Path, proxy: EgressProxy, origin: Servers
) -> None:
    port = origin.http_port
    first = (
        f"{PY} fetch.py proxy http://allowed.test:{port}/first && touch first.done && "
        + WAIT.format("second.done")
    )
    second = (
        WAIT.format("first.done")
        + f" && {PY} fetch.py proxy http://other.test:{port}/second; touch second.done"
    )
    results: dict[str, dict[str, Any]] = {}

    async def run(name: str, command: str) -> None:
        results[name] = await bash(adapter(ws, proxy), command, call_id=name)

    async with anyio.create_task_group() as group:
        group.start_soon(run, "first", first)
        group.start_soon(run, "second", second)
    one, two = results["first"], results["second"]
    assert one["receipt"] == two["receipt"] == "success", (one, two)
    assert [r["host"] for r in one["egress"]["requests"]] == ["allowed.test"]
    assert [r["host"] for r in two["egress"]["requests"]] == ["other.test"]
    assert "other.test" not in one["text"]
    assert "allowed.test" not in two["text"]
    assert len({d.tag for d in proxy.decisions}) == 2


async def test_a_direct_socket_connection_is_served_but_not_attributed(
    ws: Path, proxy: EgressProxy, origin: Servers
) -> None:
    port, sock = origin.http_port, proxy.socket_path
    done = await bash(
        adapter(ws, proxy),
        f"{PY} fetch.py socket http://allowed.test:{port}/direct {sock}; "
        f"{PY} fetch.py socket http://other.test:{port}/direct {sock}; "
        f"{PY} fetch.py proxy http://allowed.test:{port}/bridged",
    )
    lines = done["text"].splitlines()
    assert lines[:3] == ["socket 200", "socket 403", "body hello GET /bridged HTTP/1.1"]
    assert lines[3] == f"[egress: 1 request allowed (allowed.test:{port})]"
    assert [(d.allowed, d.tag is None) for d in proxy.decisions] == [
        (True, True),
        (False, True),
        (True, False),
    ]


async def test_the_caps_say_what_they_did_not_keep(
    ws: Path, proxy: EgressProxy, origin: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = origin.http_port
    monkeypatch.setattr(attribution, "MAX_PER_TAG", 1)
    two_kinds = (
        f"{PY} fetch.py proxy http://other.test:{port}/; "
        f"{PY} fetch.py proxy http://allowed.test:{port}/"
    )
    done = await bash(adapter(ws, proxy), two_kinds)
    assert done["text"].splitlines()[-1] == (
        f"[egress: 1 request allowed; 1 refused: other.test:{port} — not on [sandbox] "
        "allow_hosts; 1 more not kept (only 1 kinds of request are listed per command; the "
        "counts above include them)]"
    )
    assert done["egress"]["not_kept"] == 1
    monkeypatch.setattr(attribution, "MAX_TAGS", 0)
    crowded = await bash(adapter(ws, proxy), f"{PY} fetch.py proxy http://other.test:{port}/")
    assert crowded["text"].splitlines() == [
        "failed 403",
        "[egress: not attributed to this command: "
        "the proxy was already following 0 running commands]",
    ]
    assert crowded["egress"]["unattributed"]


async def test_a_background_run_says_it_is_not_attributed(
    ws: Path, proxy: EgressProxy, origin: Servers
) -> None:
    events: list[tuple[str, Any]] = []
    command = f"{PY} fetch.py proxy http://other.test:{origin.http_port}/bg > bg.out"
    done = await bash(adapter(ws, proxy, events), command, is_background=True)
    assert done["text"].endswith(UNATTRIBUTED_BACKGROUND_NOTE)
    assert "egress" not in done
    assert events == []
    with anyio.fail_after(60):  # a hang guard: the run writes its answer when it is done
        while not (ws / "bg.out").exists() or not (ws / "bg.out").read_text():  # noqa: ASYNC110
            await anyio.sleep(0.05)
    assert (ws / "bg.out").read_text() == "failed 403\n"
    assert proxy.decisions[-1].tag is None
    assert proxy.ledger.following == 0
