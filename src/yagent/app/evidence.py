"""Evidence sets (Director constraints C16 / G16): the files a delegation really touched or found.

Contract:
- `evidence_for(store, session_id, delegation_id)` reads the recorded tool calls of the
  delegation's latest run (calls started after the run before it ended) and collects, for each
  call that succeeded, the paths its tool's `Spec` declares: argument paths (`arg_paths_of`)
  ∪ result paths (`result_paths_of`). Which tool names which paths is asked of the registry
  (`toolspec`), never switched on here by name; a tool without declarations contributes nothing
  (list_dir / print_dir_tree name a directory and bare entry names: nothing).
- Fewer rather than false: a failed call, arguments or a result that are not JSON, a path
  outside the session's workspace (symlinks resolved), one that does not exist now, or one that
  is not a regular file is left out — and each left-out path is listed in `left_out` with why,
  never dropped silently.
- Only a run that ended through its exit call (`run_end` status `finished`) has a deliverable to
  back: any other end (answered in plain text, max steps, error, cancel, timeout, pause, or no
  recorded end) collects nothing, and `submitted` is False.
- Paths are workspace-relative POSIX strings, sorted and unique.
Leaves to the caller: what the evidence backs (`app.blueprint` folds findings against it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yagent.agents.results import Status
from yagent.memory import SessionStore
from yagent.memory.records import ToolCallRecord
from yagent.toolspec.builtin import builtin_by_name


@dataclass(frozen=True, slots=True)
class Evidence:
    files: tuple[str, ...]  # workspace-relative, sorted
    submitted: bool  # the run ended through its exit call
    left_out: tuple[tuple[str, str], ...] = ()  # (path as named, why it does not count)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and _relative_form(path) in self.files


def _relative_form(path: str) -> str:
    return Path(os.path.normpath(path)).as_posix().removeprefix("./")


def _json(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _latest_run(store: SessionStore, session_id: str, delegation_id: str) -> tuple[str, float]:
    """The status of the delegation's latest run and when the run before it ended (its calls
    start after that)."""
    ends = store.events(session_id, types="run_end", delegation_id=delegation_id)
    if not ends:
        return "", 0.0
    status = str(ends[-1].payload.get("status", ""))
    return status, ends[-2].ts if len(ends) > 1 else 0.0


def named_paths(call: ToolCallRecord) -> list[str]:
    """The paths one recorded call names, as its tool's Spec declares them ([] when unknown)."""
    spec = builtin_by_name().get(call.name)
    if spec is None:
        return []
    args = _json(call.arguments)
    out = list(spec.arg_paths_of(args)) if isinstance(args, dict) else []
    result = _json(call.content)
    if result is not None:
        out += spec.result_paths_of(result)
    return out


def _judge(root: Path, named: str) -> tuple[str | None, str]:
    """(workspace-relative path, "") when `named` counts, else (None, why)."""
    candidate = Path(named) if os.path.isabs(named) else root / named
    try:
        real = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        return None, "does not exist"
    if not real.is_relative_to(root):
        return None, "outside the workspace"
    if not real.is_file():
        return None, "not a file"
    return real.relative_to(root).as_posix(), ""


def collect(root: Path, calls: Iterable[ToolCallRecord]) -> Evidence:
    """The evidence of these (already chosen) calls under workspace `root`, as submitted."""
    real_root = root.resolve()
    files: set[str] = set()
    left_out: dict[str, str] = {}
    for call in calls:
        if call.ok is not True:
            continue
        for named in named_paths(call):
            path, why = _judge(real_root, named)
            if path is None:
                left_out.setdefault(named, why)
            else:
                files.add(path)
    return Evidence(tuple(sorted(files)), True, tuple(sorted(left_out.items())))


def evidence_for(store: SessionStore, session_id: str, delegation_id: str) -> Evidence:
    """The evidence set of the delegation's latest run (see the module contract)."""
    status, after = _latest_run(store, session_id, delegation_id)
    if status != Status.FINISHED.value:
        return Evidence((), False)
    root = Path(store.get_session(session_id).workspace)
    calls = [
        c for c in store.tool_calls(session_id, delegation_id=delegation_id) if c.started_at > after
    ]
    return collect(root, calls)
