"""`[sandbox] deny_read` / `allow_read` from configuration to the sandbox and the file tools.

A project file comes with the repository: its `deny_read` adds (it only hides more), its
`allow_read` is withheld until the person trusts the file — unless the user's own file already
re-opens the same paths. The user's own `allow_read` is the person's word and applies.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.app import safety
from yagent.app.config import ConfigError, load
from yagent.app.projectkeys import notice
from yagent.app.trust import CONFIG_FILE

from ..projecttrust import write_trusted
from .files import write

PROJECT = CONFIG_FILE


def hidden(home: Path, ws: Path) -> set[Path]:
    config = load(home=home, workspace=ws, env={})
    built = safety.build(config, ws)
    assert built.commands.reads == safety.read_mask(config, ws), "gate and guard share one mask"
    return set(built.commands.reads.hidden())


def test_deny_read_adds_up_across_the_user_and_an_untrusted_project(
    dirs: tuple[Path, Path],
) -> None:
    home, ws = dirs
    write(home / "config.toml", '[sandbox]\ndeny_read = ["~/work-secrets"]\n')
    write(ws / ".yagent" / "config.toml", '[sandbox]\ndeny_read = ["private", "/srv/keys"]\n')
    config = load(home=home, workspace=ws, env={})
    assert config.sandbox.deny_read == ["~/work-secrets", "private", "/srv/keys"]
    assert not config.project.withheld, "hiding more needs no trust"
    found = hidden(home, ws)
    assert {ws / "private", Path("/srv/keys"), Path.home() / "work-secrets"} <= found


def test_an_untrusted_project_cannot_reopen_a_hidden_path(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(ws / ".yagent" / "config.toml", '[sandbox]\nallow_read = ["~/.ssh"]\n')
    config = load(home=home, workspace=ws, env={})
    assert config.sandbox.allow_read == []
    assert [w.key for w in config.project.withheld] == ["sandbox.allow_read"]
    assert "sandbox.allow_read" in (notice(config.project) or "")
    assert Path.home() / ".ssh" in hidden(home, ws)


def test_a_trusted_project_or_the_users_own_file_reopens(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write_trusted(home, ws, '[sandbox]\nallow_read = ["~/.ssh"]\n')
    assert Path.home() / ".ssh" not in hidden(home, ws)
    other = ws.parent / "ws2"
    other.mkdir()
    write(home / "config.toml", '[sandbox]\nallow_read = ["~/.aws", "~/.kube"]\n')
    write(other / ".yagent" / "config.toml", '[sandbox]\nallow_read = ["~/.aws"]\n')
    config = load(home=home, workspace=other, env={})
    assert config.sandbox.allow_read == ["~/.aws"], "a subset of the user's list applies"
    assert not config.project.withheld
    found = hidden(home, other)
    assert Path.home() / ".aws" not in found
    assert Path.home() / ".kube" in found, "the project's list replaces the user's: tighter"


@pytest.mark.parametrize("value", ['[""]', '["  "]', '"~/.ssh"', "[1]"])
def test_a_bad_entry_is_a_config_error_naming_the_key(dirs: tuple[Path, Path], value: str) -> None:
    home, ws = dirs
    write(home / "config.toml", f"[sandbox]\ndeny_read = {value}\n")
    with pytest.raises(ConfigError, match="deny_read"):
        load(home=home, workspace=ws, env={})
