"""`yagent reconcile [SESSION] [--applied KEY | --not-applied KEY] [--json]`.

Lists the side effects whose outcome is unknown — a call that may have applied before its
process died, timed out or was cancelled — with the tool call behind each (from the session), or
records what a person found out, through `sideeffect.Store.resolve_uncertain` (first resolution
wins; a key whose attempt is still live cannot be resolved yet):
- `--applied KEY`: it happened. A replay of the same call returns "applied (reconciled)" and
  never runs it.
- `--not-applied KEY`: it did not happen. The intent is withdrawn, so the same call may run again.
KEY may be any unique prefix of a listed key. The resolution is also written to the session's
event log (`side_effect`, outcome `reconciled`). A call whose process died less than a lease ago
(`[agent] effect_lease`) appears once the lease has lapsed.
Exit status: 0 listed or resolved, 1 not resolvable, 2 unknown key or session.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import anyio
import click

from yagent.app.config import load
from yagent.app.durable import Durable, open_home
from yagent.app.sessionstore import sessions_here
from yagent.app.workspace import locate
from yagent.kernel.durable import sideeffect
from yagent.memory import SessionStore

PENDING_LIMIT = 1000


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


def _parts(key: str) -> tuple[str, str, str]:
    """(session, delegation, call id) of a key made by `effectrun.idempotency_key`."""
    parts = [unquote(p) for p in key.split("/")]
    if len(parts) != 3:
        return "", "", ""
    session, delegation, call = parts
    return session, "" if delegation == "-" else delegation, call


def _call_of(store: SessionStore, key: str) -> dict[str, Any]:
    session, delegation, call_id = _parts(key)
    for call in store.tool_calls(session) if session else ():
        if call.call_id == call_id:
            return {
                "session": session,
                "delegation": delegation,
                "call_id": call_id,
                "tool": call.name,
                "arguments": call.arguments,
            }
    return {"session": session, "delegation": delegation, "call_id": call_id}


async def _pending(durable: Durable, session: str | None) -> tuple[list[sideeffect.Record], bool]:
    backlog = await durable.effects.pending(PENDING_LIMIT)
    mine = [
        r for r in backlog.records if session is None or r.key.startswith(quote(session, "") + "/")
    ]
    return mine, backlog.truncated


def _show(store: SessionStore, records: list[sideeffect.Record], json_mode: bool) -> None:
    rows = [
        {
            "key": r.key,
            "state": r.state.value,
            "reason": r.reason,
            "holder": r.holder,
            **_call_of(store, r.key),
        }
        for r in records
    ]
    if json_mode:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not rows:
        click.echo("no side effect needs reconciliation")
        return
    for row in rows:
        click.echo(f"UNCERTAIN {row['key']}")
        if "tool" in row:
            click.echo(f"  call: {row['tool']} {row['arguments']}")
        click.echo(f"  why: {row['reason'] or row['state']}")
    click.echo("check each on its target, then: yagent reconcile --applied KEY | --not-applied KEY")


def _pick(records: list[sideeffect.Record], key: str) -> sideeffect.Record:
    exact = [r for r in records if r.key == key]
    found = exact or [r for r in records if r.key.startswith(key)]
    if len(found) != 1:
        what = "no" if not found else f"{len(found)}"
        raise click.ClickException(f"{what} side effect needing reconciliation matches {key!r}")
    return found[0]


async def _resolve(
    durable: Durable, store: SessionStore, record: sideeffect.Record, applied: bool
) -> sideeffect.Resolution:
    note = "applied (reconciled by a person); not run again" if applied else ""
    result = json.dumps({"ok": True, "content": json.dumps({"note": note}), "kind": None})
    action = sideeffect.Action(record.key, record.resource, record.retry_safety)
    done = await durable.effects.resolve_uncertain(
        action, applied, result.encode() if applied else None
    )
    session, delegation, call_id = _parts(record.key)
    if done.resolved and session:
        payload = {
            "call_id": call_id,
            "key": record.key,
            "outcome": "reconciled",
            "applied": applied,
            "reason": done.reason,
        }
        store.append_event(session, "side_effect", payload, delegation_id=delegation)
    return done


@click.command()
@click.argument("session", required=False)
@click.option("--applied", "applied_key", metavar="KEY", help="It happened: record it as applied.")
@click.option("--not-applied", "not_applied_key", metavar="KEY", help="It did not happen.")
@click.option("--json", "json_mode", is_flag=True, help="List as JSON.")
def reconcile(
    session: str | None, applied_key: str | None, not_applied_key: str | None, json_mode: bool
) -> None:
    """List side effects of unknown outcome, or record what you found out."""
    if applied_key and not_applied_key:
        raise click.UsageError("give --applied or --not-applied, not both")
    home = _home()
    with sessions_here(home) as store:
        session_id = store.get_session(session).id if session else None
        durable = open_home(home, load(home=home, workspace=locate(Path.cwd()).root))
        try:
            records, truncated = anyio.run(_pending, durable, session_id)
            key = applied_key or not_applied_key
            if key is None:
                _show(store, records, json_mode)
                if truncated:
                    click.echo(f"(only the first {PENDING_LIMIT} are listed)", err=True)
                return
            record = _pick(records, key)
            done = anyio.run(_resolve, durable, store, record, applied_key is not None)
        finally:
            durable.close()
    click.echo(f"{record.key}: {'resolved' if done.resolved else 'NOT resolved'} — {done.reason}")
    sys.exit(0 if done.resolved else 1)
