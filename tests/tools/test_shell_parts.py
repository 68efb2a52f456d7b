"""run_bash engine parts: the capture protocol, result texts, group helpers (no processes)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.tools.shell import Receipt, ShellResult, _Capture, procgroup
from yagent.tools.shell.result import HEX_BYTES, Shown, describe_exit, looks_binary, shown_output


@given(cap=st.integers(min_value=0, max_value=64), chunks=st.lists(st.binary(max_size=40)))
def test_capture_keeps_the_head_and_the_tail_and_counts_everything(
    cap: int, chunks: list[bytes]
) -> None:
    capture = _Capture(cap)
    most = 0
    for chunk in chunks:
        capture.pipe_data_received(1, chunk)
        most = max(most, capture.held())
    written = b"".join(chunks)
    head = written[: cap - cap // 2]
    assert bytes(capture.head) == head
    rest = written[len(head) :]
    assert bytes(capture.tail) == (rest[max(len(rest) - cap // 2, 0) :] if cap // 2 else b"")
    assert capture.total == len(written)
    assert most <= cap  # the bytes held, whatever the output: never more than the cap


def test_a_flood_holds_no_more_than_the_cap() -> None:
    capture = _Capture(1 << 20)
    chunk = os.urandom(1 << 16)
    for _ in range(300 * 16):  # 300 MiB, in the pipe's chunks
        capture.pipe_data_received(1, chunk)
        assert capture.held() <= 1 << 20
    assert capture.total == 300 << 20
    assert bytes(capture.tail) == (chunk * 16)[-(1 << 19) :]


def test_text_is_shown_head_cut_tail() -> None:
    shown = shown_output(b"first\n", b"last\n", 100)
    cut = "[... 89 bytes of output cut here: the first 6 and the last 5 are shown ...]"
    assert shown == Shown(f"first\n{cut}\nlast\n", 11, False)
    assert shown_output(b"all", b"", 3) == Shown("all", 3, False)


def test_binary_is_shown_as_its_size_and_hex() -> None:
    shown = shown_output(b"\x7fELF\x02\x01\x01\x00" * 64, b"", 10_000)
    assert shown.binary
    assert shown.shown_bytes == HEX_BYTES
    assert shown.text.startswith("[binary output: 10000 bytes, not text, not shown;")
    assert "00000000: 7f45 4c46 0201 0100 7f45 4c46 0201 0100  .ELF.....ELF...." in shown.text
    noise = bytes(range(128, 256)) * 8  # no NUL, but not UTF-8
    assert shown_output(noise, b"", len(noise)).binary
    assert not looks_binary("naïve café — ok\n".encode() * 100)
    assert not looks_binary(b"\x1b[31mred\x1b[0m\r\n" * 100)  # colours are text


def result(receipt: Receipt, **overrides: object) -> ShellResult:
    fields: dict[str, object] = {
        "receipt": receipt,
        "exit_code": 0,
        "output": "out",
        "truncated": False,
        "total_bytes": 3,
        "duration": 0.1,
        "note": "",
        "shown_bytes": 3,
    }
    fields.update(overrides)
    return ShellResult(**fields)  # type: ignore[arg-type]


def test_each_receipt_has_its_own_status_line() -> None:
    lines = {
        receipt: result(
            receipt, exit_code=1 if receipt is Receipt.EXIT_NONZERO else 0
        ).status_line()
        for receipt in Receipt
    }
    assert lines[Receipt.SUCCESS] == ""
    assert len(set(lines.values())) == len(Receipt)
    assert all("signal: killed" not in line for line in lines.values())


def test_model_text_orders_output_truncation_status_note() -> None:
    text = result(
        Receipt.EXIT_NONZERO,
        exit_code=2,
        truncated=True,
        total_bytes=10,
        note="look at the log",
    ).to_model_text()
    assert text == (
        "out\n[output truncated: showed 3 of 10 bytes]\n[exit code 2]\nnote: look at the log"
    )


def test_truncated_success_still_says_so() -> None:
    text = result(Receipt.SUCCESS, output="", truncated=True, total_bytes=9, shown_bytes=0)
    assert text.to_model_text() == "[output truncated: showed 0 of 9 bytes]"


def test_payload_is_json_and_carries_the_text() -> None:
    item = result(Receipt.TIMEOUT, exit_code=None, note="n")
    payload = json.loads(json.dumps(item.to_payload()))
    assert payload["receipt"] == "timeout"
    assert payload["exit_code"] is None
    assert payload["text"] == item.to_model_text()
    # milliseconds are enough for the model; a 16-digit fraction only costs tokens
    assert result(Receipt.SUCCESS, duration=1.5156207139993057).to_payload()["duration"] == 1.516


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (0, "exit code 0"),
        (3, "exit code 3"),
        (-15, "killed by SIGTERM (exit code -15)"),
        (-200, "killed by signal 200 (exit code -200)"),
        (None, "exit code unknown"),
    ],
)
def test_describe_exit(code: int | None, text: str) -> None:
    assert describe_exit(code) == text


def test_signal_group_to_nobody_is_false() -> None:
    free = _free_pid()
    assert procgroup.signal_group(free, signal.SIGTERM) is False
    assert procgroup.group_alive(free) is False


def test_group_alive_counts_live_members_only() -> None:
    assert procgroup.group_alive(os.getpgid(0))


def test_group_alive_without_procfs_trusts_kill(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_proc(path: str) -> list[str]:
        raise OSError("no procfs")

    monkeypatch.setattr(procgroup.os, "listdir", no_proc)
    assert procgroup.group_alive(os.getpgid(0))


def test_group_alive_skips_vanished_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(procgroup.os, "listdir", lambda path: ["self", str(_free_pid())])
    assert procgroup.group_alive(os.getpgid(0)) is False


def test_not_permitted_groups_count_as_alive_and_unsignalled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(pgid: int, signum: int) -> None:
        raise PermissionError(pgid)

    monkeypatch.setattr(procgroup.os, "killpg", refuse)
    assert procgroup.group_alive(12345) is True
    assert procgroup.signal_group(12345, signal.SIGKILL) is False


def _free_pid() -> int:
    pid = int(Path("/proc/sys/kernel/pid_max").read_text()) - 1
    while Path(f"/proc/{pid}").exists():
        pid -= 1
    return pid
