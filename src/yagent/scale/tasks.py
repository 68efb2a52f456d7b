"""Batch task files: what `yagent batch` reads, checked before anything is submitted.

Contract:
- A batch file is JSON lines (`.jsonl`: one object per non-blank line) or TOML (`.toml`: one
  `[[task]]` table per task). A task has `task` (its text) and `repo` (a repository path, relative
  to the file's folder, or a git URL), and may have `id` (default `t<N>`, N its 1-based place),
  `ref` (default `HEAD`), `agent` (default: the configured default agent) and `write` (write areas,
  repository-relative; empty: the whole checkout) and `push` (`{remote, branch}`: the result is
  also a pushed branch, `scale.push`; `false`: no push). In TOML a top-level `[push]` table is
  every task's default. `branch` is a template: `{batch}` and `{task}` are the ids.
- Refused with `BatchFileError` (the CLI's exit 2), naming the line (JSON lines) or the task
  number (TOML): unreadable text, a line that is not a JSON object, a missing or mistyped field,
  an unknown key (with the nearest known name), two tasks with one id, an id that is not
  `[A-Za-z0-9._-]{1,64}`, an empty batch, a `push` that is not a table of a non-empty `remote`
  and `branch` (unknown keys named with the nearest), a branch template whose branch
  `git check-ref-format` refuses or that has an unknown placeholder.
- The batch id is `b-` + the first 12 hex digits of the SHA-256 of the file's bytes, unless the
  caller names one: the same file is the same batch, so resubmitting it re-runs nothing.
  Each task's key is `<batch id>/<task id>` (the Temporal workflow id; the local engine's record).
Leaves to the engines: cloning, running, collecting.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yagent.scale import push

_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_KEYS = ("id", "repo", "ref", "task", "agent", "write", "push")
_PUSH_KEYS = ("remote", "branch")
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)


class BatchFileError(ValueError):
    """The batch file does not hold; the message names where."""


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One task: one agent run in one checkout of `repo` at `ref`."""

    id: str
    repo: str  # an absolute path or a git URL
    task: str
    ref: str = "HEAD"
    agent: str = ""
    write: tuple[str, ...] = ()
    push_remote: str = ""  # where the result's branch is pushed ("": no push)
    push_branch: str = ""  # the branch, its template filled in

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "repo": self.repo,
            "task": self.task,
            "ref": self.ref,
            "agent": self.agent,
            "write": list(self.write),
            "push_remote": self.push_remote,
            "push_branch": self.push_branch,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> TaskSpec:
        return cls(
            str(raw["id"]),
            str(raw["repo"]),
            str(raw["task"]),
            str(raw.get("ref") or "HEAD"),
            str(raw.get("agent") or ""),
            tuple(str(w) for w in raw.get("write") or ()),
            str(raw.get("push_remote") or ""),
            str(raw.get("push_branch") or ""),
        )


@dataclass(frozen=True, slots=True)
class Batch:
    id: str
    tasks: tuple[TaskSpec, ...]

    def key(self, task_id: str) -> str:
        return task_key(self.id, task_id)


def task_key(batch_id: str, task_id: str) -> str:
    return f"{batch_id}/{task_id}"


def check_id(value: str, what: str) -> str:
    if not _ID.fullmatch(value):
        raise BatchFileError(f"{what} {value!r} is not 1-64 of letters, digits, '.', '_', '-'")
    return value


def batch_id_of(data: bytes) -> str:
    return "b-" + hashlib.sha256(data).hexdigest()[:12]


