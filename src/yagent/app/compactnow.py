"""Compaction on a person's request (`/compact`): the history compacted now, between turns.

Contract: the history is the one the next turn would continue (this process's compacted context
when it ran the session, else the stored messages); it goes through the same `Economy` a run
uses, with thresholds near 0 so any history that can be compacted is, and the same events are
published (`compaction`, or `compaction_skipped` with its reason — a history too short to
compact says so). The result becomes the session's live context for its next turn. Nothing is
compacted while a turn of the session runs (the host calls this between turns).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from yagent.agents.compaction import EngineSummarizer
from yagent.agents.economy import Economy
from yagent.app import contextconfig
from yagent.app.history import from_store

if TYPE_CHECKING:
    from yagent.app.assemble import App


async def compact_now(app: App, session_id: str, agent_name: str | None = None) -> None:
    agent = app.agent(agent_name or app.config.agent.default)
    with app.sessions.held(session_id) as session:  # not dropped while it compacts
        live = session.live
        history = list(live) if live is not None else from_store(app.store.messages(session_id))
        settings = contextconfig.context_settings(
            app.config, state_dir=app.home / "state" / session_id, session_id=session_id
        )
        # any history over a token or two is "full": compacted down to the recent messages it keeps
        settings = dataclasses.replace(settings, compact_at=2e-6, compact_to=1e-6)
        summarizer = EngineSummarizer(
            app.engine,
            step_retries=agent.step_retries,
            agent=agent.name,
            on_turn=lambda turn: session.recorder().usage(agent.name, turn),
        )
        engine_economy = Economy(
            settings,
            emit=session.publish,
            archive=contextconfig.archiver(app.store, session_id, agent.name),
            summarizer=summarizer,
        )
        engine_economy.start(history)
        compacted = await engine_economy.before_request(history, step=0, system="", tools=())
        session.live = tuple(compacted)
