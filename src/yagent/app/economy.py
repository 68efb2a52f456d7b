"""The context economy as the app configures it: window and thresholds from `[agent]`, the spill
and offload stores under the session's state directory, compaction archives in the session store.

Contract:
- The window is `[agent] context_window`; a reply reserve of `[llm] max_tokens`, but never more
  than a quarter of the window, is taken off the input side (the window says so in its note).
- Tool outputs above `[agent] max_tool_output` characters are spilled to `<state>/spill` and paged
  back with `read_spill`; pages are never larger than the output budget (at most
  `max_tool_output // spill.MAX_LINE_CHARS` lines of at most `MAX_LINE_CHARS` characters).
- Inline objects of at least `OFFLOAD_MIN_BYTES` go to `<state>/offload`, content-addressed.
- Every compaction's leaving messages are stored whole with `store.archive(kind="compaction")`;
  the reference handed back is `archive:<seq>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from yagent.agents.economy import Archive, ContextSettings
from yagent.app.config import Config
from yagent.kernel import offload, spill
from yagent.memory import SessionStore
from yagent.tools.spillread import DEFAULT_SESSION

OFFLOAD_MIN_BYTES = offload.DEFAULT_MIN_BYTES
ARCHIVE_KIND = "compaction"
SPILL_HINT = (
    "read the rest with read_spill(locator={locator!r}, page={next_page}, count={count}) "
    "— pages of {count} lines, at most {cap} per page"
)


def context_settings(config: Config, *, state_dir: Path, session_id: str) -> ContextSettings:
    settings = config.agent
    window = settings.context_window
    page = max(1, settings.max_tool_output // spill.MAX_LINE_CHARS)
    store = spill.Spill(
        state_dir / "spill",
        limit=settings.max_tool_output,
        page_size=page,
        page_cap=page,
        hint=SPILL_HINT,
    )
    return ContextSettings(
        window=window,
        reserve_output=min(config.llm.max_tokens, window // 4),
        compact_at=settings.compact_at,
        max_tool_output=settings.max_tool_output,
        spill=store,
        spill_session=session_id or DEFAULT_SESSION,
        offload=offload.Offloader(
            offload.FileStore(state_dir / "offload"), min_bytes=OFFLOAD_MIN_BYTES
        ),
    )


def archiver(store: SessionStore, session_id: str, agent: str) -> Archive:
    def archive(payload: Mapping[str, Any]) -> str:
        seq = store.archive(session_id, kind=ARCHIVE_KIND, payload={"agent": agent, **payload})
        return f"archive:{seq}"

    return archive
