"""A batch task's result as a pushed branch: its checkout's changes committed and pushed.

Contract:
- `check_template(template, batch_id, task_id)` is the branch a template names (`{batch}` and
  `{task}` replaced), or `PushRefused` with the reason: an unknown placeholder, or a name
  `git check-ref-format` refuses. The batch file is checked with it before anything runs.
- `publish(dest, base, ...)` runs in the task's checkout after the agent run, in the batch's own
  step on the worker — never in the sandbox, never with the agent's hands; git uses the worker's
  own credentials and configuration (`GIT_TERMINAL_PROMPT=0`: a missing credential fails, it
  never waits for a prompt). It commits everything the run changed (new files included) on top of
  the task's base — author and committer from git's configuration, `yagent <yagent@localhost>`
  where it names none; message: the task's first line, then the task's key — and pushes that
  commit to `refs/heads/<branch>` of the remote (a URL or path, `origin` = the task's repository,
  or another remote name of the task's repository when it is a local path).
- It returns the result's fields: `pushed`, `branch`, `remote` (credentials in a URL masked) and,
  when a commit was pushed, `commit`; `push_note` when nothing changed (no commit, no push);
  `push_error` (git's own reason) when the push failed. It never raises for git's refusals.
- A branch that already exists on the remote is never overwritten: refused with the reason, and
  the push itself carries a lease that the branch must not exist (a branch made meanwhile is not
  overwritten either). The one exception is idempotence: a branch already at this very commit (an
  earlier attempt of the step pushed it) is reported pushed.
Leaves to the host: the worker's git credentials (credential helper, SSH keys), the remote's
permissions.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

from yagent.scale.checkout import GIT_TIMEOUT

PLACEHOLDERS = ("batch", "task")
AUTHOR = ("yagent", "yagent@localhost")
_FIELD = re.compile(r"\{([^{}]*)\}")
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}


class PushRefused(ValueError):
    """The push cannot be made as asked; the message says why."""


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            env={**os.environ, **_ENV},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PushRefused(f"git {args[0]}: {exc}") from None


def _ok(*args: str, cwd: Path | None = None) -> str:
    done = _git(*args, cwd=cwd)
    if done.returncode != 0:
        raise PushRefused(f"git {args[0]}: {_reason(done)}")
    return done.stdout


def _reason(done: subprocess.CompletedProcess[str]) -> str:
    said = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
    first = next((s for s in said if s.startswith(("fatal:", "error:", "!"))), "")
    return first or (said[-1] if said else f"exit {done.returncode}")


def check_template(template: str, batch_id: str, task_id: str) -> str:
    """The branch `template` names for this task (see the module contract)."""
    values = {"batch": batch_id, "task": task_id}
    for name in _FIELD.findall(template):
        if name not in values:
            known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            raise PushRefused(
                f"branch {template!r}: unknown placeholder {{{name}}} (known: {known})"
            )
    branch = _FIELD.sub(lambda m: values[m.group(1)], template)
    if _git("check-ref-format", f"refs/heads/{branch}").returncode != 0 or branch.startswith("-"):
        raise PushRefused(
            f"branch {template!r} gives {branch!r}: not a valid branch name (git check-ref-format)"
        )
    return branch


def masked(remote: str) -> str:
    """`remote` with the credentials of a URL's user part hidden."""
    return re.sub(r"://[^/@]*@", "://***@", remote)


def _target(remote: str, repo: str) -> str:
    """What to push to: a URL or path as it is, `origin` = the checkout's own origin (the task's
    repository), another name looked up in the task's repository when it is a local path."""
    if _URL.match(remote) or os.path.isabs(remote) or remote == "origin":
        return remote
    if _URL.match(repo):
        raise PushRefused(
            f"remote {remote!r}: the task's repository is a URL, so only 'origin' or a URL "
            "names a remote"
        )
    return _ok("remote", "get-url", "--push", remote, cwd=Path(repo)).strip()


def _commit(dest: Path, message: tuple[str, str]) -> None:
    identity: list[str] = []
    for key, default in zip(("user.name", "user.email"), AUTHOR, strict=True):
        if _git("config", key, cwd=dest).returncode != 0:
            identity += ["-c", f"{key}={default}"]
    _ok(*identity, "commit", "--quiet", "--no-verify", "-m", message[0], "-m", message[1], cwd=dest)


def publish(
    dest: Path, base: str, *, remote: str, branch: str, repo: str, title: str, key: str
) -> dict[str, Any]:
    """Commit and push the checkout's changes (see the module contract); the result's fields."""
    about: dict[str, Any] = {"pushed": False, "branch": branch, "remote": masked(remote)}
    try:
        _ok("add", "--all", cwd=dest)
        if _git("diff", "--cached", "--quiet", "HEAD", cwd=dest).returncode != 0:
            first = next((ln.strip() for ln in title.splitlines() if ln.strip()), key)
            _commit(dest, (first[:200], f"yagent batch task {key}"))
        head = _ok("rev-parse", "HEAD", cwd=dest).strip()
        if head == base:
            return about | {"push_note": "nothing changed: no commit, nothing pushed"}
        about["commit"] = head
        target = _target(remote, repo)
        ref = f"refs/heads/{branch}"
        found = _ok("ls-remote", target, ref, cwd=dest).split()
        if found and found[0] == head:  # an earlier attempt of this step pushed it
            return about | {"pushed": True}
        if found:
            raise PushRefused(
                f"the branch {branch!r} already exists on {masked(remote)} (at {found[0][:12]}); "
                "an existing branch is never overwritten: name another branch"
            )
        _ok("push", "--quiet", f"--force-with-lease={ref}:", target, f"{head}:{ref}", cwd=dest)
    except PushRefused as exc:
        return about | {"push_error": str(exc)}
    return about | {"pushed": True}
