"""boardtest cases: the eight clauses of the taskboard contract, each on a fresh board.

token minted by the store / concurrent claim has exactly one winner / release by token only /
complete by token only / failed is not terminal / dependencies gate claims / an expired claim can
be taken over (and renew keeps the token) / seed and check hold the invariants.
"""

from __future__ import annotations

import dataclasses

from yagent.kernel.durable.taskboard import (
    AlreadyClaimedError,
    BlockedError,
    ClaimRequest,
    ClockedBoard,
    DuplicateTaskError,
    FinishedError,
    InvariantError,
    Lease,
    LeaseExpiredError,
    StaleTokenError,
    Status,
    Task,
    UnknownDependencyError,
    check,
    concurrent_claim,
)
from yagent.kernel.testing.boardtest.harness import (
    REQUEST,
    TTL,
    Case,
    FakeClock,
    claimed,
    expect,
    refused,
)


async def token_minted_by_store(board: ClockedBoard, clock: FakeClock) -> None:
    fields = [f.name for f in dataclasses.fields(ClaimRequest)]
    expect(fields == ["ttl"], f"a ClaimRequest must ask for a ttl only, has {fields}")
    await board.post("t1")
    await board.post("t2")
    one, tok1 = await claimed(board, "t1", "A")
    expect(one.lease is not None and one.lease.expires_at == clock.now() + TTL, f"lease {one}")
    await board.release(tok1)
    _, tok2 = await claimed(board, "t1", "A")
    _, tok3 = await claimed(board, "t2", "A")
    expect(len({tok1, tok2, tok3}) == 3, f"tokens repeat: {tok1}, {tok2}, {tok3}")
    stored = await board.get("t1")
    expect(
        stored is not None and stored.lease is not None and stored.lease.token == tok2,
        f"the stored claim must carry the token returned, got {stored}",
    )


async def concurrent_claim_one_winner(board: ClockedBoard, clock: FakeClock) -> None:
    await board.post("t1")
    owners = [f"agent-{i}" for i in range(12)]
    race = await concurrent_claim(board, "t1", owners, REQUEST)
    expect(race.exactly_one, f"exactly one claim may win, got {[t.owner for t in race.winners]}")
    expect(len(race.refused) == len(owners) - 1, f"the others must be refused: {race.refused}")
    expect(
        all(isinstance(e, AlreadyClaimedError) for _, e in race.refused),
        f"losers must see AlreadyClaimedError, got {race.refused}",
    )
    stored = await board.get("t1")
    expect(stored == race.winners[0], f"the stored task {stored} is not the winner's")
    expect(check(await board.snapshot()) == (), "the board breaks an invariant after the race")


async def release_by_token_only(board: ClockedBoard, clock: FakeClock) -> None:
    await board.post("t1")
    _, first = await claimed(board, "t1", "A")
    await refused("a forged token", board.release("forged-" + first), StaleTokenError)
    released = await board.release(first)
    expect(
        (released.status, released.owner, released.lease) == (Status.OPEN, "", None),
        f"a released task must be open and unowned, got {released}",
    )
    # The same owner name again: only the token tells the two claims apart.
    _, second = await claimed(board, "t1", "A")
    await refused("a late release with the old token", board.release(first), StaleTokenError)
    await refused("a claim of a held task", board.claim("t1", "B", REQUEST), AlreadyClaimedError)
    stored = await board.get("t1")
    expect(
        stored is not None and stored.lease is not None and stored.lease.token == second,
        f"the late release freed the new claim: {stored}",
    )


async def complete_by_token_only(board: ClockedBoard, clock: FakeClock) -> None:
    await board.post("t1")
    _, first = await claimed(board, "t1", "A")
    await board.release(first)
    _, token = await claimed(board, "t1", "A")
    await refused("complete with a forged token", board.complete("x" + token, "r"), StaleTokenError)
    await refused(
        "complete with the old token of the same owner", board.complete(first), StaleTokenError
    )
    await refused("fail with the old token of the same owner", board.fail(first), StaleTokenError)
    done = await board.complete(token, "result")
    expect(
        (done.status, done.owner, done.lease, done.result) == (Status.DONE, "", None, "result"),
        f"a completed task is DONE, unowned, with its result; got {done}",
    )
    await refused("a second complete", board.complete(token, "again"), StaleTokenError)
    await refused("fail after complete", board.fail(token, "late"), StaleTokenError)
    await refused("a claim of a done task", board.claim("t1", "B", REQUEST), FinishedError)
    await refused("cancel of a done task", board.cancel("t1"), FinishedError)


