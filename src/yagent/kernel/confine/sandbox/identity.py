"""The sandbox's own user, for a host running as root: a user namespace in which a sandboxed
program is uid 0 while the host kernel counts it as a non-root uid.

Why: the kernel never applies `RLIMIT_NPROC` to real uid 0, so a program started by root cannot be
held to a process count by an rlimit. Inside this namespace the program's host uid is `uid` (not
root), so the limit applies; and because the kernel counts `RLIMIT_NPROC` per user namespace, the
count covers this namespace's processes only — not every process that uid has on the host.

Guarantees:
- `Identity.create(uid)` builds one user namespace whose maps are exactly: inside 0 → host `uid`
  (the program; what the kernel counts), inside 1 → host 0 (root's files, seen as owned by uid and
  gid 1). Nothing else is mapped: files of other users are seen as `nobody` and get their "other"
  permissions only. Files a sandboxed program creates belong to host `uid`.
- Root's files stay writable where the mount allows it (the workspace): the program keeps
  `CAP_DAC_OVERRIDE` in this namespace (`CAPS`), which the kernel honours only for files whose
  owner and group are both mapped — root's and the program's own. Read-only mounts stay read-only.
- The namespace is held by a file descriptor of this process, not by a process: nothing is left
  running for it, and it goes away with `close()` (or with this process).
- `enter()` is the argv prefix that starts a program in it (`nsenter`, as uid and gid 0 there);
  `tasks()` counts the tasks (threads included) of host `uid` in it — the number the kernel
  compares with `RLIMIT_NPROC` (tasks in user namespaces nested inside it are not counted here,
  though the kernel counts them too).
- `git_env()` names every directory safe for git (`safe.directory`): the workspace's repository
  belongs to host root, which is not the program's uid, and git would otherwise refuse it.
Refuses (`UnavailableError`): a process that is not root, `uid` 0 or a uid the password database
knows (someone else's files would become the program's), missing `unshare`/`nsenter`, maps the
kernel will not take.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Mapping

from yagent.kernel.confine.sandbox.errors import UnavailableError

SANDBOX_UID = 2_000_000_000
"""Host uid of sandboxed programs under a root host: high, outside the usual subordinate-id
ranges and unknown to the password database (checked). Fixed, so that files one session creates
stay the next session's own."""
CAPS = ("CAP_DAC_OVERRIDE",)
"""Capabilities kept in the namespace (see the module contract)."""
SETUP_TIMEOUT = 5.0
_INIT_USERNS = "/proc/self/ns/user"


class Identity:
    """One mapped user namespace, held open by a file descriptor."""

    def __init__(self, uid: int, fd: int, link: str) -> None:
        self.uid = uid
        self._fd = fd
        self._link = link
        self._owner = os.getpid()

    @classmethod
    def create(cls, uid: int = SANDBOX_UID) -> Identity:
        if os.geteuid() != 0:
            raise UnavailableError("a mapped sandbox user is only needed (and possible) as root")
        _check_uid(uid)
        for tool in ("unshare", "nsenter"):
            if shutil.which(tool) is None:
                raise UnavailableError(f"`{tool}` (util-linux) is not on PATH")
        holder = subprocess.Popen(
            ["unshare", "--user", "--", "sleep", str(int(SETUP_TIMEOUT) + 5)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            link = _wait_for_namespace(holder)
            mapping = f"0 {uid} 1\n1 0 1\n".encode()
            for name in ("uid_map", "gid_map"):
                fd = os.open(f"/proc/{holder.pid}/{name}", os.O_WRONLY)
                try:
                    os.write(fd, mapping)  # one write: the kernel takes a map whole or not at all
                finally:
                    os.close(fd)
            held = os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise UnavailableError(f"could not map the sandbox user {uid}: {exc}") from exc
        finally:
            holder.kill()
            holder.wait()
            if holder.stderr is not None:
                holder.stderr.close()
        return cls(uid, held, link)

    def enter(self) -> list[str]:
        """The argv prefix that runs a program in this namespace as its uid 0."""
        return ["nsenter", f"--user=/proc/{self._owner}/fd/{self._fd}", "--"]

    def tasks(self) -> int:
        """Tasks (threads included) of host `uid` in this namespace, counted in /proc now."""
        count = 0
        with os.scandir("/proc") as entries:
            for entry in entries:
                if not entry.name.isdigit():
                    continue
                try:
                    if entry.stat().st_uid != self.uid:
                        continue
                    if os.readlink(f"/proc/{entry.name}/ns/user") != self._link:
                        continue
                    count += max(os.stat(f"/proc/{entry.name}/task").st_nlink - 2, 1)
                except OSError:  # the task ended while we looked
                    continue
        return count

    @staticmethod
    def git_env(env: Mapping[str, str]) -> dict[str, str]:
        """`env` plus one command-scope git setting: `safe.directory=*` (see the contract)."""
        out = dict(env)
        try:
            index = int(out.get("GIT_CONFIG_COUNT", "0"))
        except ValueError:
            index = 0
        out[f"GIT_CONFIG_KEY_{index}"] = "safe.directory"
        out[f"GIT_CONFIG_VALUE_{index}"] = "*"
        out["GIT_CONFIG_COUNT"] = str(index + 1)
        return out

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()


def _check_uid(uid: int) -> None:
    if isinstance(uid, bool) or not isinstance(uid, int) or not 0 < uid < 2**32 - 1:
        raise UnavailableError(f"sandbox uid must be a non-root uid, not {uid!r}")
    try:
        known = pwd.getpwuid(uid)
    except KeyError:
        return
    raise UnavailableError(
        f"sandbox uid {uid} belongs to user {known.pw_name!r}: the sandbox would own their files"
    )


def _wait_for_namespace(holder: subprocess.Popen[bytes]) -> str:
    """The holder's user namespace once `unshare` has made it (polled: nothing announces it)."""
    init = os.readlink(_INIT_USERNS)
    deadline = time.monotonic() + SETUP_TIMEOUT
    while time.monotonic() < deadline:
        if holder.poll() is not None:
            said = holder.stderr.read().decode(errors="replace") if holder.stderr else ""
            raise UnavailableError(f"`unshare --user` failed: {said.strip() or holder.returncode}")
        link = os.readlink(f"/proc/{holder.pid}/ns/user")
        if link != init:
            return link
        time.sleep(0.001)
    raise UnavailableError(f"`unshare --user` made no user namespace within {SETUP_TIMEOUT:g}s")
