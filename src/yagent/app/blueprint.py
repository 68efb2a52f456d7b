"""The per-workspace blueprint (Director constraints C6, C7, C14, C15): findings of read-only
analysis runs (the Repo agent's), kept only when backed by evidence, shown fresh to later runs.

Contract:
- Stored under the home's state, one JSON file per workspace (`state/blueprint/<key>.json`, key
  = sha256 of the workspace's real path), replaced atomically; at most `MAX_FINDINGS` findings,
  the newest kept (a finding with the same title replaces the older one).
- `fold(home, workspace, blueprint, evidence)` folds the `blueprint` argument of a run's exit
  call (`{"findings": [...]}` or a list; each finding `{"title", "detail", "files": [...]}`) into
  it. A finding is kept only when it names files and every file it names is in the run's
  evidence set (`app.evidence`); any other is dropped and the account says why. A run that did
  not end through its exit call folds nothing and the account says so (its no-submission note).
- The fold never breaks the run (C7): it only warns — a malformed finding, a damaged blueprint
  file (left as it is, never written over), a write that fails are `warnings` in the account and
  log lines; nothing is raised, nothing runs in the background.
- The account (`Account`: what was folded, dropped, warned) is returned beside the deliverable,
  never inside it (C15): `Account.line()` is the one rendering, for the caller to show after the
  deliverable (a receipt's own field, a note's `> [blueprint]` footer); it repeats the fold's
  judgements and judges nothing again.
- `fold_delegation(home, store, session_id, delegation_id)` does the whole step from the session
  store: the delegation's last successful exit call's `blueprint`, folded against
  `evidence_for` of the same delegation.
- `view(home, workspace)` renders the blueprint for a model, read from disk on every call (no
  cache, so no invalidation rule to get wrong), cut at `VIEW_MAX_BYTES` with the cut said, and
  neutralised (`agents.untrusted.for_model`): findings were written from untrusted text.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yagent.agents import untrusted
from yagent.app.evidence import Evidence, evidence_for
from yagent.memory import SessionStore
from yagent.tools.atomicfile import atomic_write
from yagent.toolspec.builtin import FINISHES, builtin_by_name

log = logging.getLogger("yagent.app.blueprint")

MAX_FINDINGS = 100
DETAIL_MAX = 2000  # characters of one finding's detail kept
VIEW_MAX_BYTES = 8000
NO_SUBMISSION = "nothing folded: the run did not end through agent_exit, so no finding is backed"


@dataclass(frozen=True, slots=True)
class Account:
    folded: tuple[str, ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()  # (title, why)
    warnings: tuple[str, ...] = ()

    def line(self) -> str:
        """The account in one line ("" when the run offered nothing to fold)."""
        parts = []
        if self.folded:
            parts.append(f"folded {len(self.folded)}: {', '.join(self.folded)}")
        if self.dropped:
            why = "; ".join(f"{title} ({reason})" for title, reason in self.dropped)
            parts.append(f"dropped {len(self.dropped)}: {why}")
        parts += self.warnings
        return f"[blueprint] {' · '.join(parts)}" if parts else ""


def path_for(home: Path, workspace: Path) -> Path:
    key = hashlib.sha256(os.path.realpath(workspace).encode()).hexdigest()[:24]
    return home / "state" / "blueprint" / f"{key}.json"


def _load(path: Path) -> list[dict[str, Any]]:
    """The stored findings; [] when there is no file; ValueError when it is damaged."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"blueprint file {path} is unreadable: {exc}") from None
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(findings, list) or not all(isinstance(f, dict) for f in findings):
        raise ValueError(f"blueprint file {path} is damaged")
    return findings


def _parse(item: Any) -> tuple[dict[str, Any] | None, str, str]:
    """(finding, title, why-not) for one offered finding."""
    if not isinstance(item, Mapping):
        return None, "?", "not an object"
    title = item.get("title")
    files = item.get("files")
    if not isinstance(title, str) or not title.strip():
        return None, "?", "no title"
    title = title.strip()
    if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
        return None, title, "names no files"
    detail = item.get("detail")
    text = detail[:DETAIL_MAX] if isinstance(detail, str) else ""
    return {"title": title, "detail": text, "files": list(files)}, title, ""


