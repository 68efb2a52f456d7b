"""The bridge and the whole sandboxed path: real bwrap, the real proxy, loopback origins."""

from __future__ import annotations

import dataclasses
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from yagent.kernel.confine import egress
from yagent.kernel.confine.sandbox import BwrapProvider, EgressMode
from yagent.kernel.judge import toolfail
from yagent.kernel.judge.preset import BUILTIN as PRESETS
from yagent.tools import shell
from yagent.tools.commands import CommandGate, masked_tool_paths
from yagent.tools.egress import proxyserver, sandboxbridge
from yagent.tools.egress.proxyserver import EgressProxy
from yagent.tools.shellrules import build_policy

from .egresskit import FixedResolver, Servers, proxy_for, short_dir

pytestmark = pytest.mark.anyio

NAMES = {"allowed.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]}

FETCH = textwrap.dedent(
    """
    import socket, sys, urllib.request as u
    kind, url = sys.argv[1], sys.argv[2]
    opener = u.build_opener(u.ProxyHandler({})) if kind == "direct" else u.build_opener()
    try:
        print("body", opener.open(url, timeout=20).read().decode())
    except Exception as e:
        why = e.read().decode().strip() if hasattr(e, "read") else e
        print("failed", getattr(e, "code", ""), why)
    """
)


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


def gate(ws: Path, proxy: EgressProxy | None, allow: tuple[str, ...]) -> CommandGate:
    spec = egress.Spec(EgressMode.PROXY, allow, proxyserver.LOOPBACK_BYPASS)
    preset = dataclasses.replace(PRESETS.resolve("workspace-write"), egress=spec)
    return CommandGate(build_policy([]), preset, ws, egress_proxy=proxy)


async def sandboxed(g: CommandGate, ws: Path, command: str) -> shell.ShellResult:
    where = await g.confinement()
    assert where.sandboxed
    return await shell.run_foreground(
        command, cwd=ws, timeout=60, env=where.env, launcher=where.launcher
    )


async def test_inside_bwrap_only_the_proxy_leads_out(
    ws: Path, proxy: EgressProxy, origin: Servers
) -> None:
    g = gate(ws, proxy, (f"allowed.test:{origin.http_port}",))
    py = sys.executable
    port = origin.http_port
    done = await sandboxed(
        g,
        ws,
        f"{py} fetch.py proxy http://allowed.test:{port}/ok; "
        f"{py} fetch.py proxy http://other.test:{port}/no; "
        f"{py} fetch.py direct http://127.0.0.1:{port}/direct; "
        "exit 7",
    )
    lines = done.output.splitlines()
    assert lines[0] == "body hello GET /ok HTTP/1.1"
    assert lines[1] == f"failed 403 other.test:{port} is not on the egress allow-list"
    assert lines[2].startswith("failed  <urlopen error [Errno 111]"), "no network but the proxy"
    assert done.exit_code == 7, "the bridge passes the command's exit code through"
    assert [(d.host, d.allowed) for d in proxy.decisions] == [
        ("allowed.test", True),
        ("other.test", False),
    ]
    assert len(origin.seen) == 1


async def test_without_a_proxy_a_proxy_preset_has_no_network(ws: Path, origin: Servers) -> None:
    g = gate(ws, None, (f"allowed.test:{origin.http_port}",))
    done = await sandboxed(
        g, ws, f"{sys.executable} fetch.py direct http://127.0.0.1:{origin.http_port}/; env"
    )
    assert done.output.startswith("failed  <urlopen error [Errno 111]")
    assert "127.0.0.1:3128" not in done.output, "no proxy variables without a proxy"
    assert origin.seen == []


async def test_a_stopped_proxy_refuses_the_run(ws: Path, origin: Servers) -> None:
    with short_dir() as where:
        stopped = proxy_for(["allowed.test"], FixedResolver(NAMES), where / "p")
        g = gate(ws, stopped, ("allowed.test",))
        with pytest.raises(toolfail.ToolFailure, match="not running"):
            await g.confinement()


async def test_denied_programs_cannot_reach_the_proxy_socket(ws: Path, proxy: EgressProxy) -> None:
    shown = (*masked_tool_paths(), *proxyserver.bridge_paths())  # a checkout/venv under /tmp
    box = BwrapProvider(ws, proxy_dir=proxy.directory, readable=shown)
    probe = (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX)\n"
        "try:\n s.connect(sys.argv[1]); print('reached')\n"
        "except OSError as e: print('blocked', e.errno)\n"
    )
    argv = [sys.executable, "-c", probe, str(proxy.socket_path)]
    for mode, expected in ((EgressMode.DENIED, "blocked"), (EgressMode.PROXY, "reached")):
        command = box.wrap(argv, egress=mode)
        done = await anyio.run_process(command, check=False)
        assert done.stdout.decode().split()[0] == expected, (mode, done)


