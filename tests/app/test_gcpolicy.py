"""`gcpolicy`: in a one-app process no collection runs during start-up, and an app opened (or a
command that opens none, released) freezes start-up's objects; elsewhere nothing is held or
frozen."""

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


def test_the_hold_runs_no_collection_until_released_then_freezes_and_collects() -> None:
    script = (
        "import gc\n"
        "from yagent.app import gcpolicy\n"
        "gcpolicy.hold_until_open()\n"
        "assert not gc.isenabled()\n"
        "before = gc.get_stats()[0]['collections']\n"
        "junk = [[i] for i in range(100_000)]\n"  # far above the first generation's threshold
        "assert gc.get_stats()[0]['collections'] == before\n"
        "gcpolicy.release()\n"
        "assert gc.isenabled()\n"
        "frozen = gc.get_freeze_count()\n"
        "assert frozen > 100_000\n"  # what was built before the release, the junk included
        "gcpolicy.release()\n"  # once only: a second release freezes nothing more
        "assert gc.get_freeze_count() == frozen\n"
        "assert gcpolicy.opened() is True\n"  # an app opened later still freezes
        "assert gc.isenabled()\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip().endswith("ok"), done.stderr


def test_an_app_opened_during_the_hold_ends_it() -> None:
    script = (
        "import gc\n"
        "from yagent.app import gcpolicy\n"
        "gcpolicy.hold_until_open()\n"
        "assert gcpolicy.opened() is True\n"
        "assert gc.isenabled()\n"
        "assert gc.get_freeze_count() > 1000\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip().endswith("ok"), done.stderr


def test_release_without_a_hold_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(gcpolicy._state, "held", False)
    before = gc.get_freeze_count()
    gcpolicy.release()
    assert gc.isenabled()
    assert gc.get_freeze_count() == before
