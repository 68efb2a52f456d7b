"""The commitgate suite on every gate, the suite's own teeth, and each gate beyond the suite."""

from __future__ import annotations

import itertools
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from yagent.kernel.durable.commitgate import (
    Acquired,
    ClockedGate,
    Commit,
    Gate,
    Holding,
    InvalidArgumentError,
    MemoryGate,
    NotTerminalError,
    Outcome,
    SqliteGate,
    StaleTokenError,
    StoreError,
    mint_token,
    rules,
)
from yagent.kernel.testing import commitgatesuite as suite
from yagent.kernel.testing.commitgatesuite import CASES, ContractViolation, FakeClock, run_case

TERMINAL = {"succeeded", "failed"}


class TwoConnections:
    """A ClockedGate sending each operation to the next of two SqliteGates on one file."""

    def __init__(self, path: Path, terminal: frozenset[str]) -> None:
        self.gates = (SqliteGate(path, terminal), SqliteGate(path, terminal))
        self._turn = itertools.cycle(self.gates)

    @property
    def terminal(self) -> frozenset[str]:
        return self.gates[0].terminal

    def set_clock(self, clock: Any) -> None:
        for gate in self.gates:
            gate.set_clock(clock)

    def close(self) -> None:
        for gate in self.gates:
            gate.close()

    async def acquire(self, run_id: str, step_id: str, holder: str, ttl: float) -> Acquired:
        return await next(self._turn).acquire(run_id, step_id, holder, ttl)

    async def renew(self, token: str, ttl: float) -> Holding:
        return await next(self._turn).renew(token, ttl)

    async def commit(self, token: str, state: str, detail: str = "") -> Commit:
        return await next(self._turn).commit(token, state, detail)

    async def release_lease(self, token: str) -> bool:
        return await next(self._turn).release_lease(token)

    async def committed(self, run_id: str, step_id: str) -> Commit | None:
        return await next(self._turn).committed(run_id, step_id)


TestMemoryGate = suite.suite(lambda _, t: MemoryGate(t), name="MemoryGate")
TestSqliteGate = suite.suite(lambda d, t: SqliteGate(d / "g.db", t), name="SqliteGate")
TestTwoConnectionsGate = suite.suite(lambda d, t: TwoConnections(d / "g.db", t), name="TwoConn")

ORIGINAL = {name: getattr(rules, name) for name in ("acquire", "commit", "renew", "release")}


class LeakyIndexGate(MemoryGate):
    """Remembers every token it ever minted for a step (never forgets a superseded one)."""

    async def _transact(self, fn: Any, *, write: bool) -> Any:
        before = dict(self._tokens)
        result = await super()._transact(fn, write=write)
        self._tokens.update(before)
        return result


def _release_by_step(mp: pytest.MonkeyPatch) -> None:
    """The old, content-based release: any token ever issued for the step frees the gate."""

    def release(row: Any, token: str) -> Any:
        return None if row is None else replace(row, token=None, holder="", expires_at=0.0)

    mp.setattr(rules, "release", release)


def _commit_ignores_expiry(mp: pytest.MonkeyPatch) -> None:
    def commit(row: Any, token: str, state: str, detail: str, terminal: Any, now: float) -> Any:
        return ORIGINAL["commit"](row, token, state, detail, terminal, 0.0)

    mp.setattr(rules, "commit", commit)


def _commit_any_state(mp: pytest.MonkeyPatch) -> None:
    def commit(row: Any, token: str, state: str, detail: str, terminal: Any, now: float) -> Any:
        return ORIGINAL["commit"](row, token, state, detail, frozenset({state}), now)

    mp.setattr(rules, "commit", commit)


def _fixed_token(mp: pytest.MonkeyPatch) -> None:
    def acquire(*args: Any) -> Any:
        return ORIGINAL["acquire"](*args[:-1], "the-token")

    mp.setattr(rules, "acquire", acquire)


def _held_forever(mp: pytest.MonkeyPatch) -> None:
    def acquire(
        row: Any, run: str, step: str, holder: str, ttl: float, now: float, tok: str
    ) -> Any:
        return ORIGINAL["acquire"](row, run, step, holder, ttl, 0.0, tok)

    mp.setattr(rules, "acquire", acquire)


