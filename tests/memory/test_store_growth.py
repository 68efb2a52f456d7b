"""The work of storing a step does not grow with the session: every statement a step runs finds
its rows by key, never by walking the session's earlier records.

Measured in SQLite virtual-machine steps (a progress handler called at every step), which count
the rows a statement visits — a deterministic figure, unlike time."""

from __future__ import annotations

from yagent.memory import SessionStore


def _step(store: SessionStore, sid: str, n: int) -> None:
    """One tool-running step's records, as `app.steplog` writes them (two batches)."""
    call = f"call-{n}"
    with store.batch(whole=True):
        store.append_event(sid, "model_request", {"step": n})
        store.append_message(sid, {"role": "assistant", "content": "", "tool_calls": [call]})
        store.add_usage(sid, model="m", input_tokens=1, output_tokens=1, cost=None)
        store.append_event(sid, "tool_call", {"step": n, "call_id": call})
        store.record_tool_call(sid, call_id=call, name="think", arguments="{}", started_at=1.0)
    with store.batch(whole=True):
        content = f"result {n}"
        seq = store.append_message(
            sid, {"role": "tool", "tool_call_id": call, "name": "think", "content": content}
        )
        payload = {"step": n, "call_id": call, "ok": True, "content": content}
        store.append_event(sid, "tool_result", payload, content_message=seq)
        store.record_tool_result(
            sid,
            call,
            content=content,
            ok=True,
            kind=None,
            ended_at=2.0,
            delegation_id="",
            content_message=seq,
        )


def _vm_steps(store: SessionStore, sid: str, n: int) -> int:
    count = [0]

    def tick() -> int:
        count[0] += 1
        return 0  # go on

    conn = store._live()
    conn.set_progress_handler(tick, 1)
    try:
        _step(store, sid, n)
    finally:
        conn.set_progress_handler(None, 1)
    return count[0]


def test_a_step_costs_the_same_after_a_thousand_steps(store: SessionStore) -> None:
    sid = store.create_session(workspace="/w").id
    for n in range(20):
        _step(store, sid, n)
    early = _vm_steps(store, sid, 20)
    for n in range(21, 1000):
        _step(store, sid, n)
    late = _vm_steps(store, sid, 1000)
    # B-tree depth may add a few steps; a walk over the session's earlier calls adds thousands
    assert late <= early * 1.2, (early, late)
