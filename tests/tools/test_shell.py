"""run_bash engine: receipts, bounded waits, group kills, output cap.

Real processes throughout; the seams (WAIT_DELAY, KILL_GRACE, the cap, the timeout) are shrunk so
nothing waits for a real timeout. Test names follow the gates of docs/tools.md where one exists.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from yagent.tools import shell
from yagent.tools.shell import Receipt, ShellResult

pytestmark = pytest.mark.anyio

BOUND = 10.0  # generous outer bound: a hang fails the test instead of the whole run


def gone(pid: int) -> bool:
    """Dead or a zombie (pid 1 here does not reap orphans, so killed orphans linger as zombies)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 :].split()[0] in (b"Z", b"X")


async def eventually(predicate: Callable[[], bool], within: float = BOUND) -> bool:
    """Poll `predicate` for at most `within` seconds; its final value."""
    with anyio.move_on_after(within):
        # Process state has no event to wait on: poll.
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.02)
    return predicate()


async def wait_gone(pid: int) -> bool:
    return await eventually(lambda: gone(pid), within=2.0)


def reaped(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids a test leaves running on purpose; killed at teardown."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "WAIT_DELAY", 0.2)
    monkeypatch.setattr(shell, "KILL_GRACE", 0.5)


def first_pid(result: ShellResult) -> int:
    return int(result.output.split()[0])


# --- TestExecuteRunBash: the exact-output baseline -------------------------------------------


async def test_execute_run_bash_foreground_success(tmp_path: Path) -> None:
    result = await shell.run_foreground("echo hi", cwd=tmp_path)
    assert result.receipt is Receipt.SUCCESS
    assert result.exit_code == 0
    assert result.output == "hi\n"
    assert result.to_model_text() == "hi\n"
    assert (result.truncated, result.total_bytes, result.shown_bytes, result.note) == (
        False,
        3,
        3,
        "",
    )


async def test_execute_run_bash_foreground_failure(tmp_path: Path) -> None:
    result = await shell.run_foreground("echo err >&2; exit 3", cwd=tmp_path)
    assert result.receipt is Receipt.EXIT_NONZERO
    assert result.exit_code == 3
    assert result.output == "err\n"
    assert result.to_model_text() == "err\n[exit code 3]"


async def test_success_without_output_says_so(tmp_path: Path) -> None:
    result = await shell.run_foreground("true", cwd=tmp_path)
    assert result.to_model_text() == "(no output)"


async def test_runs_in_cwd_with_given_env_and_no_stdin(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "YAGENT_PROBE": "probe-value"}
    result = await shell.run_foreground(
        'pwd; echo "$YAGENT_PROBE"; cat; echo "[$HOME]"', cwd=tmp_path, env=env
    )
    assert result.output == f"{tmp_path}\nprobe-value\n[]\n"


async def test_killed_by_signal_is_named_never_bare(tmp_path: Path) -> None:
    result = await shell.run_foreground("printf partial; kill -9 $$", cwd=tmp_path)
    assert result.receipt is Receipt.EXIT_NONZERO
    assert result.exit_code == -signal.SIGKILL
    assert result.to_model_text() == "partial\n[killed by SIGKILL (exit code -9)]"
    assert "signal: killed" not in result.to_model_text()


# --- constraint 16: bounded wait, four receipts, drained cap ----------------------------------


@pytest.mark.usefixtures("fast")
@pytest.mark.parametrize("code", [0, 4])
async def test_wait_delay_bounds_wait_when_grandchild_holds_pipe(
    tmp_path: Path, leftovers: list[int], code: int
) -> None:
    with anyio.fail_after(BOUND):
        result = await shell.run_foreground(f"sleep 30 & echo $!; exit {code}", cwd=tmp_path)
    grandchild = first_pid(result)
    leftovers.append(grandchild)
    assert result.receipt is Receipt.PIPES_HELD
    assert result.exit_code == code
    assert "is_background=true" in result.note
    text = result.to_model_text()
    assert text.startswith(f"{grandchild}\n[exit code {code}; output still held open")
    assert "note: " in text
    assert "signal: killed" not in text
    assert not gone(grandchild), "the command's background process is the user's: not killed"


@pytest.mark.usefixtures("fast")
async def test_nohup_with_redirected_output_does_not_hold_pipe(
    tmp_path: Path, leftovers: list[int]
) -> None:
    with anyio.fail_after(BOUND):
        result = await shell.run_foreground(
            "nohup sleep 30 >/dev/null 2>&1 & echo $!", cwd=tmp_path
        )
    grandchild = first_pid(result)
    leftovers.append(grandchild)
    assert result.receipt is Receipt.SUCCESS
    assert result.exit_code == 0
    assert not gone(grandchild)


async def test_output_after_exit_within_wait_delay_is_captured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "WAIT_DELAY", 5.0)
    result = await shell.run_foreground("(sleep 0.1; echo late) & echo early", cwd=tmp_path)
    assert result.receipt is Receipt.SUCCESS
    assert result.output == "early\nlate\n"


