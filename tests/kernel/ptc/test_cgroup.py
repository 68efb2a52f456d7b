"""cgroup v2 plumbing against a fake cgroupfs tree (the seams point at it)."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest

from yagent.kernel.ptc import cgroup
from yagent.kernel.ptc.cgroup import Cgroup, cgroup2_mount, own_cgroup, probe

MOUNTINFO = (
    "25 30 0:22 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "26 30 0:23 / {root} rw,relatime - cgroup2 cgroup2 rw\n"
)


def fake_tree(tmp_path: Path, *, controllers: str = "cpu memory", subtree: str = "") -> Path:
    root = tmp_path / "cg"
    base = root / "user.slice"
    base.mkdir(parents=True)
    (base / "cgroup.controllers").write_text(controllers)
    (base / "cgroup.subtree_control").write_text(subtree)
    (tmp_path / "mountinfo").write_text(MOUNTINFO.format(root=root))
    (tmp_path / "self_cgroup").write_text("9:name=systemd:/\n0::/user.slice\n")
    return base


@pytest.fixture
def seams(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(cgroup, "MOUNTINFO", tmp_path / "mountinfo")
    monkeypatch.setattr(cgroup, "SELF_CGROUP", tmp_path / "self_cgroup")
    return tmp_path


def test_parsers_find_the_cgroup2_mount_and_own_path() -> None:
    assert cgroup2_mount(MOUNTINFO.format(root="/sys/fs/cgroup/unified")) == Path(
        "/sys/fs/cgroup/unified"
    )
    assert cgroup2_mount("25 30 0:22 / /x rw - cgroup cgroup rw,memory\n") is None
    assert own_cgroup("1:cpu:/\n0::/a/b\n") == "/a/b"
    assert own_cgroup("0::\n") == "/"
    assert own_cgroup("4:memory:/x\n") is None


def test_probe_answers_the_base_when_memory_is_delegated(seams: Path) -> None:
    base = fake_tree(seams, subtree="memory")
    assert probe() == (base, "")


def test_probe_delegates_memory_when_it_can(seams: Path) -> None:
    base = fake_tree(seams, subtree="")
    # a plain file accepts the write; on cgroupfs the kernel would add the controller
    (base / "cgroup.subtree_control").write_text("")
    found, why = probe()
    assert found is None
    assert "not delegated" in why
    assert (base / "cgroup.subtree_control").read_text() == "+memory"


def test_probe_says_why_not(seams: Path, tmp_path: Path) -> None:
    assert "cannot read" in probe()[1]  # no mountinfo yet
    base = fake_tree(seams, controllers="cpu io")
    assert probe() == (None, f"the memory controller is not available in {base}")
    (seams / "self_cgroup").write_text("4:memory:/x\n")
    assert probe() == (None, "no cgroup v2 hierarchy is mounted for this process")
    (seams / "self_cgroup").write_text("0::/missing\n")
    found, why = probe()
    assert found is None
    assert "not writable" in why
    (seams / "self_cgroup").write_text("0::/user.slice\n")
    (base / "cgroup.controllers").unlink()
    found, why = probe()
    assert found is None
    assert "cannot be delegated" in why


def test_create_sets_memory_max_and_swap(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    group, why = Cgroup.create(64 * 1024 * 1024, base)
    assert group is not None
    assert why == ""
    assert group.path.parent == base
    assert group.path.name.startswith("yagent-ptc-")
    assert (group.path / "memory.max").read_text() == str(64 * 1024 * 1024)
    assert not (group.path / "memory.swap.max").exists()


def test_create_zeroes_swap_where_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "base"
    base.mkdir()
    real_mkdir = Path.mkdir

    def mkdir_with_swap(self: Path, *args: object, **kwargs: object) -> None:
        real_mkdir(self)
        (self / "memory.swap.max").write_text("max")

    monkeypatch.setattr(Path, "mkdir", mkdir_with_swap)
    group, _ = Cgroup.create(1000, base)
    assert group is not None
    assert (group.path / "memory.swap.max").read_text() == "0"


def test_create_refuses_when_it_cannot_make_or_set(tmp_path: Path) -> None:
    group, why = Cgroup.create(1000, tmp_path / "absent")
    assert group is None
    assert "cannot create" in why


def test_create_refuses_a_limit_that_does_not_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "base"
    base.mkdir()
    monkeypatch.setattr(cgroup, "_read", lambda path: "max\n")
    group, why = Cgroup.create(1000, base)
    assert group is None
    assert "reads back 'max'" in why


def test_create_refuses_when_memory_max_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "base"
    base.mkdir()

    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        raise PermissionError("read-only")

    monkeypatch.setattr(Path, "write_text", refuse)
    group, why = Cgroup.create(1000, base)
    assert group is None
    assert "cannot set memory.max" in why
    assert list(base.iterdir()) == []  # the half-made child was removed


def test_join_argv_moves_the_process_before_exec(tmp_path: Path) -> None:
    group = Cgroup(tmp_path, 1)
    proc = subprocess.run(
        [*group.join_argv(), "sh", "-c", "echo $$"], capture_output=True, check=True
    )
    pid = int(proc.stdout)
    assert group.pids() == [pid]  # the same process: it exec'd after joining
    assert group.contains(pid)
    assert not group.contains(pid + 1)


def test_oom_kill_count_is_read_from_memory_events(tmp_path: Path) -> None:
    group = Cgroup(tmp_path, 1)
    assert group.oom_killed() is False
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n")
    assert group.oom_killed() is False
    (tmp_path / "memory.events").write_text("low 0\noom 1\noom_kill 2\n")
    assert group.oom_killed() is True


def test_kill_uses_cgroup_kill_and_close_reports_a_leftover(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "child"
    path.mkdir()
    (path / "cgroup.kill").write_text("")
    group = Cgroup(path, 1)
    with caplog.at_level(logging.WARNING, logger="yagent.kernel.ptc.cgroup"):
        assert group.close() is False  # a fake tree's files stop rmdir: said, not hidden
    assert (path / "cgroup.kill").read_text() == "1"
    assert "could not be removed" in caplog.text
    (path / "cgroup.kill").unlink()
    assert group.close() is True
    assert not path.exists()
    assert group.close() is True


def test_kill_falls_back_to_signalling_member_pids(tmp_path: Path) -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        (tmp_path / "cgroup.procs").write_text(f"{proc.pid}\n")
        Cgroup(tmp_path, 1).kill()
        assert proc.wait(timeout=10) == -9
    finally:
        proc.kill()
