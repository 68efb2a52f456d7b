"""Screenshot paths converge to the session's browser directory whatever the model asks for:
`..`, absolute paths, `~`, symlinks out, wrong suffixes — each rewritten inside
the directory with a note, and a path already inside kept as given."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yagent.tools.browser.shots import converge


def _inside(path: Path, root: Path) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)


def test_a_relative_path_inside_is_kept(tmp_path: Path) -> None:
    target, note = converge(tmp_path, "shots/page.png")
    assert target == tmp_path.resolve() / "shots" / "page.png"
    assert note == ""
    assert target.parent.is_dir(), "parents are created"


def test_dotdot_is_rewritten_into_the_directory(tmp_path: Path) -> None:
    root = tmp_path / "state" / "browser"
    target, note = converge(root, "../../etc/x.png")
    assert target == root.resolve() / "x.png"
    assert "outside" in note
    assert "../../etc/x.png" in note


def test_an_absolute_path_outside_is_rewritten(tmp_path: Path) -> None:
    target, note = converge(tmp_path / "b", "/etc/passwd.png")
    assert target == (tmp_path / "b").resolve() / "passwd.png"
    assert note


def test_an_absolute_path_inside_is_kept(tmp_path: Path) -> None:
    wanted = tmp_path.resolve() / "deep" / "a.jpg"
    assert converge(tmp_path, str(wanted)) == (wanted, "")


def test_home_is_outside(tmp_path: Path) -> None:
    target, note = converge(tmp_path, "~/x.png")
    assert target == tmp_path.resolve() / "x.png"
    assert note


def test_a_path_naming_no_file_gets_a_generated_name(tmp_path: Path) -> None:
    for requested in (str(tmp_path) + "/", ".", "..", "/", "shots/"):
        target, note = converge(tmp_path, requested)
        assert _inside(target, tmp_path), requested
        assert target.name.startswith("screenshot-"), requested
        assert note, requested


def test_a_hidden_name_is_not_a_suffix(tmp_path: Path) -> None:
    target, note = converge(tmp_path, ".png")
    assert target.name == ".png.png"
    assert note


def test_empty_gets_a_generated_name_without_a_note(tmp_path: Path) -> None:
    first, note = converge(tmp_path, "  ")
    second, _ = converge(tmp_path, "")
    assert note == ""
    assert first != second, "generated names do not collide"
    assert first.suffix == ".png"
    assert _inside(first, tmp_path)


def test_a_wrong_suffix_gets_png(tmp_path: Path) -> None:
    target, note = converge(tmp_path, "page.txt")
    assert target.name == "page.txt.png"
    assert ".png was appended" in note


def test_a_symlink_out_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    target, note = converge(root, "link/x.png")
    assert target == root.resolve() / "x.png"
    assert note
    # a file name that is itself a symlink out gets a generated name
    (root / "evil.png").symlink_to(outside / "evil.png")
    target, note = converge(root, "../evil.png")
    assert _inside(target, root)
    assert target.name != "evil.png"
    assert note


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="ab./~-_ \\", max_size=30))
def test_every_request_lands_inside(tmp_path: Path, requested: str) -> None:
    root = tmp_path / "r"
    target, note = converge(root, requested)
    assert _inside(target, root)
    assert target.suffix.lower() in (".png", ".jpg", ".jpeg")
    rewritten = os.path.realpath(os.path.join(root, os.path.expanduser(requested.strip())))
    if requested.strip() and rewritten != str(target):
        assert note, "a request not used as given is always explained"
