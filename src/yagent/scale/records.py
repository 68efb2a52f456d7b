"""The local engine's batch records: `kernel.durable.contract.RunStore` and `StepStore` in files.

One folder per batch under `<home>/batches/<batch id>/`, one JSON file per task
(`<task id>.json`: its run record — status, version, plan — its step outcomes and its result).

Contract:
- `create` refuses a run id that exists (`RecordExists`): the local engine's idempotence — a task
  recorded once under a batch id is never started again by a resubmission.
- `set_status` is a compare-and-set on the version (`StaleRecord` otherwise, nothing changed);
  every write is under an exclusive `flock` of the batch folder's lock file and replaces the file
  atomically (write, fsync, rename), so concurrent processes on one machine never lose a write.
- `put` keeps each step's latest outcome, in first-recorded order.
Leaves to the host: where the home is; several machines (use the Temporal engine).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from yagent.kernel.durable.contract import RunRecord, StepOutcome
from yagent.scale.taskrun import outcome_dict, outcome_of


class RecordExists(ValueError):
    """A task with this key is already recorded."""


class StaleRecord(ValueError):
    """The record moved since the caller read it."""


class BatchRecords:
    """The records of one batch (`run_id` = the task's key `<batch>/<task>`)."""

    def __init__(self, home: Path, batch_id: str) -> None:
        self.folder = home / "batches" / batch_id

    def _file(self, run_id: str) -> Path:
        return self.folder / (run_id.rsplit("/", 1)[-1] + ".json")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def read(self, run_id: str) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads(self._file(run_id).read_text())
        except FileNotFoundError:
            return None
        return data

    def _write(self, run_id: str, data: dict[str, Any]) -> None:
        path = self._file(run_id)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(path)

    async def create(self, run_id: str, plan: Sequence[str], status: str) -> RunRecord:
        with self._locked():
            if self.read(run_id) is not None:
                raise RecordExists(f"task {run_id} is already recorded")
            data = {"run_id": run_id, "status": status, "version": 1, "plan": list(plan)}
            self._write(run_id, data | {"steps": [], "result": None})
        return RunRecord(run_id, status, 1, tuple(plan))

    async def load(self, run_id: str) -> RunRecord | None:
        data = self.read(run_id)
        if data is None:
            return None
        return RunRecord(run_id, str(data["status"]), int(data["version"]), tuple(data["plan"]))

    async def set_status(self, run_id: str, status: str, *, expected_version: int) -> RunRecord:
        with self._locked():
            data = self.read(run_id)
            if data is None or int(data["version"]) != expected_version:
                raise StaleRecord(f"task {run_id} moved (expected version {expected_version})")
            data |= {"status": status, "version": expected_version + 1}
            self._write(run_id, data)
        return RunRecord(run_id, status, expected_version + 1, tuple(data["plan"]))

    async def put(self, outcome: StepOutcome) -> None:
        with self._locked():
            data = self.read(outcome.run_id)
            if data is None:
                raise LookupError(f"task {outcome.run_id} is not recorded")
            steps = [s for s in data["steps"] if s["step_id"] != outcome.step_id]
            at = [s["step_id"] for s in data["steps"]]
            new = outcome_dict(outcome)
            if outcome.step_id in at:
                steps.insert(at.index(outcome.step_id), new)
            else:
                steps.append(new)
            self._write(outcome.run_id, data | {"steps": steps})

    async def get(self, run_id: str, step_id: str) -> StepOutcome | None:
        return next((s for s in await self.outcomes(run_id) if s.step_id == step_id), None)

    async def outcomes(self, run_id: str) -> Sequence[StepOutcome]:
        data = self.read(run_id)
        return [] if data is None else [outcome_of(s) for s in data["steps"]]

    def keep_result(self, run_id: str, result: dict[str, Any]) -> None:
        with self._locked():
            data = self.read(run_id)
            if data is not None:
                self._write(run_id, data | {"result": result})
