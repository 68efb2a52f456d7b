"""contract: interfaces and data only — the module must hold no implementation."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Sequence
from typing import Protocol

import anyio

from yagent.kernel.durable import contract
from yagent.kernel.durable.contract import (
    Clock,
    EventSink,
    RunEvent,
    RunRecord,
    RunStore,
    StepOutcome,
    StepRunner,
    StepStore,
)

PROTOCOLS = {"Clock", "RunStore", "StepStore", "StepRunner", "EventSink"}
DATA = {"RunRecord", "StepOutcome", "RunEvent"}


def _tree() -> ast.Module:
    return ast.parse(inspect.getsource(contract))


def test_the_module_defines_only_protocols_and_data_classes() -> None:
    classes = {n.name: n for n in _tree().body if isinstance(n, ast.ClassDef)}
    assert set(classes) == PROTOCOLS | DATA
    for name in PROTOCOLS:
        assert getattr(getattr(contract, name), "_is_protocol", False), name
        assert Protocol in getattr(contract, name).__mro__, name
    for name in DATA:
        cls = getattr(contract, name)
        assert dataclasses.is_dataclass(cls), name
        assert cls.__dataclass_params__.frozen, name  # type: ignore[union-attr]
        methods = [
            n for n in classes[name].body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        assert methods == [], f"{name} is data: it has methods {[m.name for m in methods]}"


def _constant(statement: ast.stmt) -> object:
    """The value of a bare constant statement (a docstring or `...`); None for anything else."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return statement.value.value
    return None


def test_no_function_or_method_has_a_body() -> None:
    tree = _tree()
    assert not [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    methods = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert len(methods) >= 9
    for node in methods:
        assert all(_constant(s) is not None for s in node.body), f"{node.name} has a body"
        assert any(_constant(s) is Ellipsis for s in node.body), f"{node.name} lacks `...`"


def test_the_module_imports_no_implementation() -> None:
    imported: set[str] = set()
    for node in ast.walk(_tree()):
        if isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    assert imported <= {"__future__", "collections.abc", "dataclasses", "typing"}


def test_data_crosses_the_boundary_immutable() -> None:
    record = RunRecord("r1", "running", 3, ("a", "b"))
    assert (record.run_id, record.status, record.version, record.plan) == (
        "r1",
        "running",
        3,
        ("a", "b"),
    )
    outcome = StepOutcome("r1", "a", "succeeded", "sha256:x")
    assert outcome.detail == ""
    event = RunEvent("r1", 1, "step.started", "a")
    assert dict(event.attributes) == {}
    for value in (record, outcome, event):
        field = dataclasses.fields(value)[0].name
        try:
            setattr(value, field, "changed")
        except dataclasses.FrozenInstanceError:
            continue
        raise AssertionError(f"{type(value).__name__} is mutable")


class _Host:
    """A minimal host, written only against the protocols."""

    def __init__(self) -> None:
        self.runs: dict[str, RunRecord] = {}
        self._outcomes: dict[tuple[str, str], StepOutcome] = {}
        self.events: list[RunEvent] = []

    def now(self) -> float:
        return 1.0

    async def create(self, run_id: str, plan: Sequence[str], status: str) -> RunRecord:
        self.runs[run_id] = RunRecord(run_id, status, 1, tuple(plan))
        return self.runs[run_id]

    async def load(self, run_id: str) -> RunRecord | None:
        return self.runs.get(run_id)

    async def set_status(self, run_id: str, status: str, *, expected_version: int) -> RunRecord:
        current = self.runs[run_id]
        if current.version != expected_version:
            raise RuntimeError("stale")
        self.runs[run_id] = dataclasses.replace(current, status=status, version=current.version + 1)
        return self.runs[run_id]

    async def put(self, outcome: StepOutcome) -> None:
        self._outcomes[(outcome.run_id, outcome.step_id)] = outcome

    async def get(self, run_id: str, step_id: str) -> StepOutcome | None:
        return self._outcomes.get((run_id, step_id))

    async def outcomes(self, run_id: str) -> Sequence[StepOutcome]:
        return [o for (r, _), o in self._outcomes.items() if r == run_id]

    async def run_step(self, run_id: str, step_id: str) -> StepOutcome:
        return StepOutcome(run_id, step_id, "succeeded", "sha256:x")

    async def emit(self, event: RunEvent) -> None:
        self.events.append(event)


def test_a_host_class_satisfies_the_protocols_structurally() -> None:
    host = _Host()
    for protocol in (Clock, RunStore, StepStore, StepRunner, EventSink):
        assert isinstance(host, protocol), protocol.__name__
    assert not isinstance(object(), RunStore)


def test_the_engine_side_runs_against_the_protocols_alone() -> None:
    async def engine(runs: RunStore, steps: StepStore, runner: StepRunner, sink: EventSink) -> str:
        record = await runs.create("r1", ["a"], "running")
        outcome = await runner.run_step("r1", "a")
        await steps.put(outcome)
        await sink.emit(RunEvent("r1", 1, "step.done", "a"))
        done = await runs.set_status("r1", "succeeded", expected_version=record.version)
        return done.status

    host = _Host()
    assert anyio.run(engine, host, host, host, host) == "succeeded"
    assert [o.step_id for o in anyio.run(host.outcomes, "r1")] == ["a"]
    assert anyio.run(host.get, "r1", "a") is not None
    assert anyio.run(host.load, "r1") == RunRecord("r1", "succeeded", 2, ("a",))
    assert [e.kind for e in host.events] == ["step.done"]
    assert host.now() == 1.0
