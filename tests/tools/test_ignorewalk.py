"""ignorewalk agrees with ripgrep itself: globs, ignore files and walk order, checked with rg."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yagent.tools.ignorewalk import Filter, GlobError, GlobList, IgnoreTree, parse_line, walk_files
from yagent.tools.searchkit.locate import locate_rg

RG = locate_rg()
assert RG is not None, "the ripgrep wheel is a dependency"

NAMES = [
    "a.py", "b.txt", "ab.py", ".hid.py", "ab/c.py", "ab/d/e.md", "ab/d/a.py", "x/a.py",
    "x/ab.txt", "x/y/z/b.py", ".hid/a.py", "a/b/c", "a/b.py", "d/x.txt", "dx/a.md",
]  # fmt: skip


def rg_files(root: Path, *extra: str, cwd: Path | None = None) -> list[str]:
    argv = [RG.path, "--files", "--sort", "path", "--hidden", "--no-config", "--no-ignore-global"]
    argv += [*extra, "--glob", "!.git", str(root)]
    done = subprocess.run(argv, cwd=cwd or root, capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return [os.path.relpath(os.fsdecode(p), root) for p in done.stdout.splitlines()]


def ours(root: Path, keep: Filter | None = None) -> list[str]:
    real = os.path.realpath(root)
    return [os.path.relpath(p, real) for p in walk_files(real, keep=keep)]


def make(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make(tmp_path_factory.mktemp("plain"), dict.fromkeys(NAMES, "x\n"))


GLOB_TOKENS = ["*", "**", "?", "a", "b", ".py", ".txt", "/", "{a,b}", "{*.py,x}", "[ab]", "[!a]"]
GLOB_TOKENS += ["{", "}", ",", "[", "]", "{**/a,b}", "{a/**,x}", "{,a}"]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tokens=st.lists(st.sampled_from([*GLOB_TOKENS, "x", "d", "\\*"]), min_size=1, max_size=5),
       negate=st.booleans())  # fmt: skip
def test_globs_select_the_files_rg_selects(plain: Path, tokens: list[str], negate: bool) -> None:
    glob = ("!" if negate else "") + "".join(tokens)
    argv = [RG.path, "--files", "--no-config", "--glob", glob, str(plain)]
    refused = subprocess.run(argv, capture_output=True, check=False).returncode == 2
    if refused:
        with pytest.raises(GlobError):
            Filter([glob], str(plain))
        return
    assert ours(plain, Filter([glob], str(plain))) == rg_files(plain, "--glob", glob), glob


@pytest.mark.parametrize(
    "glob",
    ["**", "**/**", "a/**", "**/a.py", "a/**/c", "/a.py", "ab/", "ab/*", "[]a]*", "[a", "{a"],
)
def test_named_glob_shapes(plain: Path, glob: str) -> None:
    if glob in ("{a", "[a"):
        with pytest.raises(GlobError, match="unclosed"):
            Filter([glob], str(plain))
        return
    assert ours(plain, Filter([glob], str(plain))) == rg_files(plain, "--glob", glob), glob


IGNORE_TREE = {
    ".gitignore": "*.log\n!keep.log\n/top.txt\nbuild/\ndeep/**/x.txt\n# comment\n\\#hash\n",
    ".ignore": "!deep/**/x.txt\nignored_by_dot_ignore\n",
    ".rgignore": "rg_only\n",
    "keep.log": "", "drop.log": "", "top.txt": "", "sub/top.txt": "", "#hash": "",
    "build/a": "", "sub/build": "", "deep/a/x.txt": "", "deep/x.txt": "",
    "ignored_by_dot_ignore": "", "rg_only": "", "trail \\ ": "",
    "sub/.gitignore": "!drop.log\n*.tmp\n", "sub/drop.log": "", "sub/a.tmp": "",
    "nested/.git/HEAD": "", "nested/a.log": "", "nested/.gitignore": "b.txt\n", "nested/b.txt": "",
    "nested/c.tmp": "",
}  # fmt: skip


@pytest.fixture(scope="module")
def ignoring(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("ignoring")
    (base / ".gitignore").write_text("outer_rule\n")  # above the repository: never counts
    (base / ".ignore").write_text("from_parent\n")  # .ignore above the root: counts
    root = make(base / "repo", IGNORE_TREE)
    (root / ".git").mkdir()
    make(root, {"outer_rule": "", "from_parent": "", "sub/from_parent": ""})
    return root


@pytest.mark.parametrize("sub", [".", "sub", "deep", "nested", "build"])
def test_ignore_files_hide_what_rg_hides(ignoring: Path, sub: str) -> None:
    root = ignoring / sub
    assert ours(root) == rg_files(root)


def test_ignore_file_precedence_and_git_scope(ignoring: Path) -> None:
    found = set(ours(ignoring))
    # .ignore's `!deep/**/x.txt` outranks .gitignore's `deep/**/x.txt`; sub/ re-includes drop.log.
    assert {"keep.log", "sub/top.txt", "deep/a/x.txt", "deep/x.txt", "sub/drop.log"} <= found
    assert "outer_rule" in found  # a .gitignore above the repository root does not count
    hidden = {"drop.log", "top.txt", "build/a", "rg_only", "from_parent", "#hash", "sub/a.tmp"}
    assert not hidden & found
    assert "nested/a.log" in found  # a nested repository: the outer .gitignore stops at its .git
    assert "nested/b.txt" not in found
    assert "nested/c.tmp" in found


def test_walk_order_is_rg_sort_path(plain: Path) -> None:
    assert ours(plain) == rg_files(plain)


def test_explicit_file_root_is_yielded_even_when_ignored(ignoring: Path) -> None:
    target = str(ignoring / "drop.log")
    assert list(walk_files(target)) == [target]
    assert list(walk_files(str(ignoring / "missing"))) == []


def test_unlistable_directories_are_reported(tmp_path: Path) -> None:
    errors: list[str] = []
    assert list(walk_files(str(tmp_path), errors=errors)) == []
    from yagent.tools.ignorewalk import walk

    assert walk._sorted_entries(str(tmp_path / "absent"), errors) == []
    assert errors
    assert "absent" in errors[0]


def test_glob_lists_and_lines() -> None:
    assert parse_line("# comment") is None
    assert parse_line("   ") is None
    assert parse_line("\\!bang") is not None
    assert not parse_line("\\!bang").negated
    keep = parse_line("!keep/")
    assert keep is not None
    assert keep.negated
    assert keep.dir_only
    lst = GlobList(["{bad", "*.py"], source="x/.gitignore")
    assert lst.problems == [
        "x/.gitignore: line 1: unclosed alternate group in glob '**/{bad'; missing '}'"
    ]
    assert lst.match("a.py", False) is not None
    assert lst.match("a.txt", False) is None
    assert not GlobList([])
    with pytest.raises(GlobError, match="dangling"):
        GlobList(["a\\"])


def test_chain_refuses_directories_outside_the_root(tmp_path: Path) -> None:
    tree = IgnoreTree(str(tmp_path / "inner"))
    with pytest.raises(ValueError, match="not inside"):
        tree.chain(str(tmp_path))
    assert IgnoreTree("/").chain("/").levels is not None


LINE_TOKENS = ["*", "**", "a", "b", ".py", "/", "ab", "d", "x", "?", "[ab]", "{a,b}"]
lines = st.builds(
    lambda neg, toks, slash: ("!" if neg else "") + "".join(toks) + ("/" if slash else ""),
    st.booleans(),
    st.lists(st.sampled_from(LINE_TOKENS), min_size=1, max_size=4),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(
    top=st.lists(lines, max_size=4),
    inner=st.lists(lines, max_size=3),
    dot=st.lists(lines, max_size=2),
)
def test_random_ignore_files_hide_what_rg_hides(
    top: list[str], inner: list[str], dot: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = make(Path(tmp), dict.fromkeys(NAMES, "x\n"))
        (root / ".git").mkdir()
        (root / ".gitignore").write_text("\n".join(top) + "\n")
        (root / "ab" / ".gitignore").write_text("\n".join(inner) + "\n")
        (root / "x" / ".ignore").write_text("\n".join(dot) + "\n")
        assert ours(root) == rg_files(root), (top, inner, dot)
        if not any(anchored(line) for line in top):
            assert ours(root / "ab") == rg_files(root / "ab"), (top, inner, dot)


def anchored(line: str) -> bool:
    """A pattern with a slash before its end is anchored to its file's directory."""
    return "/" in line.removeprefix("!").rstrip("/")


def test_a_parent_pattern_anchored_to_its_directory_is_read_as_git_reads_it(tmp_path: Path) -> None:
    """Searching a subdirectory, ripgrep 14 reads the anchored patterns of an ignore file above
    it differently from git (`ab/d/a.py` in the root's .gitignore does not hide it; `*/a*` hides
    `ab/d/a.py`, which git keeps): the walker follows git, from the root and from `ab` alike
    (docs/tools.md, `search`)."""
    root = make(tmp_path, {"ab/d/a.py": "x\n", "ab/d/e.md": "x\n", "ab/c.py": "x\n"})
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("ab/d/a.py\n")
    assert ours(root / "ab") == ["c.py", "d/e.md"]
    assert "ab/d/a.py" not in ours(root)
    (root / ".gitignore").write_text("*/a*\n")
    assert ours(root / "ab") == ["c.py", "d/a.py", "d/e.md"]
    assert "ab/d/a.py" in ours(root)
