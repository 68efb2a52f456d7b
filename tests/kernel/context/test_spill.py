"""spill: the contract text, paging with clamped counts, cleanup by age, safe names only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yagent.kernel.context import spill
from yagent.kernel.context.spill import (
    BadNameError,
    NotFoundError,
    Spill,
    SpillError,
    is_safe_name,
    split_lines,
)


class FakeClock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


def numbered(n: int) -> str:
    return "".join(f"line {i:04d}\n" for i in range(1, n + 1))  # 10 chars per line


def make(tmp_path: Path, **kwargs: object) -> tuple[Spill, FakeClock]:
    clock = FakeClock()
    settings_ = {"limit": 100, "page_size": 5, "page_cap": 20, **kwargs}
    return Spill(tmp_path / "spill", clock=clock, **settings_), clock  # type: ignore[arg-type]


def test_output_within_budget_comes_back_unchanged(tmp_path: Path) -> None:
    store, _ = make(tmp_path)
    out = store.offer("s1", numbered(10))
    assert not out.spilled
    assert out.text == numbered(10)
    assert out.locator is None
    assert not (tmp_path / "spill").exists()


def test_over_budget_output_is_stored_and_replaced_by_the_contract(tmp_path: Path) -> None:
    store, _ = make(tmp_path)
    output = numbered(50)
    out = store.offer("s1", output)
    assert out.spilled
    assert out.stored
    assert out.locator is not None
    assert (out.total_lines, out.shown_lines) == (50, 10)
    assert (out.total_bytes, out.shown_bytes) == (500, 100)
    assert out.text.startswith(numbered(10))
    notice = out.text[len(numbered(10)) :]
    assert "showing lines 1-10 of 50" in notice
    assert "100 of 500 bytes" in notice
    assert f"locator={out.locator}" in notice
    assert "page=3 count=5" in notice
    assert "at most 20" in notice
    assert (tmp_path / "spill" / "s1" / f"{out.locator}.out").read_text() == output


def test_head_is_cut_at_whole_lines_and_the_notice_starts_on_its_own_line(tmp_path: Path) -> None:
    store, _ = make(tmp_path, limit=25)
    out = store.offer("s1", "a" * 20 + "\n" + "b" * 20 + "\n" + "c" * 20)
    assert out.text.startswith("a" * 20 + "\n[output cut: showing lines 1-1 of 3")


def test_first_line_larger_than_the_budget_shows_no_lines(tmp_path: Path) -> None:
    store, _ = make(tmp_path, limit=10)
    out = store.offer("s1", "x" * 50)
    assert out.shown_lines == 0
    assert out.text.startswith("[output cut: showing no lines of 1")


def test_hint_is_host_text(tmp_path: Path) -> None:
    store, _ = make(tmp_path, hint="use the pager tool on {locator} from page {next_page}")
    out = store.offer("s1", numbered(50))
    assert f"use the pager tool on {out.locator} from page 3" in out.text
    with pytest.raises(SpillError, match="hint"):
        make(tmp_path, hint="{unknown}")


def test_store_failure_still_cuts_and_says_the_rest_is_lost(tmp_path: Path) -> None:
    (tmp_path / "spill").write_text("a file where the root should be")
    store, _ = make(tmp_path)
    out = store.offer("s1", numbered(50))
    assert out.spilled
    assert not out.stored
    assert out.locator is None
    assert out.error
    assert out.text.startswith(numbered(10))
    assert "could NOT be stored" in out.text
    assert "lost" in out.text
    assert "locator" not in out.text


def test_fetch_pages_by_lines(tmp_path: Path) -> None:
    store, _ = make(tmp_path)
    out = store.offer("s1", numbered(50))
    assert out.locator is not None
    page = store.fetch("s1", out.locator, 3, 5)
    assert page.text == "".join(f"line {i:04d}\n" for i in range(11, 16))
    assert (page.page, page.count, page.total_lines, page.has_more, page.clamped) == (
        3,
        5,
        50,
        True,
        None,
    )
    last = store.fetch("s1", out.locator, 10, 5)
    assert last.text.endswith("line 0050\n")
    assert not last.has_more
    beyond = store.fetch("s1", out.locator, 99, 5)
    assert (beyond.text, beyond.has_more) == ("", False)


@pytest.mark.parametrize(
    ("count", "expected", "note"),
    [
        (0, 5, "defaulted"),
        (-3, 5, "defaulted"),
        (21, 20, "cap"),
        (10**9, 20, "cap"),
        (20, 20, None),
    ],
)
def test_fetch_count_is_clamped(
    tmp_path: Path, count: int, expected: int, note: str | None
) -> None:
    store, _ = make(tmp_path)
    out = store.offer("s1", numbered(50))
    assert out.locator is not None
    page = store.fetch("s1", out.locator, 1, count)
    assert page.count == expected
    assert len(split_lines(page.text)) == expected
    if note is None:
        assert page.clamped is None
    else:
        assert page.clamped is not None
        assert note in page.clamped


def test_fetch_page_below_one_reads_page_one(tmp_path: Path) -> None:
    store, _ = make(tmp_path)
    out = store.offer("s1", numbered(50))
    assert out.locator is not None
    page = store.fetch("s1", out.locator, 0, 5)
    assert page.page == 1
    assert page.text.startswith("line 0001")
    assert page.clamped == "page 0 read as 1"


def test_fetch_unknown_locator_and_wrong_session(tmp_path: Path) -> None:
    store, _ = make(tmp_path)
    out = store.offer("s1", numbered(50))
    assert out.locator is not None
    with pytest.raises(NotFoundError):
        store.fetch("s1", "sp-missing")
    with pytest.raises(NotFoundError):
        store.fetch("s2", out.locator)


def test_overlong_lines_are_paged_in_pieces(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(spill, "MAX_LINE_CHARS", 10)
    assert split_lines("a" * 25 + "\nb") == ["a" * 10, "a" * 10, "aaaaa\n", "b"]
    store, _ = make(tmp_path, limit=30)
    out = store.offer("s1", "z" * 100)
    assert out.locator is not None
    assert out.total_lines == 10
    assert store.fetch("s1", out.locator, 2, 3).text == "z" * 30


def test_unicode_and_crlf_round_trip(tmp_path: Path) -> None:
    store, _ = make(tmp_path, limit=20)
    output = "汉字 line one\r\nsecond ✓\r\n" * 10
    out = store.offer("s1", output)
    assert out.locator is not None
    assert out.total_bytes == len(output.encode())
    assert store.fetch("s1", out.locator, 1, 20).text == output


def test_same_output_same_locator(tmp_path: Path) -> None:
    store, _ = make(tmp_path)
    a = store.offer("s1", numbered(50))
    b = store.offer("s1", numbered(50))
    c = store.offer("s1", numbered(51))
    assert a.locator == b.locator != c.locator


# --- names ------------------------------------------------------------------------------------

BAD_NAMES = [
    "",
    ".",
    "..",
    "../x",
    "a/b",
    "/abs",
    "a\\b",
    "..\\..",
    "C:x",
    "c:",
    "C:\\Windows",
    "name:stream",
    "a\x00b",
    "tab\there",
    "new\nline",
    "\udcff",
    "x" * 256,
    "é" * 128,
]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_unsafe_names_are_refused_everywhere(tmp_path: Path, name: str) -> None:
    store, _ = make(tmp_path)
    assert not is_safe_name(name)
    with pytest.raises(BadNameError):
        store.offer(name, numbered(50))
    with pytest.raises(BadNameError):
        store.fetch(name, "sp-x")
    with pytest.raises(BadNameError):
        store.fetch("s1", name)
    assert not (tmp_path / "spill").exists()


@pytest.mark.parametrize("name", ["s1", "session-42_a.b", "...", "..a", "a..", "会话", "x" * 255])
def test_plain_names_are_accepted(name: str) -> None:
    assert is_safe_name(name)


def test_non_string_names_are_refused(tmp_path: Path) -> None:
    assert not is_safe_name(None)
    assert not is_safe_name(b"s1")
    with pytest.raises(BadNameError):
        make(tmp_path)[0].fetch(42, "x")  # type: ignore[arg-type]


def test_dotdot_session_cannot_read_the_roots_parent(tmp_path: Path) -> None:
    """The v0.13.0 escape: session '..' pointed at the root's parent; now a BadNameError."""
    store, _ = make(tmp_path)
    (tmp_path / "secret.out").write_text("outside the root")
    with pytest.raises(BadNameError):
        store.fetch("..", "secret")