def load(path: Path, *, batch_id: str | None = None) -> Batch:
    """The checked batch in `path` (see the module contract)."""
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BatchFileError(f"{path}: cannot read: {exc}") from None
    bid = check_id(batch_id, "batch id") if batch_id else batch_id_of(data)
    default: object = False
    if path.suffix == ".toml":
        rows, default = _toml_rows(path, text)
    elif path.suffix in (".jsonl", ".ndjson"):
        rows = _jsonl_rows(path, text)
    else:
        raise BatchFileError(f"{path}: a batch file ends in .jsonl or .toml, not {path.suffix!r}")
    if not rows:
        raise BatchFileError(f"{path}: no task in the file")
    tasks: list[TaskSpec] = []
    seen: set[str] = set()
    for number, (where, raw) in enumerate(rows, start=1):
        spec = _task(raw, f"{path}:{where}", number, path.parent)
        pushed = raw.get("push", default) if isinstance(raw, dict) else default
        spec = _with_push(spec, pushed, f"{path}:{where}", bid)
        if spec.id in seen:
            raise BatchFileError(f"{path}:{where}: task id {spec.id!r} is used twice")
        seen.add(spec.id)
        tasks.append(spec)
    return Batch(bid, tuple(tasks))


def _jsonl_rows(path: Path, text: str) -> list[tuple[str, object]]:
    rows: list[tuple[str, object]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"line {number}", json.loads(line)))
        except ValueError as exc:
            raise BatchFileError(f"{path}: line {number}: not JSON: {exc}") from None
    return rows


def _toml_rows(path: Path, text: str) -> tuple[list[tuple[str, object]], object]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BatchFileError(f"{path}: not TOML: {exc}") from None
    extra = sorted(set(doc) - {"task", "push"})
    if extra:
        raise BatchFileError(
            f"{path}: unknown table {extra[0]!r}{_nearest(extra[0], ('task', 'push'))}"
        )
    tasks = doc.get("task", [])
    if not isinstance(tasks, list):
        raise BatchFileError(f"{path}: `task` must be an array of tables ([[task]])")
    rows: list[tuple[str, object]] = [(f"task {n}", raw) for n, raw in enumerate(tasks, start=1)]
    return rows, doc.get("push", False)


def _nearest(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"


def _task(raw: object, where: str, number: int, base: Path) -> TaskSpec:
    if not isinstance(raw, dict):
        raise BatchFileError(f"{where}: a task is an object, not {type(raw).__name__}")
    for key in raw:
        if key not in _KEYS:
            raise BatchFileError(f"{where}: unknown key {key!r}{_nearest(str(key), _KEYS)}")

    def text(key: str, default: str | None = None) -> str:
        value = raw.get(key, default)
        if value is None:
            raise BatchFileError(f"{where}: `{key}` is missing")
        if not isinstance(value, str) or not value.strip():
            raise BatchFileError(f"{where}: `{key}` must be a non-empty string")
        return value

    write = raw.get("write", [])
    if not isinstance(write, list) or not all(isinstance(w, str) and w for w in write):
        raise BatchFileError(f"{where}: `write` must be a list of non-empty strings")
    agent = raw.get("agent", "")
    if not isinstance(agent, str):
        raise BatchFileError(f"{where}: `agent` must be a string")
    repo = text("repo")
    if not _URL.match(repo):
        repo = str((base / repo).resolve())
    return TaskSpec(
        check_id(text("id", f"t{number}"), f"{where}: task id"),
        repo,
        text("task"),
        text("ref", "HEAD"),
        agent,
        tuple(write),
    )


def _with_push(spec: TaskSpec, raw: object, where: str, batch_id: str) -> TaskSpec:
    """`spec` with its push (`raw`: the task's `push`, else the batch's default) checked."""
    if raw is False:
        return spec
    if not isinstance(raw, dict):
        raise BatchFileError(f"{where}: `push` must be a table {{remote, branch}} or false")
    for key in raw:
        if key not in _PUSH_KEYS:
            raise BatchFileError(
                f"{where}: `push`: unknown key {key!r}{_nearest(str(key), _PUSH_KEYS)}"
            )
    found: dict[str, str] = {}
    for key in _PUSH_KEYS:
        value = raw.get(key)
        if value is None:
            raise BatchFileError(f"{where}: `push.{key}` is missing")
        if not isinstance(value, str) or not value.strip():
            raise BatchFileError(f"{where}: `push.{key}` must be a non-empty string")
        found[key] = value
    try:
        branch = push.check_template(found["branch"], batch_id, spec.id)
    except push.PushRefused as exc:
        raise BatchFileError(f"{where}: `push`: {exc}") from None
    return dataclasses.replace(spec, push_remote=found["remote"], push_branch=branch)
