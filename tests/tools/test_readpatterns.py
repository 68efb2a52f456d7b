"""`[sandbox] deny_read` patterns (`tools.readpatterns`) as `ReadMask` judges them: Claude's
`./secrets/**` is the folder, `config/*.pem` is anchored, `*.pem` matches at any depth, `~/`
patterns are below the home; `allow_read` still re-opens; a folder too large to walk fails
closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.tools import readpatterns
from yagent.tools.readmask import ReadMask
from yagent.tools.readpatterns import Pattern, Plain, ReadPatternError, split


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    for rel in ("secrets/key", "config/prod.pem", "config/sub/deep.pem", "a.pem", "src/x.py"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x")
    (home / "keys").mkdir(parents=True)
    (home / "keys" / "id.key").write_text("k")
    return ws, home


def test_folder_tails_and_dot_slash_are_the_folder_itself(tmp_path: Path) -> None:
    for entry in ("./secrets/**", "secrets/**", "secrets/*", "./secrets/**/*", "secrets"):
        assert split(entry, tmp_path, tmp_path) == Plain("secrets"), entry


def test_patterns_are_anchored_with_a_slash_and_free_without(tmp_path: Path) -> None:
    ws, home = _tree(tmp_path)
    env = {"HOME": str(home), "YAGENT_HOME": str(tmp_path / "yh")}
    mask = ReadMask(ws, deny=("config/*.pem",), env=env)
    assert mask.denies(str(ws / "config/prod.pem")) == ws / "config/prod.pem"
    assert mask.denies(str(ws / "config/sub/deep.pem")) is None  # anchored: one level
    assert mask.denies(str(ws / "a.pem")) is None
    free = ReadMask(ws, deny=("*.pem",), env=env)
    for rel in ("a.pem", "config/prod.pem", "config/sub/deep.pem"):
        assert free.denies(str(ws / rel)) == ws / rel, rel
    assert free.denies(str(ws / "src/x.py")) is None
    inside = [p for p in free.hidden() if p.is_relative_to(ws)]
    assert sorted(inside) == sorted(
        [ws / "a.pem", ws / "config/prod.pem", ws / "config/sub/deep.pem"]
    )


def test_a_matched_folder_hides_what_is_inside(tmp_path: Path) -> None:
    ws, home = _tree(tmp_path)
    env = {"HOME": str(home), "YAGENT_HOME": str(tmp_path / "yh")}
    mask = ReadMask(ws, deny=("**/secret*",), env=env)
    assert mask.denies(str(ws / "secrets/key")) == ws / "secrets"
    assert ws / "secrets" in mask.hidden()
    assert ws / "secrets/key" not in mask.hidden()  # the folder is hidden whole


def test_home_patterns_and_allow_read(tmp_path: Path) -> None:
    ws, home = _tree(tmp_path)
    env = {"HOME": str(home), "YAGENT_HOME": str(tmp_path / "yh")}
    found = split("~/keys/*.key", ws, home)
    assert isinstance(found, Pattern)
    assert found.folder == home / "keys"
    mask = ReadMask(ws, deny=("~/keys/*.key", "*.pem"), allow=("config",), env=env)
    assert mask.denies(str(home / "keys/id.key")) == home / "keys/id.key"
    assert mask.denies(str(ws / "config/prod.pem")) is None  # re-opened by allow_read
    assert mask.denies(str(ws / "a.pem")) == ws / "a.pem"
    assert ws / "config/prod.pem" not in mask.hidden()


def test_a_folder_too_large_to_walk_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home = _tree(tmp_path)
    monkeypatch.setattr(readpatterns, "MAX_WALK", 3)
    mask = ReadMask(ws, deny=("*.pem",), env={"HOME": str(home)})
    with pytest.raises(ReadPatternError, match=r"'\*\.pem'.*hide a folder instead"):
        mask.hidden()