async def test_output_cap_drains_without_sigpipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "MAX_SHELL_OUTPUT_BYTES", 1000)
    # If the reader stopped at the cap, head would die of SIGPIPE and bash would exit 141.
    command = "printf start; head -c 5000000 /dev/zero | tr '\\0' x; printf end"
    result = await shell.run_foreground(command, cwd=tmp_path)
    assert result.exit_code == 0
    assert result.receipt is Receipt.SUCCESS
    assert result.truncated
    assert result.total_bytes == 5_000_008
    assert result.shown_bytes == 1000
    cut = "[... 4999008 bytes of output cut here: the first 500 and the last 500 are shown ...]"
    assert result.output == "start" + "x" * 495 + "\n" + cut + "\n" + "x" * 497 + "end"
    assert result.to_model_text().endswith("\n[output truncated: showed 1000 of 5000008 bytes]")


async def test_binary_output_is_a_hex_excerpt_with_its_size(tmp_path: Path) -> None:
    result = await shell.run_foreground(
        "printf 'ELF\\0\\1'; head -c 3000000 /dev/urandom", cwd=tmp_path
    )
    assert result.binary
    assert result.total_bytes == 3_000_005
    assert result.shown_bytes == 256
    lines = result.output.splitlines()
    assert lines[0] == "[binary output: 3000005 bytes, not text, not shown; the first 256 as hex:]"
    assert lines[1].startswith("00000000: 454c 4600 01")
    assert len(lines) == 1 + 256 // 16
    assert "output truncated" not in result.to_model_text()  # the excerpt says it itself


async def test_output_cap_keeps_the_head_and_reaches_commands_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "MAX_SHELL_OUTPUT_BYTES", 4)
    result = await shell.run_foreground(
        "printf abcdef; head -c 100000 /dev/zero | tr '\\0' x; printf yz; echo > marker",
        cwd=tmp_path,
    )
    cut = "[... 100004 bytes of output cut here: the first 2 and the last 2 are shown ...]"
    assert result.output == f"ab\n{cut}\nyz"
    assert result.total_bytes == 100_008
    assert (tmp_path / "marker").exists(), "the command ran to its end"


async def test_cap_cutting_a_utf8_sequence_is_replaced_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "MAX_SHELL_OUTPUT_BYTES", 6)
    result = await shell.run_foreground("printf 'abéééé'", cwd=tmp_path)  # 10 bytes
    cut = "[... 6 bytes of output cut here: the first 2 and the last 2 are shown ...]"
    assert result.output == f"ab\n{cut}\né"  # the characters the cuts split are cut whole
    assert (result.shown_bytes, result.total_bytes) == (4, 10)
    result = await shell.run_foreground("printf 'aéaé'", cwd=tmp_path)  # 6 bytes: all kept
    assert result.output == "aéaé"
    assert not result.truncated


# --- constraint 17: the foreground call owns its group ------------------------------------------


@pytest.mark.usefixtures("fast")
async def test_timeout_kills_whole_process_group(tmp_path: Path) -> None:
    with anyio.fail_after(BOUND):
        result = await shell.run_foreground("sleep 30 & echo $!; wait", cwd=tmp_path, timeout=0.5)
    grandchild = first_pid(result)
    assert result.receipt is Receipt.TIMEOUT
    assert result.exit_code is None
    assert await wait_gone(grandchild), "the grandchild must die with the group"
    text = result.to_model_text()
    assert f"{grandchild}\n[timed out]\nnote: " in text
    assert "0.5s timeout" in text
    assert "is_background=true" in text
    assert "signal: killed" not in text


