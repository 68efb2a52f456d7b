"""`[sandbox]` resource limits: read, checked, wired into the command gate; a repository's own
file can lower them before it is trusted, never raise them. Real files, the real gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.app import safety
from yagent.app.config import ConfigError, load
from yagent.kernel.confine.sandbox import Limits, default_memory_mb

from .files import write

LIMITS = """
[sandbox]
memory_mb = 256
max_processes = 64
cpu_seconds = 30
file_size_mb = 8
open_files = 128
"""


def test_the_limits_reach_the_command_gate(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home / "config.toml", LIMITS)
    gate = safety.build(load(home=home, workspace=ws, env={}), ws).commands
    assert gate.limits == Limits(
        memory_mb=256, max_processes=64, cpu_seconds=30, file_size_mb=8, open_files=128
    )
    assert gate.confined(["."]).limits == gate.limits, "a confined worker keeps them"


def test_defaults_bound_every_sandbox(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    gate = safety.build(load(home=home, workspace=ws, env={}), ws).commands
    assert gate.limits == Limits(memory_mb=default_memory_mb())
    assert gate.limits.max_processes == 512


@pytest.mark.parametrize("bad", ["max_processes = 0", "memory_mb = -5", 'open_files = "many"'])
def test_a_limit_that_is_not_a_positive_integer_is_refused(
    dirs: tuple[Path, Path], bad: str
) -> None:
    home, ws = dirs
    write(home / "config.toml", f"[sandbox]\n{bad}\n")
    with pytest.raises(ConfigError, match=bad.split()[0]):
        load(home=home, workspace=ws, env={})


def test_an_untrusted_project_may_lower_limits_but_not_raise_them(
    dirs: tuple[Path, Path],
) -> None:
    home, ws = dirs
    write(home / "config.toml", LIMITS)
    write(ws / ".yagent" / "config.toml", "[sandbox]\nmax_processes = 32\nmemory_mb = 100000\n")
    config = load(home=home, workspace=ws, env={})
    assert config.sandbox.max_processes == 32
    assert config.sandbox.memory_mb == 256
    assert [w.key for w in config.project.withheld] == ["sandbox.memory_mb"]


def test_without_a_users_value_the_default_is_the_bar(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(ws / ".yagent" / "config.toml", "[sandbox]\ncpu_seconds = 100000\nopen_files = 16\n")
    config = load(home=home, workspace=ws, env={})
    assert (config.sandbox.cpu_seconds, config.sandbox.open_files) == (3600, 16)
    assert [w.key for w in config.project.withheld] == ["sandbox.cpu_seconds"]
