"""`gcpolicy`: an app opened in a one-app process freezes start-up's objects; elsewhere never."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from yagent.app import gcpolicy


def test_nothing_is_frozen_unless_the_host_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(gcpolicy._state, "freeze", False)
    before = gc.get_freeze_count()
    assert gcpolicy.opened() is False
    assert gc.get_freeze_count() == before


def test_the_command_entry_asks_and_an_open_app_freezes() -> None:
    script = (
        "import gc, sys\n"
        "from yagent.cli import entry\n"
        "from yagent.app import gcpolicy\n"
        "sys.argv = ['yagent', '--version']\n"
        "try:\n    entry()\nexcept SystemExit:\n    pass\n"
        "assert gcpolicy._state['freeze'] is True\n"
        "assert gc.get_freeze_count() == 0\n"
        "assert gcpolicy.opened() is True\n"
        "assert gc.get_freeze_count() > 1000\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip().endswith("ok"), done.stderr