@pytest.mark.usefixtures("fast")
async def test_timeout_escalates_to_sigkill_when_term_is_ignored(tmp_path: Path) -> None:
    with anyio.fail_after(BOUND):
        result = await shell.run_foreground(
            "trap '' TERM; sleep 30 & echo $!; wait", cwd=tmp_path, timeout=0.3
        )
    assert result.receipt is Receipt.TIMEOUT
    assert await wait_gone(first_pid(result))


async def test_default_timeout_seam_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "DEFAULT_TIMEOUT", 0.3)
    with anyio.fail_after(BOUND):
        result = await shell.run_foreground("sleep 30", cwd=tmp_path)
    assert result.receipt is Receipt.TIMEOUT
    assert "0.3s timeout" in result.note


@pytest.mark.usefixtures("fast")
async def test_timeout_reports_a_process_that_escaped_the_group(
    tmp_path: Path, leftovers: list[int]
) -> None:
    with anyio.fail_after(BOUND):
        result = await shell.run_foreground(
            "setsid sleep 30 & echo $!; wait", cwd=tmp_path, timeout=0.5
        )
    escaped = first_pid(result)
    leftovers.append(escaped)
    assert result.receipt is Receipt.TIMEOUT
    assert "left the group (setsid) still holds the output open" in result.note


@pytest.mark.usefixtures("fast")
async def test_cancel_kills_whole_group_and_reraises(tmp_path: Path) -> None:
    reports: list[ShellResult] = []
    reached_after = False
    with anyio.fail_after(BOUND), anyio.move_on_after(0.5) as scope:
        await shell.run_foreground(
            "sleep 30 & echo $!; wait", cwd=tmp_path, on_cancelled=reports.append
        )
        reached_after = True
    assert scope.cancelled_caught, "the cancellation reached the scope: it was not swallowed"
    assert not reached_after
    [report] = reports
    assert report.receipt is Receipt.CANCELLED
    assert report.exit_code is None
    assert await wait_gone(first_pid(report))
    text = report.to_model_text()
    assert "[cancelled by the caller]" in text
    assert "not by its timeout" in text
    assert "process group) were killed" in text
    assert "timed out" not in text