def test_symlinked_session_leaving_the_root_is_refused(tmp_path: Path) -> None:
    store, _ = make(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.out").write_text("outside")
    (tmp_path / "spill").mkdir()
    os.symlink(outside, tmp_path / "spill" / "s1")
    with pytest.raises(BadNameError, match="outside"):
        store.fetch("s1", "x")


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=40), st.text(max_size=40))
def test_no_accepted_name_resolves_outside_the_root(
    tmp_path: Path, session: str, locator: str
) -> None:
    store = Spill(tmp_path / "root")
    root = (tmp_path / "root").resolve()
    try:
        path = store.path(session, locator)
    except BadNameError:
        return
    assert path.is_relative_to(root)
    assert path.parent.parent == root
    assert path.parent.name == session
    assert path.name == locator + ".out"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["", ".", ".."]), st.sampled_from(["/", "\\", ":"]), st.text(max_size=5))
def test_names_built_from_path_parts_are_refused(prefix: str, sep: str, tail: str) -> None:
    assert not is_safe_name(prefix + sep + tail)
    assert not is_safe_name(tail + sep + prefix)


# --- cleanup ----------------------------------------------------------------------------------


def test_cleanup_by_age_on_the_injected_clock(tmp_path: Path) -> None:
    store, clock = make(tmp_path)
    old = store.offer("s1", numbered(50))
    clock.t += 3600
    fresh = store.offer("s2", numbered(60))
    also_old = store.offer("s2", numbered(70))
    assert old.locator is not None
    assert fresh.locator is not None
    assert also_old.locator is not None
    os.utime(store.path("s2", also_old.locator), (clock.t - 7200, clock.t - 7200))
    clock.t += 60
    result = store.cleanup(max_age=1800)
    assert result.removed == 2
    assert result.removed_bytes == 500 + 700
    assert result.failed == ()
    assert not (tmp_path / "spill" / "s1").exists()
    assert store.fetch("s2", fresh.locator).total_lines == 60
    with pytest.raises(NotFoundError):
        store.fetch("s1", old.locator)


