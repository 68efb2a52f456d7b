"""bubblewrap's hidden paths and protected names at any depth, against the real `bwrap`.

Everything lives in a temp dir under /var/tmp: the sandbox masks /tmp, so a secret there would be
invisible whatever the provider did, and the test would prove nothing.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from yagent.kernel.confine.sandbox import BwrapProvider, Program, SetupError, mounts

pytestmark = pytest.mark.anyio

_SHOWN = [sys.prefix] if sys.prefix.startswith(("/tmp/", "/run/")) else []


@pytest.fixture
def base() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sandbox-hide-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def ws(base: Path) -> Path:
    root = base / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    return root


def secret(path: Path, text: str = "SECRET-VALUE\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def box(ws: Path, readable: list[Path] | None = None, **kwargs: object) -> BwrapProvider:
    shown = [*_SHOWN, *(readable or [])]
    return BwrapProvider(ws, protected=[".git", ".yagent"], readable=shown, **kwargs)  # type: ignore[arg-type]


async def sh(provider: BwrapProvider, script: str) -> tuple[int, str]:
    result = await provider.run(Program(["sh", "-c", script]))
    return result.exit_code, result.text


async def test_a_hidden_directory_and_a_hidden_file_read_nothing(base: Path, ws: Path) -> None:
    key = secret(base / "home" / ".ssh" / "id_rsa")
    netrc = secret(base / "home" / ".netrc")
    provider = box(ws, hidden=[key.parent, netrc])
    code, text = await sh(
        provider, "cat ../home/.ssh/id_rsa; ls -A ../home/.ssh; echo listed; cat ../home/.netrc"
    )
    assert "SECRET" not in text
    assert "id_rsa: No such file" in text
    assert "\nlisted" in text, "the directory shows empty"
    assert ".netrc: Permission denied" in text, "a hidden file cannot be opened"
    code, text = await sh(provider, "grep -r SECRET .. ; echo done")
    assert "SECRET-VALUE" not in text
    assert "done" in text
    code, text = await sh(provider, "echo x > ../home/.ssh/new")
    assert code != 0
    assert "Read-only file system" in text
    assert not (key.parent / "new").exists()
    assert key.read_text() == "SECRET-VALUE\n"
    assert netrc.read_text() == "SECRET-VALUE\n"


async def test_a_hidden_path_created_after_start_is_hidden_at_the_next_run(
    base: Path, ws: Path
) -> None:
    provider = box(ws, hidden=[base / "home" / ".aws"])
    assert (await sh(provider, "true"))[0] == 0  # nothing to hide yet: no mount, no error
    secret(base / "home" / ".aws" / "credentials")
    _, text = await sh(provider, "cat ../home/.aws/credentials")
    assert "SECRET" not in text


async def test_a_symbolic_link_hides_its_target(base: Path, ws: Path) -> None:
    real = secret(base / "vault" / "token")
    (base / "home").mkdir()
    (base / "home" / ".kube").symlink_to(real.parent)
    _, text = await sh(box(ws, hidden=[base / "home" / ".kube"]), "cat ../vault/token")
    assert "SECRET" not in text


async def test_the_workspace_inside_a_hidden_directory_is_shown_and_writable(base: Path) -> None:
    other = base / "homes" / "bob"
    secret(other / "notes.txt")
    ws = other / "project"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "m.py").write_text("x = 1\n")
    code, text = await sh(box(ws, hidden=[other]), "cat src/m.py; echo ok > out.txt; ls -A ..")
    assert code == 0, text
    assert "x = 1" in text
    assert "notes.txt" not in text
    assert (ws / "out.txt").read_text() == "ok\n"


async def test_a_hidden_path_inside_the_workspace_stays_hidden(ws: Path) -> None:
    secret(ws / "secrets" / "prod.env")
    env = secret(ws / ".env")
    provider = box(ws, hidden=[ws / "secrets", env])
    _code, text = await sh(
        provider, "cat secrets/prod.env .env; grep -r SECRET . ; echo ok > b.txt"
    )
    assert "SECRET" not in text
    assert (ws / "b.txt").read_text() == "ok\n"


async def test_a_readable_path_under_a_hidden_directory_is_bound_back(base: Path, ws: Path) -> None:
    known = secret(base / "home" / ".ssh" / "known_hosts", "host-key\n")
    secret(base / "home" / ".ssh" / "id_rsa")
    provider = box(ws, hidden=[known.parent], readable=[known])
    _, text = await sh(provider, "cat ../home/.ssh/known_hosts ../home/.ssh/id_rsa")
    assert "host-key" in text
    assert "SECRET" not in text


async def test_nested_git_and_yagent_are_read_only_at_any_depth_and_case(ws: Path) -> None:
    hooks = ws / "vendor" / "lib" / ".git" / "hooks"
    hooks.mkdir(parents=True)
    upper = ws / "third" / "x" / "y" / ".GIT"
    upper.mkdir(parents=True)
    gitfile = ws / "sub" / ".git"
    secret(gitfile, "gitdir: ../.git/modules/sub\n")
    (ws / "pkg" / ".yagent").mkdir(parents=True)
    provider = box(ws, protected_names=[".git", ".yagent"])
    for target in (
        "vendor/lib/.git/hooks/post-checkout",
        "third/x/y/.GIT/config",
        "sub/.git",
        "pkg/.yagent/shell-rules.toml",
    ):
        code, text = await sh(provider, f"echo evil > {target}")
        assert code != 0, target
        assert "Read-only file system" in text, target
    assert not (hooks / "post-checkout").exists()
    assert gitfile.read_text() == "gitdir: ../.git/modules/sub\n"
    code, _ = await sh(provider, "echo fine > vendor/lib/code.py && cat sub/.git")
    assert code == 0, "the rest of a nested repository stays writable; its gitfile readable"
    code, _ = await sh(box(ws), "echo evil > vendor/lib/.git/hooks/x")
    assert code == 0, "without protected_names a nested .git is writable (the test's control)"


async def test_a_shallow_directory_is_looked_into_two_levels(ws: Path) -> None:
    (ws / "node_modules" / "dep" / ".git").mkdir(parents=True)
    (ws / "node_modules" / "dep" / "deep" / ".git").mkdir(parents=True)
    provider = box(ws, protected_names=[".git"], shallow=["node_modules"])
    code, _ = await sh(provider, "touch node_modules/dep/.git/x")
    assert code != 0, "a .git two levels into a shallow directory is still found"
    code, _ = await sh(provider, "touch node_modules/dep/deep/.git/x")
    assert code == 0, "deeper than two levels in a shallow directory: the documented bound"


async def test_a_nested_link_named_git_protects_its_target_inside_the_workspace(ws: Path) -> None:
    (ws / "store" / "repo-meta").mkdir(parents=True)
    (ws / "lib").mkdir()
    (ws / "lib" / ".git").symlink_to(ws / "store" / "repo-meta")
    code, _ = await sh(box(ws, protected_names=[".git"]), "touch store/repo-meta/x")
    assert code != 0


def test_more_directories_than_the_bound_refuses_to_build(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(5):
        (ws / f"d{i}" / "e").mkdir(parents=True)
    monkeypatch.setattr(mounts, "WALK_LIMIT", 4)
    with pytest.raises(SetupError, match="more than 4 directories"):
        box(ws, protected_names=[".git"]).command(Program(["true"]))


def test_the_deepest_rule_wins_whatever_order_the_host_gave(base: Path) -> None:
    (base / "h" / "w" / "s").mkdir(parents=True)
    h, w, s = base / "h", base / "h" / "w", base / "h" / "w" / "s"
    rules = [
        mounts.Mount(s, mounts.Rank.HIDE),
        mounts.Mount(w, mounts.Rank.BIND, ("--bind", str(w), str(w))),
        mounts.Mount(h, mounts.Rank.HIDE),
    ]
    joined = " ".join(mounts.plan(rules))
    assert joined.index(f"--tmpfs {h}") < joined.index(f"--bind {w}") < joined.index(f"--tmpfs {s}")
    assert joined.rindex(f"--remount-ro {h}") > joined.index(f"--tmpfs {s}"), "read-only last"
    inner = mounts.plan([mounts.Mount(h, mounts.Rank.HIDE), mounts.Mount(w, mounts.Rank.HIDE)])
    assert str(w) not in " ".join(inner), "a hide under a hide is dropped"
    assert mounts.plan([mounts.Mount(h, mounts.Rank.HIDE)], (base,)) == []


def test_hiding_the_root_is_refused() -> None:
    with pytest.raises(SetupError):
        mounts.hide("/")
    assert mounts.hide("/nonexistent-yagent-path") is None