@pytest.mark.usefixtures("fast")
async def test_cancel_without_callback_still_kills_group(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    with anyio.fail_after(BOUND), anyio.move_on_after(0.5):
        await shell.run_foreground(f"sleep 30 & echo $! > {marker}; wait", cwd=tmp_path)
    assert await wait_gone(int(marker.read_text()))
    assert shell.live_groups() == ()


async def test_cancel_while_pipe_held_after_exit_kills_nothing(
    tmp_path: Path, leftovers: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "WAIT_DELAY", 30.0)
    reports: list[ShellResult] = []
    with anyio.fail_after(BOUND), anyio.move_on_after(0.5):
        await shell.run_foreground(
            "sleep 30 & echo $!; exit 5", cwd=tmp_path, on_cancelled=reports.append
        )
    [report] = reports
    grandchild = first_pid(report)
    leftovers.append(grandchild)
    assert report.receipt is Receipt.CANCELLED
    assert report.exit_code == 5
    assert "nothing was killed" in report.note
    assert not gone(grandchild)


@pytest.mark.usefixtures("fast")
async def test_timeout_and_cancel_texts_are_distinct(tmp_path: Path) -> None:
    timed_out = await shell.run_foreground("sleep 30", cwd=tmp_path, timeout=0.3)
    reports: list[ShellResult] = []
    with anyio.move_on_after(0.3):
        await shell.run_foreground("sleep 30", cwd=tmp_path, on_cancelled=reports.append)
    texts = {
        timed_out.to_model_text(),
        reports[0].to_model_text(),
        (await shell.run_foreground("exit 1", cwd=tmp_path)).to_model_text(),
        (await shell.run_foreground("echo ok", cwd=tmp_path)).to_model_text(),
    }
    assert len(texts) == 4
    assert timed_out.status_line() != reports[0].status_line()


@pytest.mark.usefixtures("fast")
async def test_returned_call_survives_later_cancel(tmp_path: Path, leftovers: list[int]) -> None:
    with anyio.fail_after(BOUND), anyio.CancelScope() as scope:
        result = await shell.run_foreground(
            "nohup sleep 30 >/dev/null 2>&1 & echo $!", cwd=tmp_path
        )
        leftovers.append(first_pid(result))
        scope.cancel()
        await anyio.sleep(BOUND)
    assert scope.cancelled_caught
    await anyio.sleep(0.2)  # bounded negative window: a late kill would land here
    assert not gone(first_pid(result))


# --- the in-flight registry ----------------------------------------------------------------------


async def test_kill_live_process_groups_ends_in_flight_call(tmp_path: Path) -> None:
    results: list[ShellResult] = []

    async def run() -> None:
        results.append(await shell.run_foreground("sleep 30", cwd=tmp_path, timeout=60))

    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            assert await eventually(lambda: bool(shell.live_groups()))
            [group] = shell.live_groups()
            assert group.command == "sleep 30"
            assert os.getpgid(group.pgid) == group.pgid, "registered as its own group"
            assert shell.kill_live_process_groups() == 1
    [result] = results
    assert result.receipt is Receipt.EXIT_NONZERO
    assert result.exit_code == -signal.SIGKILL
    assert shell.live_groups() == (), "unregistered once the call returned"


@pytest.mark.usefixtures("fast")
async def test_every_ending_unregisters(tmp_path: Path, leftovers: list[int]) -> None:
    await shell.run_foreground("echo hi", cwd=tmp_path)
    await shell.run_foreground("exit 2", cwd=tmp_path)
    await shell.run_foreground("sleep 30", cwd=tmp_path, timeout=0.2)
    held = await shell.run_foreground("sleep 30 & echo $!", cwd=tmp_path)
    leftovers.append(first_pid(held))
    with anyio.move_on_after(0.2):
        await shell.run_foreground("sleep 30", cwd=tmp_path)
    assert shell.live_groups() == ()
    assert shell.kill_live_process_groups() == 0


async def test_spawn_failure_propagates_and_registers_nothing(tmp_path: Path) -> None:
    with pytest.raises(shell.SpawnError) as caught:
        await shell.run_foreground("echo hi", cwd=tmp_path / "missing")
    assert caught.value.errno == errno.ENOENT
    assert isinstance(caught.value.__cause__, FileNotFoundError)
    assert shell.live_groups() == ()


async def test_a_line_too_long_to_exec_is_a_spawn_error(tmp_path: Path) -> None:
    with pytest.raises(shell.SpawnError) as caught:
        await shell.run_foreground("echo " + "x" * 200_000, cwd=tmp_path)
    assert caught.value.errno == errno.E2BIG
    assert shell.live_groups() == ()


async def test_non_positive_timeout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timeout must be positive"):
        await shell.run_foreground("echo hi", cwd=tmp_path, timeout=0)


# --- background ----------------------------------------------------------------------------------


async def test_background_returns_at_once_logs_and_is_not_registered(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "bg.log"
    with anyio.fail_after(BOUND):
        handle = await shell.run_background("echo hello; exec sleep 30", cwd=tmp_path, log_path=log)
    try:
        assert handle.pgid == handle.pid == os.getpgid(handle.pid)
        assert os.getsid(handle.pid) == handle.pid, "its own session"
        assert shell.live_groups() == ()
        assert shell.kill_live_process_groups() == 0
        assert await eventually(lambda: log.read_text() == "hello\n")
        assert not gone(handle.pid)
    finally:
        os.killpg(handle.pgid, signal.SIGKILL)


async def test_background_survives_later_cancel_of_its_scope(tmp_path: Path) -> None:
    with anyio.fail_after(BOUND), anyio.CancelScope() as scope:
        handle = await shell.run_background("sleep 30", cwd=tmp_path, log_path=tmp_path / "x.log")
        scope.cancel()
        await anyio.sleep(BOUND)
    try:
        assert scope.cancelled_caught
        await anyio.sleep(0.2)  # bounded negative window
        assert not gone(handle.pid)
    finally:
        os.killpg(handle.pgid, signal.SIGKILL)


async def test_background_appends_to_log_uses_env_and_is_reaped(tmp_path: Path) -> None:
    log = tmp_path / "bg.log"
    log.write_text("earlier\n")
    env = {"PATH": os.environ["PATH"], "YAGENT_PROBE": "v"}
    handle = await shell.run_background('echo "$YAGENT_PROBE"', cwd=tmp_path, log_path=log, env=env)
    assert await eventually(lambda: log.read_text() == "earlier\nv\n")
    assert await eventually(lambda: reaped(handle.pid)), "reaped, not left a zombie"
    text = handle.to_model_text()
    assert f"pid {handle.pid}" in text
    assert f"kill -TERM -{handle.pgid}" in text
    assert str(log) in text
    assert json.loads(json.dumps(handle.to_payload()))["pid"] == handle.pid