def test_cleanup_of_a_missing_root_is_empty(tmp_path: Path) -> None:
    store, _ = make(tmp_path)
    assert store.cleanup(0) == spill.Cleanup(0, 0, ())


def test_cleanup_skips_stray_files_and_session_symlinks(tmp_path: Path) -> None:
    store, clock = make(tmp_path)
    store.offer("s1", numbered(50))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.out").write_text("x")
    os.symlink(outside, tmp_path / "spill" / "link")
    (tmp_path / "spill" / "stray.txt").write_text("x")
    clock.t += 10_000
    result = store.cleanup(max_age=1)
    assert result.removed == 1
    assert (outside / "keep.out").exists()
    assert (tmp_path / "spill" / "stray.txt").exists()


def test_cleanup_reports_what_it_could_not_remove(tmp_path: Path) -> None:
    store, clock = make(tmp_path)
    store.offer("s1", numbered(50))
    session = tmp_path / "spill" / "s1"
    (session / "sub").mkdir()  # a directory cannot be unlinked: reported, not fatal
    clock.t += 10_000
    os.utime(session / "sub", (0, 0))
    result = store.cleanup(max_age=1)
    assert result.removed == 1
    assert len(result.failed) == 1
    assert "sub" in result.failed[0]


@pytest.mark.parametrize(
    "kwargs", [{"limit": 0}, {"page_size": 0}, {"page_size": 10, "page_cap": 5}]
)
def test_bad_settings_are_refused(tmp_path: Path, kwargs: dict[str, int]) -> None:
    with pytest.raises(SpillError):
        Spill(tmp_path, **kwargs)  # type: ignore[arg-type]


def test_system_clock_is_wall_time(tmp_path: Path) -> None:
    import time

    store = Spill(tmp_path, limit=5)
    out = store.offer("s", "x" * 50)
    assert out.locator is not None
    assert abs(store.path("s", out.locator).stat().st_mtime - time.time()) < 3600
    assert store.root == tmp_path
