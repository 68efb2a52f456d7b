"""app.workspace: the repository's root is the workspace, found from any folder below it."""

from __future__ import annotations

from pathlib import Path

from yagent.app.workspace import Place, locate


def test_a_subfolder_locates_the_nearest_git_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    assert locate(deep) == Place(repo.resolve(), deep.resolve())
    assert locate(repo) == Place(repo.resolve(), repo.resolve())
    nested = repo / "a" / "vendored"
    nested.mkdir()
    (nested / ".git").write_text("gitdir: ../../.git/modules/vendored\n")  # a gitfile counts
    assert locate(nested / ".").root == nested.resolve()


def test_outside_any_repository_the_start_is_the_workspace(tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "x"
    plain.mkdir(parents=True)
    assert locate(plain) == Place(plain.resolve(), plain.resolve())