def _renew_new_expiry_only_from_old(mp: pytest.MonkeyPatch) -> None:
    def renew(row: Any, token: str, ttl: float, now: float) -> Any:
        held, new = ORIGINAL["renew"](row, token, ttl, now)
        return held, replace(new, expires_at=row.expires_at)

    mp.setattr(rules, "renew", renew)


def _recommit(mp: pytest.MonkeyPatch) -> None:
    """Acquire ignores an existing commit."""

    def acquire(row: Any, *rest: Any) -> Any:
        if row is not None and row.state is not None:
            row = replace(row, state=None)
        return ORIGINAL["acquire"](row, *rest)

    mp.setattr(rules, "acquire", acquire)


@pytest.mark.parametrize(
    ("mutant", "case"),
    [
        (_commit_ignores_expiry, "commit_needs_current_live_token"),
        (_commit_any_state, "vocabulary_is_enforced"),
        (_fixed_token, "tokens_are_unique"),
        (_held_forever, "held_until_expiry"),
        (_renew_new_expiry_only_from_old, "renew_extends_and_keeps_token"),
        (_recommit, "commit_once"),
    ],
)
@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_the_suite_goes_red_on_the_mutation_that_breaks_its_clause(
    mutant: Any, case: str, backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mutant(monkeypatch)
    if backend == "memory":
        factory: Any = lambda _, t: MemoryGate(t)  # noqa: E731
    else:
        factory = lambda d, t: SqliteGate(d / "g.db", t)  # noqa: E731
    with pytest.raises(ContractViolation, match=case):
        run_case(case, factory, tmp_path)


def test_a_content_based_release_goes_red(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case("late_release_cannot_free_another", lambda _, t: LeakyIndexGate(t), tmp_path)
    _release_by_step(monkeypatch)
    with pytest.raises(ContractViolation, match="late_release_cannot_free_another"):
        run_case("late_release_cannot_free_another", lambda _, t: LeakyIndexGate(t), tmp_path)


def test_a_gate_that_forgets_commits_lets_two_branches_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _recommit(monkeypatch)
    with pytest.raises(ContractViolation, match="two_branches_one_winner"):
        run_case("two_branches_one_winner", lambda _, t: MemoryGate(t), tmp_path)


def test_a_gate_without_an_injectable_clock_is_a_violation(tmp_path: Path) -> None:
    with pytest.raises(ContractViolation, match="not a ClockedGate"):
        run_case(CASES[0], lambda _, t: object(), tmp_path)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="no case named"):
        run_case("nope", lambda _, t: MemoryGate(t))


def test_the_suite_has_eight_named_cases() -> None:
    assert len({c.name for c in CASES}) == 8
    run_case("commit_once", lambda _, t: MemoryGate(t))  # scratch dir made on demand


def test_both_gates_satisfy_the_protocols(tmp_path: Path) -> None:
    with SqliteGate(tmp_path / "g.db", TERMINAL) as sqlite_gate:
        for gate in (MemoryGate(TERMINAL), sqlite_gate):
            assert isinstance(gate, Gate)
            assert isinstance(gate, ClockedGate)
            assert gate.terminal == frozenset(TERMINAL)


@pytest.mark.parametrize("terminal", [(), "succeeded", ["ok", ""], [3]])
def test_the_terminal_vocabulary_must_be_a_nonempty_set_of_names(terminal: Any) -> None:
    with pytest.raises(InvalidArgumentError):
        MemoryGate(terminal)


@pytest.mark.anyio
async def test_invalid_arguments_are_refused_before_anything_is_written() -> None:
    gate = MemoryGate(TERMINAL)
    bad_calls = [
        gate.acquire("", "s", "h", 1),
        gate.acquire("r", "s", "", 1),
        gate.acquire("r", "s", "h", 0),
        gate.acquire("r", "s", "h", float("inf")),
        gate.acquire("r", "s", "h", True),
        gate.renew("", 1),
        gate.commit("t", ""),
        gate.commit("t", "succeeded", None),  # type: ignore[arg-type]
        gate.release_lease(""),
        gate.committed("r", ""),
    ]
    for call in bad_calls:
        with pytest.raises(InvalidArgumentError):
            await call
    with pytest.raises(InvalidArgumentError):
        gate.set_clock(object())  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_non_terminal_commit_is_refused_before_the_token_is_judged() -> None:
    gate = MemoryGate(TERMINAL)
    with pytest.raises(NotTerminalError):
        await gate.commit("never-issued", "running")
    with pytest.raises(StaleTokenError, match="holds nothing"):
        await gate.commit("never-issued", "failed")


@pytest.mark.anyio
async def test_a_commit_after_another_commit_says_so() -> None:
    gate = MemoryGate(TERMINAL)
    clock = FakeClock()
    gate.set_clock(clock)
    first = await gate.acquire("r", "s", "A", 5)
    assert first.holding is not None
    clock.advance(6)
    second = await gate.acquire("r", "s", "B", 5)
    assert second.holding is not None
    await gate.commit(second.holding.token, "succeeded")
    assert await gate.committed("r", "s") is not None
    assert await gate.committed("r", "other") is None
    assert not await gate.release_lease(second.holding.token)  # the commit ended it


def test_tokens_are_128_random_bits() -> None:
    tokens = {mint_token() for _ in range(1000)}
    assert len(tokens) == 1000
    assert all(len(t) == 32 for t in tokens)


def test_the_row_without_a_holding_has_no_holding() -> None:
    with pytest.raises(StaleTokenError):
        rules.GateRow("r", "s").holding()


@pytest.mark.anyio
async def test_commits_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    with SqliteGate(path, TERMINAL) as gate:
        got = await gate.acquire("r", "s", "A", 60)
        assert got.holding is not None
        done = await gate.commit(got.holding.token, "failed", "détail")
    with SqliteGate(path, TERMINAL) as again:
        assert await again.committed("r", "s") == done
        assert (await again.acquire("r", "s", "B", 60)).outcome is Outcome.COMMITTED


@pytest.mark.anyio
async def test_an_unreadable_row_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    with SqliteGate(path, TERMINAL) as gate:
        await gate.acquire("r", "s", "A", 60)
        raw = sqlite3.connect(path)
        raw.execute("UPDATE commitgate_gates SET holder = X'00'")
        raw.commit()
        raw.close()
        with pytest.raises(StoreError, match="unreadable row"):
            await gate.acquire("r", "s", "B", 60)


@pytest.mark.anyio
async def test_a_token_collision_fails_the_transaction_instead_of_deleting_a_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.kernel.durable.commitgate import store as store_module

    monkeypatch.setattr(store_module, "mint_token", lambda: "same")
    with SqliteGate(tmp_path / "g.db", TERMINAL) as gate:
        assert (await gate.acquire("r", "s1", "A", 60)).granted
        with pytest.raises(StoreError, match="transaction failed"):
            await gate.acquire("r", "s2", "B", 60)
        assert (await gate.acquire("r", "s1", "C", 60)).outcome is Outcome.HELD


RACER = textwrap.dedent(
    """
    import sys, anyio
    from yagent.kernel.durable.commitgate import SqliteGate, TokenError

    async def main(path, me):
        won = []
        with SqliteGate(path, {"succeeded"}) as gate:
            for step in range(25):
                got = await gate.acquire("run", f"s{step}", me, 60)
                if got.holding is None:
                    continue
                try:
                    await gate.commit(got.holding.token, "succeeded", me)
                except TokenError:
                    continue
                won.append(step)
        print(" ".join(map(str, won)))

    anyio.run(main, sys.argv[1], sys.argv[2])
    """
)


@pytest.mark.slow
def test_processes_racing_on_one_file_commit_each_step_once(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    SqliteGate(path, TERMINAL).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(path), f"p{i}"], stdout=subprocess.PIPE, text=True
        )
        for i in range(4)
    ]
    wins: list[int] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        wins.extend(int(s) for s in out.split())
    assert sorted(wins) == list(range(25))
