"""A task's checkout: its repository cloned at its ref into a folder of its own, and its patch.

Contract:
- `prepare(repo, ref, dest)` clones `repo` (a path or a git URL) into `dest` and checks out the
  commit `ref` names, detached; it returns that commit. It is idempotent: a `dest` already
  prepared already (its marker file names its commit) is kept as it is — the work of an
  interrupted run stays for the run that resumes it; a half-made one (no marker) is made again.
  A task key names one repo and ref (the batch id is the file's hash), so the marker suffices.
  A failing git is a `CheckoutError` carrying git's own message.
- `patch(dest, base)` is `git diff` of everything in the checkout (new files included) against
  `base`: the task's result. The checkout's index is used to include new files; nothing else
  changes.
- `remove(dest)` deletes the checkout; a missing one is fine. It first renames it out of the
  way (atomically), so a process killed mid-deletion never leaves a half-deleted checkout whose
  marker would pass it as ready to the next attempt (on a work folder workers share, a retry on
  another worker); what such a kill leaves (`<name>.removing-<pid>`) the next `remove` or
  `prepare` of that checkout deletes. Deletion (`rmtree`) has no depth limit.
Leaves to the host: where checkouts live (a worker's work folder), who may write there.
"""

from __future__ import annotations

import contextlib
import glob
import os
import subprocess
from pathlib import Path

MARKER = ".yagent-base"  # inside .git: the commit this checkout was prepared at
GIT_TIMEOUT = 300.0
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}


class CheckoutError(RuntimeError):
    """git refused; the message is git's."""


def _git(*args: str, cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            env={**os.environ, **_ENV},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CheckoutError(f"git {args[0]}: {exc}") from None
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise CheckoutError(f"git {args[0]}: {why[-1] if why else f'exit {done.returncode}'}")
    return done.stdout


def prepare(repo: str, ref: str, dest: Path) -> str:
    """The commit `dest` is checked out at (see the module contract)."""
    marker = dest / ".git" / MARKER
    if marker.is_file() and (base := marker.read_text().strip()):
        return base  # a task's key names one repo and ref: its checkout is made once
    if dest.exists() or dest.parent.exists():
        remove(dest)  # a half-made one, and what a removal cut short left
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    if partial.exists():
        rmtree(partial)
    _git("clone", "--quiet", "--no-checkout", repo, str(partial))
    base = _resolve(ref, partial)
    _git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", base, cwd=partial)
    (partial / ".git" / MARKER).write_text(base + "\n")
    partial.rename(dest)  # whole or not at all: a half-made checkout is never taken as ready
    return base


def _resolve(ref: str, clone: Path) -> str:
    try:
        return _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=clone).strip()
    except CheckoutError:  # a branch of the source is a remote-tracking branch of the clone
        try:
            return _git("rev-parse", "--verify", f"origin/{ref}^{{commit}}", cwd=clone).strip()
        except CheckoutError:
            raise CheckoutError(f"git rev-parse: unknown ref {ref!r}") from None


def patch(dest: Path, base: str) -> str:
    """Everything changed in `dest` since `base`, as one git diff (new files included)."""
    _git("add", "--all", cwd=dest)
    return _git("diff", "--cached", "--binary", base, cwd=dest)


def remove(dest: Path) -> None:
    """Delete the checkout `dest` (see the module contract)."""
    trash = dest.with_name(f"{dest.name}.removing-{os.getpid()}")
    rmtree(trash)
    with contextlib.suppress(FileNotFoundError):
        dest.rename(trash)  # from here `dest` is gone whole, however the deletion ends
    if dest.parent.is_dir():
        for left in dest.parent.glob(f"{glob.escape(dest.name)}.removing-*"):
            rmtree(left)
    rmtree(dest.with_name(dest.name + ".partial"))


def rmtree(path: Path) -> None:
    """Delete `path` and all under it, links not followed, a missing one fine. GNU `rm -rf`
    walks any depth (`shutil.rmtree` recurses once per level: a repository holding a tree deeper
    than the recursion limit raised `RecursionError` out of it); what it cannot delete is left,
    as `ignore_errors` did — `prepare`'s clone then refuses a `.partial` that is still there."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(
            ["rm", "-rf", "--", str(path)], capture_output=True, timeout=GIT_TIMEOUT, check=False
        )
