"""The bubblewrap provider, against the real `bwrap`: each confinement claim is tried."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from yagent.kernel.confine.sandbox import (
    BwrapProvider,
    EgressMode,
    Level,
    Program,
    Registry,
    SetupError,
    UnavailableError,
    bwrappaths,
    egress_of,
)

from .procs import gone, marker

pytestmark = pytest.mark.anyio


_SHOWN = [sys.prefix] if sys.prefix.startswith(("/tmp/", "/run/")) else []


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


@pytest.fixture
def box(ws: Path) -> BwrapProvider:
    # an interpreter under the masked /tmp (a checkout there) is bound back read-only
    return BwrapProvider(ws, protected=[".git", ".yagent"], readable=_SHOWN)


@pytest.fixture
def outside() -> Iterator[Path]:
    # Not under /tmp: the sandbox's /tmp is private, so a write there would prove nothing.
    path = Path(tempfile.mkdtemp(prefix="sandbox-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def sh(box: BwrapProvider, script: str, **kwargs: object) -> tuple[int, str]:
    result = await box.run(Program(["sh", "-c", script], **kwargs))  # type: ignore[arg-type]
    return result.exit_code, result.text


def test_declares_namespaces_and_denied_egress(box: BwrapProvider) -> None:
    assert box.level is Level.NAMESPACES
    assert egress_of(box) is EgressMode.DENIED
    assert Registry([box]).pick(Level.NAMESPACES, EgressMode.DENIED) is box


def test_the_command_orders_mounts_so_later_ones_win(box: BwrapProvider, ws: Path) -> None:
    argv = box.command(Program(["true"]), status_fd=9)
    joined = " ".join(argv)
    assert "--unshare-all" in argv
    assert "--share-net" not in argv
    assert "--cap-drop ALL" in joined
    assert "--die-with-parent" in argv
    assert "--new-session" in argv
    assert joined.index("--ro-bind / /") < joined.index("--tmpfs /tmp")
    assert joined.index("--tmpfs /tmp") < joined.index(f"--bind {ws} {ws}")
    assert joined.index(f"--bind {ws} {ws}") < joined.index(f"--ro-bind {ws}/.git {ws}/.git")
    assert f"--tmpfs {ws}/.yagent --remount-ro {ws}/.yagent" in joined
    assert argv[-4:] == ["--chdir", str(ws), "--", "true"]
    assert "--json-status-fd 9" in joined


@pytest.mark.parametrize(
    ("mode", "shared"),
    [(EgressMode.UNRESTRICTED, True), (EgressMode.PROXY, False), (EgressMode.DENIED, False)],
)
def test_the_network_is_shared_only_for_unrestricted_egress(
    box: BwrapProvider, mode: EgressMode, shared: bool
) -> None:
    assert ("--share-net" in box.command(Program(["true"], egress=mode))) is shared


async def test_the_workspace_is_writable(box: BwrapProvider, ws: Path) -> None:
    code, _ = await sh(box, "mkdir -p sub && echo hello > sub/file")
    assert code == 0
    assert (ws / "sub" / "file").read_text() == "hello\n"


async def test_writing_outside_the_workspace_fails(box: BwrapProvider, outside: Path) -> None:
    target = outside / "escaped"
    code, text = await sh(box, f"echo x > {target}")
    assert code != 0
    assert "Read-only file system" in text
    assert not target.exists()
    code, text = await sh(box, "echo x > /etc/sandbox-escape-test")
    assert code != 0
    assert "Read-only file system" in text


async def test_git_is_read_only_inside_the_workspace(box: BwrapProvider, ws: Path) -> None:
    code, text = await sh(box, "echo evil > .git/HEAD; echo x > .git/hooks-new; rm -rf .git")
    assert code != 0
    assert "Read-only file system" in text
    assert (ws / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert sorted(p.name for p in (ws / ".git").iterdir()) == ["HEAD"]


async def test_a_missing_protected_path_cannot_be_created(box: BwrapProvider, ws: Path) -> None:
    code, text = await sh(box, "mkdir -p .yagent && echo injected > .yagent/config.toml")
    assert code != 0
    assert "Read-only file system" in text
    assert not (ws / ".yagent" / "config.toml").exists()


async def test_a_symlinked_protected_path_is_refused(ws: Path) -> None:
    (ws / "elsewhere").mkdir()
    (ws / ".yagent").symlink_to(ws / "elsewhere")
    with pytest.raises(SetupError, match="symbolic link"):
        await BwrapProvider(ws, protected=[".yagent"]).run(Program(["true"]))


async def test_tmp_is_private_both_ways(box: BwrapProvider) -> None:
    inside = Path("/tmp") / f"sandbox-private-{uuid.uuid4().hex}"
    host_file = Path("/tmp") / f"sandbox-host-{uuid.uuid4().hex}"
    host_file.write_text("host")
    try:
        code, text = await sh(box, f"echo x > {inside} && cat {inside}; test -e {host_file}")
        assert text.startswith("x\n")
        assert code == 1  # the host's file is not visible inside
        assert not inside.exists()  # the sandbox's file is not visible outside
    finally:
        host_file.unlink()


async def test_capabilities_are_dropped_even_for_root(box: BwrapProvider, ws: Path) -> None:
    code, text = await sh(box, "grep CapEff /proc/self/status; mount -o remount,bind,rw .git")
    assert "CapEff:\t0000000000000000" in text
    assert code != 0


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


def _connect(port: int) -> list[str]:
    code = (
        "import socket\n"
        f"socket.create_connection(('127.0.0.1', {port}), timeout=5)\n"
        "print('connected')\n"
    )
    return [sys.executable, "-c", code]


async def test_the_host_network_is_unreachable_when_unshared(
    box: BwrapProvider, listener: int
) -> None:
    result = await box.run(Program(_connect(listener)))
    assert result.exit_code != 0
    assert "connected" not in result.text
    assert "ConnectionRefusedError" in result.text


async def test_the_host_network_is_reachable_with_unrestricted_egress(
    box: BwrapProvider, listener: int
) -> None:
    result = await box.run(Program(_connect(listener), egress=EgressMode.UNRESTRICTED))
    assert result.ok, result.text
    assert result.text == "connected\n"


async def test_a_timeout_kills_the_whole_tree(box: BwrapProvider) -> None:
    token, child = marker(), marker()
    result = await box.run(
        Program(["sh", "-c", f"sleep {child} & echo started; sleep {token}"], timeout=1.0)
    )
    assert result.timed_out
    assert result.text == "started\n"
    assert await gone(token)
    assert await gone(child)


async def test_cancellation_kills_the_whole_tree(box: BwrapProvider) -> None:
    token = marker()
    with anyio.move_on_after(1.0) as scope:
        await box.run(Program(["sh", "-c", f"sleep {token} & sleep {token}"]))
    assert scope.cancelled_caught
    assert await gone(token)


async def test_environment_and_cwd_come_from_the_program(box: BwrapProvider, ws: Path) -> None:
    (ws / "sub").mkdir()
    result = await box.run(
        Program(["sh", "-c", "pwd; env | sort"], env={"ONLY": "this"}, cwd="sub")
    )
    lines = result.text.splitlines()
    assert lines[0] == str(ws / "sub")
    assert "ONLY=this" in lines
    assert not any(line.startswith("HOME=") for line in lines)


async def test_exit_codes_pass_through(box: BwrapProvider) -> None:
    code, _ = await sh(box, "exit 42")
    assert code == 42


async def test_a_sandbox_that_cannot_be_built_is_a_setup_error(box: BwrapProvider) -> None:
    with pytest.raises(SetupError, match="could not build"):
        await box.run(Program(["/definitely/not/a/program"]))
    with pytest.raises(SetupError, match="could not build"):
        await box.run(Program(["true"], cwd="/no/such/dir"))


def test_probe_and_verify_egress_use_the_real_sandbox(box: BwrapProvider) -> None:
    box.probe()
    assert box.verify_egress() is EgressMode.DENIED


def test_verify_egress_reports_what_it_sees(
    box: BwrapProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = "Inter-|\n face |\n    lo: 0 0\n  eth0: 1 2\n"
    monkeypatch.setattr(BwrapProvider, "_probe", lambda self, argv: listing)
    assert box.verify_egress() is EgressMode.UNRESTRICTED


def test_probe_reports_the_exact_failure(ws: Path) -> None:
    broken = BwrapProvider(ws, executable="/bin/false")
    with pytest.raises(UnavailableError, match="cannot build a sandbox here"):
        broken.probe()
    missing = BwrapProvider(ws, executable=str(ws / "no-bwrap"))
    with pytest.raises(UnavailableError, match="could not be run"):
        missing.probe()


async def test_a_missing_binary_is_unavailable(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = BwrapProvider(ws, executable=str(ws / "no-bwrap"))
    with pytest.raises(UnavailableError, match="could not start bwrap"):
        await missing.run(Program(["true"]))
    monkeypatch.setenv("PATH", str(ws))
    with pytest.raises(UnavailableError, match="apt-get install bubblewrap"):
        BwrapProvider(ws)


@pytest.mark.parametrize("bad", ["/abs", "../up", "", ".", "a/../../b"])
def test_protected_paths_must_stay_inside(ws: Path, bad: str) -> None:
    with pytest.raises(UnavailableError, match="protected path"):
        BwrapProvider(ws, protected=[bad])


def test_workspace_must_be_a_real_directory_other_than_root(ws: Path) -> None:
    with pytest.raises(UnavailableError, match="does not exist"):
        BwrapProvider(ws / "missing")
    with pytest.raises(UnavailableError, match="not a directory"):
        BwrapProvider(ws / ".git" / "HEAD")
    with pytest.raises(UnavailableError, match="root directory"):
        BwrapProvider("/")


async def test_extra_writable_paths(ws: Path, outside: Path) -> None:
    box = BwrapProvider(ws, writable=[outside])
    code, _ = await sh(box, f"echo ok > {outside}/cache")
    assert code == 0
    assert (outside / "cache").read_text() == "ok\n"


def test_resolver_is_bound_back_when_it_lives_under_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run-resolv"
    run.write_text("nameserver 127.0.0.53\n")
    link = tmp_path / "resolv.conf"
    link.symlink_to(run)
    monkeypatch.setattr(bwrappaths, "_RESOLV", link)
    monkeypatch.setattr(bwrappaths, "_RUN", tmp_path)
    assert bwrappaths.resolver_paths() == [run]
    monkeypatch.setattr(bwrappaths, "_RESOLV", run)
    assert bwrappaths.resolver_paths() == []
    monkeypatch.setattr(bwrappaths, "_RESOLV", link)
    monkeypatch.setattr(bwrappaths, "_RUN", tmp_path / "elsewhere")
    assert bwrappaths.resolver_paths() == []


def test_wrap_prefixes_an_argv_for_hosts_that_spawn_themselves(
    box: BwrapProvider, ws: Path
) -> None:
    wrapped = box.wrap(["python3", "-c", "pass"])
    assert wrapped[-4:] == ["--", "python3", "-c", "pass"]
    assert "--share-net" not in wrapped
    assert "--json-status-fd" not in wrapped
    assert "--share-net" in box.wrap(["true"], egress=EgressMode.UNRESTRICTED)
    done = subprocess.run(box.wrap(["sh", "-c", "echo hi > f; echo no > /etc/x"]), check=False)
    assert done.returncode != 0
    assert (ws / "f").read_text() == "hi\n"
    assert box.workspace == ws.resolve()


async def test_readable_paths_under_the_masked_tmp_are_shown_read_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    tool = tmp_path / "tooldir"  # under /tmp: masked by the sandbox's private /tmp
    tool.mkdir()
    (tool / "hello").write_text("visible\n")
    hidden = await BwrapProvider(ws).run(Program(["cat", str(tool / "hello")]))
    assert hidden.exit_code != 0
    shown = await BwrapProvider(ws, readable=[tool]).run(
        Program(["sh", "-c", f"cat {tool}/hello; touch {tool}/x"])
    )
    assert b"visible" in shown.output
    assert shown.exit_code != 0, "shown paths are read-only"
    assert not (tool / "x").exists()
