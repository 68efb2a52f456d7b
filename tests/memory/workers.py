"""Process workers for the concurrency tests (importable by `spawn`ed children)."""

from __future__ import annotations

from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from yagent.memory import SessionStore


def append_many(
    path: str, session_id: str, worker: int, count: int, start: Barrier, results: Any
) -> None:
    with SessionStore(Path(path), busy_timeout=30.0) as store:
        start.wait(timeout=60)
        message_seqs, event_seqs = [], []
        own = store.create_session(workspace=f"/worker{worker}").id
        for index in range(count):
            message_seqs.append(
                store.append_message(session_id, {"worker": worker, "i": index}, agent=str(worker))
            )
            event_seqs.append(
                store.append_event(session_id, "tick", {"worker": worker, "i": index})
            )
        results.put((worker, own, message_seqs, event_seqs))