def fold(home: Path, workspace: Path, blueprint: Any, evidence: Evidence) -> Account:
    """Fold the exit call's `blueprint` argument (see the module contract). Never raises."""
    offered = blueprint.get("findings") if isinstance(blueprint, Mapping) else blueprint
    if blueprint is None or offered is None:
        return Account()
    if not evidence.submitted:
        log.warning("blueprint: %s", NO_SUBMISSION)
        return Account(warnings=(NO_SUBMISSION,))
    if not isinstance(offered, list):
        return Account(warnings=("blueprint ignored: its findings are not a list",))
    kept: list[dict[str, Any]] = []
    dropped: list[tuple[str, str]] = []
    for item in offered:
        finding, title, why = _parse(item)
        if finding is not None:
            missing = [f for f in finding["files"] if f not in evidence]
            if missing:
                why = f"files not in the evidence set: {', '.join(missing)}"
        if why or finding is None:
            log.warning("blueprint: dropped %r: %s", title, why)
            dropped.append((title, why))
            continue
        finding["files"] = sorted({f.removeprefix("./") for f in finding["files"]})
        kept.append(finding)
    account = Account(tuple(f["title"] for f in kept), tuple(dropped))
    if not kept:
        return account
    try:
        _store(path_for(home, workspace), kept)
    except (OSError, ValueError) as exc:
        log.warning("blueprint: not written: %s", exc)
        return Account((), account.dropped, (f"not written: {exc}",))
    return account


def _store(path: Path, kept: list[dict[str, Any]]) -> None:
    titles = {f["title"] for f in kept}
    findings = [f for f in _load(path) if f.get("title") not in titles] + kept
    findings = findings[-MAX_FINDINGS:]
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": "yagent.blueprint", "findings": findings}
    atomic_write(path, json.dumps(payload, indent=1, ensure_ascii=False).encode())


def exit_blueprint(store: SessionStore, session_id: str, delegation_id: str) -> Any:
    """The `blueprint` argument of the delegation's last successful exit call (None if none)."""
    specs = builtin_by_name()
    for call in reversed(store.tool_calls(session_id, delegation_id=delegation_id)):
        spec = specs.get(call.name)
        if spec is None or FINISHES not in spec.tags or call.ok is not True:
            continue
        try:
            args = json.loads(call.arguments)
        except ValueError:
            return None
        return args.get("blueprint") if isinstance(args, dict) else None
    return None


def fold_delegation(
    home: Path, store: SessionStore, session_id: str, delegation_id: str
) -> Account:
    """Fold what the delegation's exit call offered against its evidence. Never raises."""
    try:
        offered = exit_blueprint(store, session_id, delegation_id)
        evidence = evidence_for(store, session_id, delegation_id)
        workspace = Path(store.get_session(session_id).workspace)
    except Exception as exc:  # C7: the fold never breaks the run
        log.warning("blueprint: not folded: %s", exc)
        return Account(warnings=(f"not folded: {exc}",))
    if offered is None and not evidence.submitted:
        return Account(warnings=(NO_SUBMISSION,))
    return fold(home, workspace, offered, evidence)


def view(home: Path, workspace: Path) -> str:
    """The blueprint as a model reads it, from disk now ("" when there is none)."""
    path = path_for(home, workspace)
    try:
        findings = _load(path)
    except ValueError as exc:
        return f"[blueprint unavailable: {exc}]"
    if not findings:
        return ""
    lines = [f"Blueprint of this workspace ({len(findings)} findings backed by evidence):"]
    for f in findings:
        lines.append(f"- {f.get('title', '?')} — files: {', '.join(map(str, f.get('files', [])))}")
        if f.get("detail"):
            lines.append(f"  {' '.join(str(f['detail']).split())}")
    text = "\n".join(lines)
    raw = text.encode()
    if len(raw) > VIEW_MAX_BYTES:
        shown = raw[:VIEW_MAX_BYTES].decode("utf-8", "ignore")
        text = f"{shown}\n[blueprint cut at {VIEW_MAX_BYTES} bytes of {len(raw)}; read {path}]"
    return untrusted.for_model(text)  # findings were written by a model from untrusted text