async def failed_is_not_terminal(board: ClockedBoard, clock: FakeClock) -> None:
    await board.post("t1")
    _, first = await claimed(board, "t1", "A")
    failed = await board.fail(first, "boom")
    expect(
        (failed.status, failed.owner, failed.lease, failed.result)
        == (Status.FAILED, "", None, "boom"),
        f"a failed task is FAILED, unowned, with the reason; got {failed}",
    )
    expect(not failed.status.terminal, "FAILED must not be terminal")
    await refused("complete with the failed claim's token", board.complete(first), StaleTokenError)
    again, second = await claimed(board, "t1", "B")
    expect(second != first and again.attempts == 2, f"a retry is a new claim: {again}")
    await board.complete(second, "ok")


async def dependencies_gate_claims(board: ClockedBoard, clock: FakeClock) -> None:
    await board.post("a")
    await board.post("b", ["a"])
    await refused(
        "a dependency that does not exist", board.post("c", ["zz"]), UnknownDependencyError
    )
    await refused("a duplicate id", board.post("a"), DuplicateTaskError)
    await refused(
        "a claim before its dependency is done", board.claim("b", "B", REQUEST), BlockedError
    )
    _, tok = await claimed(board, "a", "A")
    await board.fail(tok, "first try")
    await refused(
        "a claim while the dependency FAILED", board.claim("b", "B", REQUEST), BlockedError
    )
    _, tok = await claimed(board, "a", "A")
    await board.complete(tok, "ok")
    await claimed(board, "b", "B")


async def expired_claim_taken_over(board: ClockedBoard, clock: FakeClock) -> None:
    await board.post("t1")
    _, old = await claimed(board, "t1", "A")
    clock.advance(TTL - 1)
    err = await refused(
        "a claim before expiry", board.claim("t1", "B", REQUEST), AlreadyClaimedError
    )
    expect(isinstance(err, AlreadyClaimedError) and err.owner == "A", f"refusal names A: {err}")
    renewed = await board.renew(old, REQUEST)
    expect(
        renewed.lease is not None
        and renewed.lease.token == old
        and renewed.lease.expires_at == clock.now() + TTL,
        f"renew must extend and keep the token, got {renewed}",
    )
    clock.advance(TTL - 1)
    await refused(
        "a claim before the renewed expiry", board.claim("t1", "B", REQUEST), AlreadyClaimedError
    )
    clock.advance(1)
    await refused("complete after expiry", board.complete(old), LeaseExpiredError)
    _, new = await claimed(board, "t1", "B")
    expect(new != old, "a take-over must mint a new token")
    await refused("complete by the old holder", board.complete(old), StaleTokenError)
    await refused("release by the old holder", board.release(old), StaleTokenError)
    await refused("renew by the old holder", board.renew(old, REQUEST), StaleTokenError)
    await board.complete(new, "B did it")


async def seed_and_check_invariants(board: ClockedBoard, clock: FakeClock) -> None:
    now = clock.now()
    seeded = (
        Task("a", Status.DONE, result="ok", attempts=1),
        Task("b", Status.CLAIMED, ("a",), "p", "B", Lease("tok-b", "B", now + TTL), attempts=1),
        Task("c", Status.FAILED, ("a",), result="boom", attempts=2),
        Task("d", Status.OPEN, ("b", "c")),
        Task("e", Status.CANCELLED),
    )
    await board.seed(seeded)
    snap = await board.snapshot()
    expect(snap.tasks == seeded, f"seed must install the tasks verbatim, in order: {snap.tasks}")
    expect(check(snap) == (), f"a sound seed reports violations: {check(snap)}")
    bad = (Task("x", Status.CLAIMED), Task("y", Status.DONE, owner="Y"))
    await refused("a seed breaking invariants", board.seed(bad), InvariantError)
    expect((await board.snapshot()).tasks == seeded, "a refused seed changed the board")
    await refused("release by a token never minted here", board.release("tok-x"), StaleTokenError)
    await board.complete("tok-b", "seeded claim completes")
    _, tok = await claimed(board, "c", "C")
    await refused("cancel of a live claim", board.cancel("c"), AlreadyClaimedError)
    await board.release(tok)
    cancelled = await board.cancel("c")
    expect(cancelled.status is Status.CANCELLED and not cancelled.owner, f"cancel: {cancelled}")
    await refused("a claim of a cancelled task", board.claim("c", "C", REQUEST), FinishedError)
    expect(check(await board.snapshot()) == (), "operations broke an invariant")


CASES: tuple[Case, ...] = (
    Case("token_minted_by_store", token_minted_by_store),
    Case("concurrent_claim", concurrent_claim_one_winner),
    Case("release_by_token_only", release_by_token_only),
    Case("complete_by_token_only", complete_by_token_only),
    Case("failed_is_not_terminal", failed_is_not_terminal),
    Case("dependencies_gate_claims", dependencies_gate_claims),
    Case("expired_claim_taken_over", expired_claim_taken_over),
    Case("seed_and_check_invariants", seed_and_check_invariants),
)
