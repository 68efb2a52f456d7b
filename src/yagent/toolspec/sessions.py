"""toolspec.sessions: the tools that read past runs — the Meta agent's (Director constraints C4).

Facts declared here and nowhere else:
- `list_sessions` lists the recorded sessions (newest activity first) and `read_session` reads
  one of them part by part: an overview (status, how each run ended, the failed tool calls, the
  last reply), its messages, its tool calls, its rollout events, or its trace table. Both only
  read the session store: effect READ, so they may run in parallel.
- Granted by name only (`BY_NAME` tag): reading every past conversation is the Meta agent's
  ability, not something each agent with read access gets (`profiles.Profile.grants`).
- WARM: shown unless the schema budget demotes them.
Registered in `builtin.BUILTIN`; executed by `tools.sessionread`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from yagent.toolspec.params import Args
from yagent.toolspec.spec import Effect, Tier, make_spec

BY_NAME = "granted-by-name"  # a profile grants this tool only when it names it
PAGE_MAX = 200

Part = Literal["overview", "messages", "tool_calls", "events", "trace"]


class ListSessionsArgs(Args):
    limit: int = Field(20, ge=1, le=PAGE_MAX, description="How many sessions to list.")
    all_workspaces: bool = Field(
        False, description="List sessions of every workspace, not only this one."
    )


class ReadSessionArgs(Args):
    session: str = Field(
        "last",
        description=(
            "A session id or a unique prefix of one; 'last' is the most recently active session "
            "of this workspace other than the current one."
        ),
    )
    part: Part = Field(
        "overview",
        description=(
            "overview: status, how each run ended, failed tool calls, last reply; messages; "
            "tool_calls; events (the rollout); trace (turns, calls and timings as a table)."
        ),
    )
    offset: int = Field(0, ge=0, description="Skip this many items of the part (not overview).")
    limit: int = Field(50, ge=1, le=PAGE_MAX, description="At most this many items.")


SESSION_TOOLS = (
    make_spec(
        "list_sessions",
        "List recorded yagent sessions, most recently active first: id, title, status, agent "
        "runs' workspace, model and times. The current session is marked.",
        ListSessionsArgs,
        Effect.READ,
        Tier.WARM,
        brief="List past sessions.",
        tags=frozenset({BY_NAME}),
    ),
    make_spec(
        "read_session",
        "Read one recorded session: an overview (status, how each run ended, failed tool calls "
        "with their errors, the last reply), or a page of its messages, tool calls, rollout "
        "events or trace. Long texts are cut and the cut is stated.",
        ReadSessionArgs,
        Effect.READ,
        Tier.WARM,
        brief="Read a past session (overview, messages, tool calls, events, trace).",
        tags=frozenset({BY_NAME}),
    ),
)
