"""drain: detached turns, waiting within the budget, the forced stop, and the Budget type."""

from __future__ import annotations

import math
import sys
import textwrap
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from mypy import api as mypy_api

from yagent.kernel.durable import drain as drain_module
from yagent.kernel.durable.drain import (
    Budget,
    DrainingError,
    InvalidBudgetError,
    TurnGroup,
    Turns,
    TurnStoppedError,
    budget,
    detached,
    drain,
    shutdown_budget,
)


def test_budget_keeps_positive_and_negative_and_fills_in_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert budget(2.5).seconds == 2.5
    assert budget(-1).seconds == -1.0
    assert budget(-1).drains is False
    assert budget(0).seconds == 60.0
    monkeypatch.setattr(drain_module, "DEFAULT_BUDGET", 7.0)
    assert budget(0) == Budget(7.0)
    assert budget(0).drains


def test_a_negative_budget_is_never_normalised_to_the_default() -> None:
    for x in (-0.001, -5, -60):
        assert budget(x).seconds == float(x)
        assert shutdown_budget(x) == 0.0


def test_shutdown_budget_is_a_plain_float() -> None:
    assert shutdown_budget(3) == 3.0
    assert type(shutdown_budget(3)) is float
    assert shutdown_budget(0) == drain_module.DEFAULT_BUDGET


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, True, "5", None])
def test_non_finite_or_non_numeric_budgets_are_refused(bad: object) -> None:
    with pytest.raises(InvalidBudgetError):
        budget(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidBudgetError):
        shutdown_budget(bad)  # type: ignore[arg-type]


def test_the_type_checker_refuses_a_budget_where_a_timeout_goes(tmp_path: Path) -> None:
    snippet = textwrap.dedent(
        """
        import anyio
        from yagent.kernel.durable.drain import TurnGroup, budget, drain, shutdown_budget

        async def wrong() -> None:
            with anyio.fail_after(budget(5)):  # line 6: a Budget is not a timeout
                pass
            with anyio.move_on_after(budget(5)):  # line 8
                pass
            await drain(TurnGroup(), 5.0)  # line 10: drain takes a Budget only

        async def right() -> None:
            with anyio.fail_after(shutdown_budget(5)):
                await drain(TurnGroup(), budget(5))
        """
    )
    probe = tmp_path / "probe.py"
    probe.write_text(snippet)
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {Path(drain_module.__file__).parents[2]}\n")
    out, err, status = mypy_api.run(
        [
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--config-file",
            str(config),
            "--python-executable",
            sys.executable,
            str(probe),
        ]
    )
    errors = sorted(int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line)
    assert status == 1, out + err
    assert errors == [6, 8, 10], out


def test_drain_refuses_a_plain_number_at_run_time_too() -> None:
    with pytest.raises(InvalidBudgetError, match="expected a Budget"):
        anyio.run(drain, TurnGroup(), 5.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidBudgetError, match="expected a Budget"), detached(5.0):  # type: ignore[arg-type]
        pass


def test_the_turn_group_is_turns() -> None:
    assert isinstance(TurnGroup(), Turns)


@pytest.mark.anyio
async def test_a_turn_survives_its_callers_cancellation() -> None:
    group = TurnGroup()
    release = anyio.Event()
    finished: list[str] = []

    async def turn() -> str:
        await release.wait()
        finished.append("done")
        return "result"

    caller_scope = anyio.CancelScope()

    async def caller() -> None:
        with caller_scope:
            await group.run(turn)

    async with anyio.create_task_group() as tg:
        tg.start_soon(caller)
        await anyio.wait_all_tasks_blocked()
        assert group.in_flight() == 1
        caller_scope.cancel()  # the caller is cancelled (Ctrl-C) ...
        await anyio.wait_all_tasks_blocked()
        assert group.in_flight() == 1  # ... the turn is not
        assert finished == []
        release.set()
    assert finished == ["done"]
    assert caller_scope.cancelled_caught  # the caller still learns it was cancelled
    assert group.in_flight() == 0


