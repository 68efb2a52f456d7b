"""bwrap's `proxy_dir`: a socket directory bound into PROXY programs only; the network stays
unshared."""

from __future__ import annotations

import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from yagent.kernel.confine.sandbox import BwrapProvider, EgressMode, Program, UnavailableError

pytestmark = pytest.mark.anyio

_SHOWN = [sys.prefix] if sys.prefix.startswith(("/tmp/", "/run/")) else []
PROBE = (
    "import socket,sys\n"
    "s=socket.socket(socket.AF_UNIX)\n"
    "try:\n s.connect(sys.argv[1]); s.sendall(b'hi'); print('reached', s.recv(10).decode())\n"
    "except OSError as e: print('blocked', e.errno)\n"
    "names = [l.split(':')[0].strip() for l in open('/proc/net/dev') if ':' in l]\n"
    "print('interfaces', sorted(names))\n"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def proxy_dir() -> Iterator[Path]:
    """A directory with a unix echo socket in it, under /tmp like a real proxy's."""
    path = Path(tempfile.mkdtemp(prefix="bw-", dir="/tmp"))
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path / "s.sock"))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(conn.recv(10))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path
    server.close()
    shutil.rmtree(path, ignore_errors=True)


def test_the_directory_is_bound_for_proxy_programs_only(ws: Path, proxy_dir: Path) -> None:
    box = BwrapProvider(ws, proxy_dir=proxy_dir)
    bind = ["--ro-bind", str(proxy_dir), str(proxy_dir)]

    def has_bind(mode: EgressMode) -> bool:
        argv = box.command(Program(["true"], egress=mode))
        return any(argv[i : i + 3] == bind for i in range(len(argv)))

    assert has_bind(EgressMode.PROXY)
    assert not has_bind(EgressMode.DENIED)
    assert not has_bind(EgressMode.UNRESTRICTED)
    proxy_argv = box.command(Program(["true"], egress=EgressMode.PROXY))
    assert "--share-net" not in proxy_argv
    assert proxy_argv.index("--tmpfs") < proxy_argv.index(str(proxy_dir)), "bound over the mask"
    assert box.egress() is EgressMode.DENIED


@pytest.mark.parametrize("where", ["/var/tmp", "/tmp", "/run"])
def test_a_directory_the_sandbox_does_not_mask_is_refused(ws: Path, where: str) -> None:
    target = Path(where)
    made = None
    if where == "/var/tmp":
        made = target = Path(tempfile.mkdtemp(prefix="bw-", dir=where))
    try:
        with pytest.raises(UnavailableError, match="below /tmp or /run"):
            BwrapProvider(ws, proxy_dir=target)
    finally:
        if made is not None:
            made.rmdir()


def test_a_missing_directory_is_refused(ws: Path) -> None:
    with pytest.raises(UnavailableError, match="does not exist"):
        BwrapProvider(ws, proxy_dir="/tmp/no-such-proxy-dir-for-bwrap")


async def test_only_a_proxy_program_reaches_the_socket_and_still_has_no_network(
    ws: Path, proxy_dir: Path
) -> None:
    box = BwrapProvider(ws, proxy_dir=proxy_dir, readable=_SHOWN)
    argv = [sys.executable, "-c", PROBE, str(proxy_dir / "s.sock")]
    proxy = await box.run(Program(argv, egress=EgressMode.PROXY, timeout=60))
    denied = await box.run(Program(argv, egress=EgressMode.DENIED, timeout=60))
    assert proxy.text.splitlines() == ["reached hi", "interfaces ['lo']"]
    assert denied.text.splitlines()[0].startswith("blocked")
    assert denied.text.splitlines()[1] == "interfaces ['lo']"
