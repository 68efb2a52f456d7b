"""Session leases (`app.lease`): one live process per session, takeover only from the dead."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from yagent.app import lease
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


@pytest.mark.anyio
async def test_the_keeper_renews_reports_a_lost_lease_and_releases(
    leases: SessionLeases, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lease, "RENEW_EVERY", 0.01)
    lost = threading.Event()
    keeper = LeaseKeeper(leases, lambda session: lost.set())
    await keeper.take("s1")
    await keeper.take("s1")  # held already: no-op
    await keeper.take("s2")
    other = Holder.this_process()
    await leases.acquire("s1", keeper.holder, ttl=-1)  # as if frozen past its lease…
    await leases.acquire("s1", other)  # …and taken over meanwhile
    assert await anyio.to_thread.run_sync(lost.wait, 10)
    assert keeper.lost == {"s1"}
    assert keeper.held == {"s2"}
    with pytest.raises(SessionBusyError):
        await leases.acquire("s2", other, ttl=-1)  # renewed: still held
    await keeper.close()
    await leases.acquire("s2", other)  # released
