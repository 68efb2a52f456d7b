"""Session leases (`app.lease`): one live process per session, takeover only from the dead."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from yagent.app.lease import Holder, LeaseKeeper, SessionBusyError, SessionLeases


@pytest.fixture
def leases(tmp_path: Path) -> SessionLeases:
    with SessionLeases(tmp_path / "durable.db") as store:
        yield store


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.anyio
async def test_a_live_holder_refuses_a_second_one_and_nothing_is_written(
    leases: SessionLeases,
) -> None:
    first, second = Holder.this_process(), Holder.this_process()
    await leases.acquire("s1", first)
    with pytest.raises(SessionBusyError) as refused:
        await leases.acquire("s1", second)
    assert f"pid {first.pid} on {first.host}" in str(refused.value)
    assert leases.renew("s1", first), "the first still holds it"
    assert not leases.renew("s1", second)
    await leases.acquire("s1", first)  # its own lease: renewed, not refused
    await leases.acquire("s2", second)  # another session is free


@pytest.mark.anyio
async def test_a_dead_holder_on_this_host_is_taken_over_at_once(leases: SessionLeases) -> None:
    me = Holder.this_process()
    gone = Holder("t-dead", dead_pid(), "", me.host)
    await leases.acquire("s1", gone)
    await leases.acquire("s1", me)
    assert not leases.renew("s1", gone)


@pytest.mark.anyio
async def test_a_reused_pid_is_not_mistaken_for_the_holder(leases: SessionLeases) -> None:
    me = Holder.this_process()
    await leases.acquire("s1", Holder("t-old", me.pid, "1", me.host))  # our pid, another start
    await leases.acquire("s1", me)


@pytest.mark.anyio
async def test_a_holder_on_another_host_is_trusted_until_its_lease_expires(
    leases: SessionLeases,
) -> None:
    me = Holder.this_process()
    remote = Holder("t-remote", dead_pid(), "", "another-host")
    await leases.acquire("s1", remote, ttl=60)
    with pytest.raises(SessionBusyError):
        await leases.acquire("s1", me)
    await leases.acquire("s2", remote, ttl=-1)  # lapsed
    await leases.acquire("s2", me)


class Ticks:
    """Drives a keeper's renewal thread round by round: stands in for its stop event, whose
    `wait(RENEW_EVERY)` is the thread's only clock. `step` lets one renewal round run and returns
    when the thread is waiting again (the round is over); `set` stops the thread as `close` does."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._stopped = False
        self._ticks = 0
        self._rounds = 0  # times the thread came back to wait: one more than the rounds done

    def wait(self, timeout: float | None = None) -> bool:
        with self._cond:
            self._rounds += 1
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._stopped or self._ticks > 0)
            if self._stopped:
                return True
            self._ticks -= 1
            return False

    def set(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def step(self) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: self._rounds > 0, 10), "the thread never waited"
            rounds = self._rounds
            self._ticks += 1
            self._cond.notify_all()
            assert self._cond.wait_for(lambda: self._rounds > rounds, 10), "the round never ended"


@pytest.mark.anyio
async def test_the_keeper_renews_reports_a_lost_lease_and_releases(leases: SessionLeases) -> None:
    lost: list[str] = []
    keeper = LeaseKeeper(leases, lost.append)
    ticks = Ticks()
    keeper._stop = ticks  # type: ignore[assignment]  # the renewal thread's clock, driven below
    await keeper.take("s1")
    await keeper.take("s1")  # held already: no-op
    await keeper.take("s2")
    other = Holder.this_process()
    for session in ("s1", "s2"):
        await leases.acquire(session, keeper.holder, ttl=-1)  # as if frozen past its lease…
    await leases.acquire("s1", other)  # …and s1 taken over meanwhile
    assert lost == []
    await anyio.to_thread.run_sync(ticks.step)  # one renewal round
    assert lost == ["s1"]
    assert keeper.lost == {"s1"}
    assert keeper.held == {"s2"}
    with pytest.raises(SessionBusyError):
        await leases.acquire("s2", other)  # lapsed before the round, renewed by it: still held
    await anyio.to_thread.run_sync(ticks.step)  # a lost lease is not renewed, nor reported again
    assert lost == ["s1"]
    await keeper.close()
    await leases.acquire("s2", other)  # released
