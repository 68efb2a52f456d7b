"""sandbox.limits and sandbox.identity: the values, the receipts, the mapped user (real bwrap)."""

from __future__ import annotations

import os
import pwd
import resource
import signal
from pathlib import Path

import pytest

from yagent.kernel.confine.sandbox import (
    BwrapProvider,
    Limits,
    LimitsError,
    Program,
    default_memory_mb,
)
from yagent.kernel.confine.sandbox.errors import UnavailableError
from yagent.kernel.confine.sandbox.identity import SANDBOX_UID, Identity
from yagent.kernel.confine.sandbox.limits import MIB, Supervision

SMALL = Limits(memory_mb=128, max_processes=32, cpu_seconds=3, file_size_mb=1, open_files=64)
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the mapped user exists only for root")


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "64"])
def test_limits_are_positive_integers(bad: object) -> None:
    with pytest.raises(LimitsError, match="max_processes"):
        Limits(max_processes=bad)  # type: ignore[arg-type]


def test_default_memory_is_a_quarter_of_the_machine_at_most_4096(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.write_text("MemTotal:        4194304 kB\n")
    big = tmp_path / "big"
    big.write_text("MemTotal:       67108864 kB\n")
    assert default_memory_mb(str(small)) == 1024
    assert default_memory_mb(str(big)) == 4096
    assert default_memory_mb(str(tmp_path / "missing")) == 2048


def test_prlimit_sets_every_bound_soft_and_hard() -> None:
    argv = SMALL.prlimit("/usr/bin/prlimit")
    assert argv[0] == "/usr/bin/prlimit"
    assert argv[-1] == "--"
    assert f"--data={128 * MIB}:{128 * MIB}" in argv
    assert "--nproc=32:32" in argv
    assert "--cpu=3:8" in argv  # SIGXCPU at 3 s, SIGKILL five seconds later
    assert f"--fsize={MIB}:{MIB}" in argv
    assert "--core=0:0" in argv


def test_limits_never_ask_for_more_than_this_process_may_give() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    wanted = Limits(open_files=hard + 1000 if hard != resource.RLIM_INFINITY else 10**6)
    assert wanted.in_force().open_files <= (hard if hard != resource.RLIM_INFINITY else 10**6)


def test_explain_names_the_limit_and_how_sure_it_is() -> None:
    assert SMALL.explain(0, "fine") is None
    assert SMALL.explain(1, "plain failure") is None
    assert SMALL.explain(-signal.SIGXCPU, "") == "killed: CPU time limit 3 s (SIGXCPU)"
    said = SMALL.explain(128 + signal.SIGXFSZ, "")
    assert said is not None
    assert said.startswith("killed: file size limit 1 MiB (inferred: exit code 153")
    memory = SMALL.explain(1, "Traceback ...\nMemoryError\n")
    assert memory == "killed: memory limit 128 MiB (inferred: 'MemoryError' in the output)"
    fork = SMALL.explain(254, "bash: fork: retry: Resource temporarily unavailable")
    assert fork is not None
    assert fork.startswith("killed: process limit 32 (inferred")
    opened = SMALL.explain(1, "OSError: [Errno 24] Too many open files")
    assert opened is not None
    assert opened.startswith("failed: open files limit 64")
    survived = SMALL.explain(0, "bash: fork: retry: Resource temporarily unavailable")
    assert survived is not None
    assert survived.startswith("process limit 32 reached: some processes could not start")


def test_supervision_breaches_at_the_limit_only() -> None:
    counted = [31]
    watch = Supervision(SMALL, lambda: counted[0])
    assert watch.breach() is None
    counted[0] = 32
    breach = watch.breach()
    assert breach is not None
    assert breach.startswith("killed: process limit 32 (the sandbox held 32")
    assert Supervision(SMALL).breach() is None, "nothing to count: nothing to report"


@root_only
def test_the_mapped_user_is_exactly_two_ids_and_leaves_no_process() -> None:
    before = _children()
    ident = Identity.create()
    try:
        assert ident.uid == SANDBOX_UID
        assert _children() == before
        assert ident.enter()[0] == "nsenter"
        assert ident.tasks() == 0
    finally:
        ident.close()


@root_only
def test_the_mapped_user_refuses_root_and_known_users() -> None:
    with pytest.raises(UnavailableError, match="non-root"):
        Identity.create(0)
    known = next(entry.pw_uid for entry in pwd.getpwall() if entry.pw_uid != 0)
    with pytest.raises(UnavailableError, match="belongs to user"):
        Identity.create(known)


def test_git_is_told_once_more_without_losing_the_hosts_settings() -> None:
    env = Identity.git_env(
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"}
    )
    assert env["GIT_CONFIG_COUNT"] == "2"
    assert env["GIT_CONFIG_KEY_0"] == "a.b"
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == ("safe.directory", "*")


@pytest.mark.anyio
async def test_provider_runs_every_program_under_its_limits(tmp_path: Path) -> None:
    box = BwrapProvider(tmp_path, limits=SMALL)
    assert box.limits == SMALL
    script = "ulimit -u; ulimit -n; ulimit -t; ulimit -f; ulimit -d; ulimit -c; id -u"
    shown = await box.run(Program(["bash", "-c", script], timeout=60))
    expected = ["32", "64", "3", "1024", str(128 * 1024), "0", "0"]  # -f and -d in KiB
    assert shown.text.split() == expected, "uid 0 inside, whatever the host sees"
    bomb = await box.run(Program(["python3", "-c", "bytearray(1 << 30)"], timeout=60))
    supervision = box.supervision()
    assert supervision is not None
    said = supervision.explain(bomb.exit_code, bomb.text)
    assert said is not None
    assert said.startswith("killed: memory limit 128 MiB")
    tmp = await box.run(Program(["bash", "-c", "head -c 200M /dev/zero > /tmp/x"], timeout=60))
    assert tmp.exit_code != 0, "the private /tmp is bounded too"


@pytest.mark.anyio
async def test_provider_without_limits_sets_none(tmp_path: Path) -> None:
    box = BwrapProvider(tmp_path)
    assert box.limits is None
    assert box.supervision() is None
    assert "prlimit" not in " ".join(box.command(Program(["true"])))


def _children() -> set[int]:
    me = str(os.getpid())
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if stat[1] == me and stat[0] != "Z":
                found.add(int(entry.name))
    return found
