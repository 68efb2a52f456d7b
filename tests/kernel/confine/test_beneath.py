"""kernel.confine.beneath: paths opened beneath a directory descriptor, no symbolic link followed —
by `openat2` and by the portable walk alike."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from yagent.kernel.confine import beneath


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(beneath, "USE_OPENAT2", request.param == "openat2")
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[Path, Path, int]]:
    """(root, outside, root's descriptor): root/real/f.txt, root/link -> outside, root/up -> ..."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "real").mkdir(parents=True)
    outside.mkdir()
    (root / "real" / "f.txt").write_text("inside")
    (outside / "f.txt").write_text("outside")
    (root / "link").symlink_to(outside)
    (root / "flink").symlink_to(outside / "f.txt")
    (root / "inlink").symlink_to(root / "real")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield root, outside, fd
    finally:
        os.close(fd)


def read(fd: int) -> str:
    with os.fdopen(fd, "rb") as f:
        return f.read().decode()


def test_opens_plain_paths(mode: str, tree: tuple[Path, Path, int]) -> None:
    _, _, root = tree
    assert read(beneath.open_beneath(root, ["real", "f.txt"], os.O_RDONLY)) == "inside"


@pytest.mark.parametrize(
    "parts", [["link", "f.txt"], ["flink"], ["inlink", "f.txt"], ["link"], ["real", "..", "x"]]
)
def test_never_follows_a_link_or_climbs(
    mode: str, tree: tuple[Path, Path, int], parts: list[str]
) -> None:
    _, _, root = tree
    if ".." in parts:
        with pytest.raises(ValueError, match="plain path component"):
            beneath.open_beneath(root, parts, os.O_RDONLY)
        return
    with pytest.raises(beneath.SymlinkMetError) as exc:
        beneath.open_beneath(root, parts, os.O_RDONLY)
    assert exc.value.filename in ("/".join(parts), parts[0])


def test_creating_through_a_link_writes_nothing_outside(
    mode: str, tree: tuple[Path, Path, int]
) -> None:
    _, outside, root = tree
    flags = os.O_WRONLY | os.O_CREAT
    with pytest.raises(beneath.SymlinkMetError):
        beneath.open_beneath(root, ["link", "new.txt"], flags)
    with pytest.raises(beneath.SymlinkMetError):
        beneath.open_beneath(root, ["flink"], flags | os.O_TRUNC)
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text() == "outside"


def test_missing_and_wrong_kinds(mode: str, tree: tuple[Path, Path, int]) -> None:
    _, _, root = tree
    with pytest.raises(FileNotFoundError):
        beneath.open_beneath(root, ["nope", "f.txt"], os.O_RDONLY)
    with pytest.raises(NotADirectoryError):
        beneath.open_beneath(root, ["real", "f.txt", "x"], os.O_RDONLY)


def test_open_parent_makes_directories_but_not_through_links(
    mode: str, tree: tuple[Path, Path, int]
) -> None:
    base, outside, root = tree
    fd = beneath.open_parent(root, ["a", "b", "c.txt"], make=True)
    try:
        os.close(os.open("c.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    finally:
        os.close(fd)
    assert (base / "a" / "b" / "c.txt").is_file()
    with pytest.raises(beneath.SymlinkMetError):
        beneath.open_parent(root, ["link", "deeper", "x.txt"], make=True)
    assert not (outside / "deeper").exists()
    with pytest.raises(beneath.SymlinkMetError):
        beneath.open_parent(root, ["link", "x.txt"])


def test_the_descriptor_is_the_directory_that_was_opened(tree: tuple[Path, Path, int]) -> None:
    """Once open, a directory is used by descriptor: renaming its path away changes nothing."""
    base, _, root = tree
    fd = beneath.open_parent(root, ["real", "g.txt"])
    try:
        os.rename(base / "real", base / "moved")
        (base / "real").mkdir()
        os.close(os.open("g.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    finally:
        os.close(fd)
    assert (base / "moved" / "g.txt").exists()
    assert not (base / "real" / "g.txt").exists()
