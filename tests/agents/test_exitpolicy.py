"""exitpolicy: only a successful finishing call ends a run; deliverable by JSON shape."""

from __future__ import annotations

import json

from yagent.agents import exitpolicy
from yagent.toolspec.builtin import builtin_by_name

SPECS = builtin_by_name()


def test_c2_only_successful_finishing_calls_end_the_run() -> None:
    exit_spec = SPECS["agent_exit"]
    assert exitpolicy.ends_run(exit_spec, ok=True, stop_on_finish=True)
    assert not exitpolicy.ends_run(exit_spec, ok=False, stop_on_finish=True)
    assert not exitpolicy.ends_run(exit_spec, ok=True, stop_on_finish=False)
    assert not exitpolicy.ends_run(SPECS["think"], ok=True, stop_on_finish=True)
    assert not exitpolicy.ends_run(None, ok=True, stop_on_finish=True)


def test_c3_deliverable_by_shape_not_name() -> None:
    content = json.dumps({"finished": True, "reason": "done", "summary": "the report"})
    assert exitpolicy.deliverable_text(content) == "the report"
    assert exitpolicy.deliverable_text(json.dumps({"finished": True, "reason": "r"})) == "r"
    assert exitpolicy.deliverable_text(json.dumps({"finished": True})) is None
    assert exitpolicy.deliverable_text(json.dumps({"finished": "yes", "reason": "r"})) is None
    assert exitpolicy.deliverable_text("not json") is None
    assert exitpolicy.deliverable_text(json.dumps([1])) is None