@pytest.mark.anyio
async def test_drain_waits_for_in_flight_turns_within_the_budget() -> None:
    group = TurnGroup()
    release = anyio.Event()
    results: list[str] = []

    async def turn(name: str) -> str:
        await release.wait()
        return name

    async def caller(name: str) -> None:
        results.append(await group.run(turn, name))

    async with anyio.create_task_group() as tg:
        tg.start_soon(caller, "a")
        tg.start_soon(caller, "b")
        await anyio.wait_all_tasks_blocked()

        async def finish_later() -> None:
            await anyio.wait_all_tasks_blocked()
            release.set()

        tg.start_soon(finish_later)
        report = await drain(group, budget(30))
    assert sorted(results) == ["a", "b"]
    assert (report.in_flight, report.forced, report.stuck, report.clean) == (2, 0, 0, True)
    assert report.budget == 30.0
    with pytest.raises(DrainingError):
        await group.run(turn, "late")


@pytest.mark.anyio
async def test_a_spent_budget_force_stops_the_rest_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    group = TurnGroup()
    stopped: list[BaseException] = []

    async def endless() -> None:
        await anyio.sleep_forever()

    async def caller() -> None:
        try:
            await group.run(endless)
        except TurnStoppedError as exc:
            stopped.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(caller)
        await anyio.wait_all_tasks_blocked()
        report = await drain(group, budget(0.01))
    assert (report.in_flight, report.forced, report.stuck, report.clean) == (1, 1, 0, False)
    assert len(stopped) == 1
    assert group.in_flight() == 0


@pytest.mark.anyio
async def test_a_negative_budget_stops_at_once_without_waiting() -> None:
    group = TurnGroup()
    started = anyio.current_time()

    async def caller() -> None:
        with pytest.raises(TurnStoppedError):
            await group.run(anyio.sleep_forever)

    async with anyio.create_task_group() as tg:
        tg.start_soon(caller)
        await anyio.wait_all_tasks_blocked()
        report = await drain(group, budget(-1))
    assert (report.forced, report.stuck) == (1, 0)
    assert anyio.current_time() - started < drain_module.DEFAULT_BUDGET  # never the default wait


@pytest.mark.anyio
async def test_a_turn_that_ignores_the_stop_is_reported_stuck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(drain_module, "FORCE_GRACE", 0.01)
    group = TurnGroup()
    release = anyio.Event()

    async def stubborn() -> None:
        with anyio.CancelScope(shield=True):
            await release.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(group.run, stubborn)
        await anyio.wait_all_tasks_blocked()
        report = await drain(group, budget(-1))
        assert (report.forced, report.stuck) == (1, 1)
        release.set()


@pytest.mark.anyio
async def test_draining_an_idle_group_is_clean_and_closes_it() -> None:
    group = TurnGroup()
    report = await drain(group, budget(5))
    assert report.clean
    assert report.in_flight == 0
    assert group.closed


@pytest.mark.anyio
async def test_drain_is_not_cut_short_by_the_cancellation_that_triggered_it() -> None:
    group = TurnGroup()
    release = anyio.Event()
    reports: list[object] = []

    async def turn() -> None:
        await release.wait()

    shutdown_scope = anyio.CancelScope()

    async def shutdown() -> None:
        with shutdown_scope:
            reports.append(await drain(group, budget(30)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(group.run, turn)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(shutdown)
        await anyio.wait_all_tasks_blocked()
        shutdown_scope.cancel()
        await anyio.wait_all_tasks_blocked()
        assert reports == []  # still draining, despite the cancellation
        release.set()
    assert len(reports) == 1
    assert getattr(reports[0], "clean", False)


@pytest.mark.anyio
async def test_turn_errors_propagate_and_leave_the_group_idle() -> None:
    group = TurnGroup()

    async def broken() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await group.run(broken)
    assert group.in_flight() == 0
    await group.wait_idle()


@pytest.mark.anyio
async def test_detached_work_outlives_the_caller_but_not_the_budget() -> None:
    done: list[str] = []
    with anyio.CancelScope() as outer:
        outer.cancel()
        with detached(budget(30)) as scope:
            await anyio.lowlevel.checkpoint()
            done.append("finished despite the cancelled caller")
    assert done
    assert not scope.cancelled_caught
    with detached(budget(0.01)) as cut:
        await anyio.sleep_forever()
    assert cut.cancelled_caught
    with detached(budget(-1)) as at_once:
        await anyio.lowlevel.checkpoint()
        done.append("never")
    assert at_once.cancelled_caught
    assert "never" not in done
