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
- `prune_spills(state_root, days)` removes spilled outputs stored more than `days` days ago
  under every session's state directory (`open_app` runs it once per start, off the event
  loop); `0` keeps everything. What could not be removed is reported, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from yagent.agents.economy import Archive, ContextSettings
from yagent.app.config import Config
from yagent.kernel.context import offload, spill
from yagent.kernel.durable.clock import Clock
from yagent.memory import SessionStore
from yagent.tools.spillread import DEFAULT_SESSION

OFFLOAD_MIN_BYTES = offload.DEFAULT_MIN_BYTES
ARCHIVE_KIND = "compaction"
SPILL_HINT = (
    "read the rest with read_spill(locator={locator!r}, page={next_page}, count={count}) "
    "— pages of {count} lines, at most {cap} per page"
)


def context_settings(
    config: Config,
    *,
    state_dir: Path,
    session_id: str,
    on_spill_error: Callable[[BaseException], object] | None = None,
) -> ContextSettings:
    settings = config.agent
    window = settings.context_window
    page = max(1, settings.max_tool_output // spill.MAX_LINE_CHARS)
    store = spill.Spill(
        state_dir / "spill",
        limit=settings.max_tool_output,
        page_size=page,
        page_cap=page,
        hint=SPILL_HINT,
        on_error=on_spill_error,
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


def prune_spills(
    state_root: Path, max_age_days: float, *, clock: Clock | None = None
) -> spill.Cleanup:
    """Spilled outputs older than `max_age_days` removed from every session (see contract)."""
    if max_age_days <= 0 or not state_root.is_dir():
        return spill.Cleanup(0, 0, ())
    removed, removed_bytes, failed = 0, 0, list[str]()
    for session in sorted(state_root.iterdir()):
        root = session / "spill"
        if session.is_symlink() or not root.is_dir() or root.is_symlink():
            continue
        done = spill.Spill(root, clock=clock).cleanup(max_age_days * 86_400)
        removed += done.removed
        removed_bytes += done.removed_bytes
        failed.extend(done.failed)
    return spill.Cleanup(removed, removed_bytes, tuple(failed))


def archiver(store: SessionStore, session_id: str, agent: str) -> Archive:
    def archive(payload: Mapping[str, Any]) -> str:
        seq = store.archive(session_id, kind=ARCHIVE_KIND, payload={"agent": agent, **payload})
        return f"archive:{seq}"

    return archive
