"""The `list_sessions` / `read_session` executors: the Meta agent's window on past runs.

Contract:
- The executors only ask the run's `SessionReader` (the host puts it in `ToolContext.services` under
  `READER_KEY`, `tools.hostservices`; `app.pastsessions`); the tools layer never opens a store
  itself. A run without one gets a `not_found` failure saying the session store is not wired — never
  an empty list that reads as "there are no sessions".
- A session the reader cannot find (no match, an ambiguous prefix, no earlier session for
  'last') is a `not_found` failure with the reader's words; nothing is guessed.
- Reads run in a worker thread (the stores are synchronous).
- What comes back is untrusted text (past tool output, past model replies): like every tool
  result it reaches the model only through `agents.untrusted.tool_message`.
"""

from __future__ import annotations

from typing import Any

import anyio

from yagent.kernel.judge import toolfail
from yagent.tools.adapter import ToolContext
from yagent.tools.hostservices import READER_KEY, SessionReader
from yagent.tools.invocation import needs
from yagent.toolspec.sessions import ListSessionsArgs, ReadSessionArgs


def _reader(ctx: ToolContext) -> SessionReader:
    reader = ctx.services.get(READER_KEY)
    if reader is None:
        raise toolfail.ToolFailure(
            toolfail.Kind.NOT_FOUND,
            "the session store is not wired into this run: past sessions cannot be read here",
        )
    result: SessionReader = reader
    return result


@needs(READER_KEY)
async def list_sessions(ctx: ToolContext, args: ListSessionsArgs) -> dict[str, Any]:
    reader = _reader(ctx)
    return await anyio.to_thread.run_sync(reader.list_sessions, args.limit, args.all_workspaces)


@needs(READER_KEY)
async def read_session(ctx: ToolContext, args: ReadSessionArgs) -> dict[str, Any]:
    reader = _reader(ctx)
    try:
        return await anyio.to_thread.run_sync(
            reader.read_session, args.session, args.part, args.offset, args.limit
        )
    except LookupError as exc:
        raise toolfail.ToolFailure(toolfail.Kind.NOT_FOUND, str(exc)) from exc