async def test_the_bridge_relays_to_the_proxy_in_process(
    proxy: EgressProxy,
    origin: Servers,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    port = _free_port()
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("no_proxy", "")
    fetch = f"http://allowed.test:{origin.http_port}/in"
    child = [
        sys.executable,
        "-c",
        f"import urllib.request as u; print(u.urlopen({fetch!r}).read())",
    ]
    with anyio.fail_after(60):  # a hang guard only
        code = await sandboxbridge.bridge(str(proxy.socket_path), port, child)
    assert code == 0
    assert "hello GET /in HTTP/1.1" in capfd.readouterr().out


async def test_the_bridge_says_when_the_proxy_is_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    port = _free_port()
    probe = (
        "import socket,sys\n"
        f"c=socket.create_connection(('127.0.0.1',{port}))\n"
        "c.sendall(b'GET http://x/ HTTP/1.1\\r\\n\\r\\n')\n"
        "try: print('got', c.recv(10))\n"
        "except ConnectionResetError: print('got reset')\n"
    )
    with anyio.fail_after(60):
        code = await sandboxbridge.bridge(
            str(tmp_path / "none.sock"), port, [sys.executable, "-c", probe]
        )
    assert code == 0
    captured = capfd.readouterr()
    assert captured.out.strip() in ("got b''", "got reset"), "closed, nothing answered"
    assert "cannot reach the egress proxy" in captured.err


async def test_exit_codes_and_a_command_that_cannot_start(tmp_path: Path) -> None:
    sock = str(tmp_path / "s")
    assert await sandboxbridge.bridge(sock, _free_port(), ["sh", "-c", "exit 3"]) == 3
    assert await sandboxbridge.bridge(sock, _free_port(), ["sh", "-c", "kill -9 $$"]) == 137
    missing = await sandboxbridge.bridge(sock, _free_port(), ["/nonexistent/program"])
    assert missing == sandboxbridge.NOT_STARTED


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--socket", "s", "--port", "80"],  # no command
        ["--socket", "s", "--port", "x", "--", "true"],
        ["--socket", "s", "--port", "0", "--", "true"],
        ["--port", "80", "--socket", "s", "--", "true"],
        ["--socket", "", "--port", "80", "--", "true"],
    ],
)
def test_bad_arguments_are_a_setup_failure(argv: list[str]) -> None:
    assert sandboxbridge.main(argv) == sandboxbridge.SETUP_FAILED


def test_a_taken_port_is_a_setup_failure(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        argv = ["--socket", str(tmp_path / "s"), "--port", str(port), "--", "true"]
        assert sandboxbridge.main(argv) == sandboxbridge.SETUP_FAILED


def test_signals_reach_the_command_and_its_status_comes_back(tmp_path: Path) -> None:
    port = _free_port()
    argv = [sys.executable, "-I", "-m", "yagent.tools.egress.sandboxbridge", "--socket"]
    argv += [str(tmp_path / "s"), "--port", str(port), "--", "sleep", "60"]
    bridge = subprocess.Popen(argv)
    try:
        _wait_listening(port)
        bridge.send_signal(signal.SIGTERM)
        assert bridge.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        bridge.kill()
        bridge.wait()


def _wait_listening(port: int) -> None:
    for _ in range(600):  # a bounded wait for the bridge to start listening, not a timing claim
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            subprocess.run(["sleep", "0.05"], check=True)
    raise AssertionError("the bridge never listened")


def _free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port: int = probe.getsockname()[1]
        return port


def test_bridge_paths_name_the_directory_holding_the_yagent_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checkout = "/tmp/yagent-checkout-never-made/src"  # a name only: nothing is created
    monkeypatch.setattr(proxyserver, "__file__", f"{checkout}/yagent/tools/egress/proxyserver.py")
    assert proxyserver.bridge_paths() == (checkout,)
    monkeypatch.setattr(proxyserver, "__file__", "/opt/src/yagent/tools/egress/proxyserver.py")
    assert proxyserver.bridge_paths() == (), "only a masked place (/tmp, /run) is shown"
