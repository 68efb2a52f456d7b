"""The unconfined provider and the run contract every provider shares (process.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from yagent.kernel.confine.sandbox import (
    EgressMode,
    HostProvider,
    Level,
    Program,
    SetupError,
    egress_of,
    process,
    provider,
)
from yagent.kernel.confine.sandbox.provider import Provider

from .procs import alive, gone, marker

pytestmark = pytest.mark.anyio


def unrestricted(argv: list[str], **kwargs: object) -> Program:
    """A program allowed the network: the only kind the host provider accepts."""
    return Program(argv, egress=EgressMode.UNRESTRICTED, **kwargs)  # type: ignore[arg-type]


def test_the_host_provider_declares_the_weakest_level_and_no_egress(tmp_path: Path) -> None:
    host = HostProvider(tmp_path)
    assert isinstance(host, Provider)
    assert host.level is Level.IN_PROCESS
    assert host.name == "host"
    assert egress_of(host) is EgressMode.UNRESTRICTED


async def test_runs_in_the_workdir_with_exactly_the_given_environment(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    os.environ["SANDBOX_TEST_LEAK"] = "secret"
    try:
        result = await HostProvider(tmp_path).run(
            unrestricted(
                [sys.executable, "-c", "import os; print(os.getcwd()); print(sorted(os.environ))"],
                env={"ONLY": "this"},
                cwd="sub",
            )
        )
    finally:
        del os.environ["SANDBOX_TEST_LEAK"]
    lines = result.text.splitlines()
    assert result.ok
    assert result.provider == "host"
    assert lines[0] == str(tmp_path / "sub")
    assert "SANDBOX_TEST_LEAK" not in lines[1]
    assert "'ONLY'" in lines[1]


async def test_exit_code_and_interleaved_output(tmp_path: Path) -> None:
    result = await HostProvider(tmp_path).run(
        unrestricted(["sh", "-c", "echo out; echo err >&2; exit 7"])
    )
    assert result.exit_code == 7
    assert result.output == b"out\nerr\n"
    assert not result.timed_out
    assert not result.truncated


async def test_output_over_the_cap_is_counted_and_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(provider, "MAX_OUTPUT_BYTES", 10)
    result = await HostProvider(tmp_path).run(unrestricted(["sh", "-c", "printf 0123456789abcdef"]))
    assert result.output == b"0123456789"
    assert result.dropped == 6
    assert result.truncated


async def test_a_timeout_kills_the_whole_process_tree(tmp_path: Path) -> None:
    token, child = marker(), marker()
    result = await HostProvider(tmp_path).run(
        unrestricted(["sh", "-c", f"sleep {child} & echo started; sleep {token}"], timeout=0.5)
    )
    assert result.timed_out
    assert result.exit_code < 0
    assert result.output == b"started\n"
    assert await gone(token)
    assert await gone(child)


async def test_background_children_die_when_the_run_ends(tmp_path: Path) -> None:
    token = marker()
    result = await HostProvider(tmp_path).run(
        unrestricted(["sh", "-c", f"sleep {token} & echo done"])
    )
    assert result.ok
    assert result.output == b"done\n"
    assert await gone(token)


async def test_cancellation_kills_the_tree_and_propagates(tmp_path: Path) -> None:
    token = marker()
    host = HostProvider(tmp_path)
    with anyio.move_on_after(0.5) as scope:
        await host.run(unrestricted(["sh", "-c", f"sleep {token} & sleep {token}"]))
    assert scope.cancelled_caught
    assert await gone(token)


async def test_output_held_open_outside_the_group_is_cut_and_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A grandchild in its own session escapes the group kill and keeps the pipe open.
    monkeypatch.setattr(process, "DRAIN_GRACE", 0.2)
    token = marker()
    script = (
        f"setsid sleep {token} & p=$!; "
        'while [ "$(cut -d\' \' -f6 /proc/$p/stat)" != "$p" ]; do :; done; echo parent'
    )
    try:
        result = await HostProvider(tmp_path).run(unrestricted(["sh", "-c", script]))
        assert result.ok
        assert result.truncated
        assert result.output == b"parent\n"
    finally:
        for pid in alive(token):
            process.kill_group(pid)
            os.kill(pid, 9)


@pytest.mark.parametrize("mode", [EgressMode.PROXY, EgressMode.DENIED])
async def test_it_refuses_programs_that_need_egress_it_cannot_hold(
    tmp_path: Path, mode: EgressMode
) -> None:
    marker_file = tmp_path / "ran"
    with pytest.raises(SetupError, match=f"cannot hold egress '{mode.name.lower()}'"):
        await HostProvider(tmp_path).run(Program(["touch", str(marker_file)], egress=mode))
    assert not marker_file.exists()


async def test_a_missing_program_or_workdir_is_a_setup_error(tmp_path: Path) -> None:
    host = HostProvider(tmp_path)
    with pytest.raises(SetupError, match="could not start"):
        await host.run(unrestricted([str(tmp_path / "nothing-here")]))
    with pytest.raises(SetupError, match="does not exist"):
        await host.run(unrestricted(["true"], cwd="missing"))
