"""netguard check: scheme -> URL syntax -> name layer -> resolution -> every address.

Guarantees:
- `Guard.check(url, allow)` returns a `Checked` only when every layer passed; otherwise it raises
  the BlockedError of the first layer that refused. A name is resolved through the injected
  `Resolver` (default: `socket.getaddrinfo` in a worker thread) and is refused when ANY address it
  resolves to is blocked — one private answer taints the name, since the dial may pick it.
  Resolution that fails or answers nothing is refused (fail closed).
- `check_chain` judges a redirect chain hop by hop with the same rules; a refusal carries `hop`.
  `first_hop` may open the first URL only (e.g. a test server on loopback) without opening the
  hops it redirects to.
- Every judgement reads one policy snapshot; `Checked.generation` says which.
Leaves to the caller: the fetch itself. A check is a judgement at one instant: a name may resolve
differently when the client dials it (DNS rebinding), so fetches must go through the guarded
transport (`transport.py`), which repeats the judgement on the address actually dialled.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import ip_address
from typing import Protocol

import anyio.to_thread

from yagent.kernel.confine.netguard.addresses import AddrClass, IPAddress, classify
from yagent.kernel.confine.netguard.errors import (
    AddressBlockedError,
    BlockedError,
    NameBlockedError,
    Phase,
    ResolveBlockedError,
    URLBlockedError,
)
from yagent.kernel.confine.netguard.names import Target, classify_name, split_url
from yagent.kernel.confine.netguard.policy import DEFAULT_POLICY, STRICT, Allow, Policy, PolicyStore

MAX_HOPS = 10


class Resolver(Protocol):
    """Answers the addresses a host name resolves to (IP strings or ipaddress objects)."""

    async def resolve(self, host: str, port: int) -> Sequence[str | IPAddress]: ...


class SystemResolver:
    """`socket.getaddrinfo` in a worker thread; abandoned (not waited for) on cancellation."""

    async def resolve(self, host: str, port: int) -> Sequence[str | IPAddress]:
        infos = await anyio.to_thread.run_sync(
            lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM),
            abandon_on_cancel=True,
        )
        return [str(info[4][0]) for info in infos]


@dataclass(frozen=True, slots=True)
class Checked:
    """A URL that passed: its canonical target, every address judged, the policy generation."""

    url: str
    target: Target
    addresses: tuple[IPAddress, ...]
    generation: int


class Guard:
    """The judgement, bound to one resolver and one policy store."""

    def __init__(self, resolver: Resolver | None = None, policy: PolicyStore | None = None) -> None:
        self.resolver: Resolver = resolver or SystemResolver()
        self.policy = policy or DEFAULT_POLICY

    def screen(self, url: str, allow: Allow = STRICT, *, phase: Phase = Phase.CHECK) -> Target:
        """Scheme, syntax and name layer only: no resolution (cheap, synchronous)."""
        target = split_url(url, phase=phase)
        self.judge_name(target, allow, self.policy.snapshot().policy, phase=phase)
        if target.ip is not None:
            self.judge_address(target.ip, target, allow, phase=phase)
        return target

    def judge_name(self, target: Target, allow: Allow, policy: Policy, *, phase: Phase) -> None:
        """The name layer: extension lists and built-in name classes (no DNS)."""
        if policy.blocks(target.host):
            raise NameBlockedError(
                "blocked by policy extension list", target=target.host, phase=phase
            )
        if target.ip is not None:
            return
        cls = classify_name(target.host)
        if cls is None:
            return
        if cls is AddrClass.METADATA:
            raise NameBlockedError("cloud metadata name", target=target.host, phase=phase)
        if policy.allows(target.host) or cls in allow.opens(target.host, target.port):
            return
        raise NameBlockedError(f"{cls} name", target=target.host, phase=phase)

    def judge_address(self, ip: IPAddress, target: Target, allow: Allow, *, phase: Phase) -> None:
        found = classify(ip)
        if found is not None and found.cls not in allow.opens(target.host, target.port):
            raise AddressBlockedError(
                found.reason, target=target.host, address=str(ip), phase=phase
            )

    async def addresses(
        self, target: Target, allow: Allow, *, phase: Phase
    ) -> tuple[IPAddress, ...]:
        """Every address `target` resolves to, each judged; any blocked one refuses the name."""
        if target.ip is not None:
            self.judge_address(target.ip, target, allow, phase=phase)
            return (target.ip,)
        try:
            answers = await self.resolver.resolve(target.host, target.port)
        except BlockedError:
            raise
        except Exception as exc:
            raise ResolveBlockedError(
                f"resolution failed: {type(exc).__name__}", target=target.host, phase=phase
            ) from exc
        if not answers:
            raise ResolveBlockedError("resolved to no address", target=target.host, phase=phase)
        found: list[IPAddress] = []
        for answer in answers:
            try:
                ip = answer if not isinstance(answer, str) else ip_address(answer)
            except ValueError as exc:
                raise ResolveBlockedError(
                    f"resolver answered a non-address {answer!r}", target=target.host, phase=phase
                ) from exc
            self.judge_address(ip, target, allow, phase=phase)
            if ip not in found:
                found.append(ip)
        return tuple(found)

    async def check(self, url: str, allow: Allow = STRICT) -> Checked:
        snap = self.policy.snapshot()
        target = split_url(url)
        self.judge_name(target, allow, snap.policy, phase=Phase.CHECK)
        found = await self.addresses(target, allow, phase=Phase.CHECK)
        return Checked(url, target, found, snap.generation)

    async def check_chain(
        self,
        urls: Sequence[str],
        allow: Allow = STRICT,
        *,
        first_hop: Allow | None = None,
        max_hops: int = MAX_HOPS,
    ) -> tuple[Checked, ...]:
        """Judge the URL and every redirect target in order (absolute URLs)."""
        if isinstance(urls, str) or not urls:
            raise URLBlockedError("a chain is a non-empty sequence of URLs", target=str(urls))
        if len(urls) - 1 > max_hops:
            raise URLBlockedError(
                f"more than {max_hops} redirects", target=urls[max_hops + 1], hop=max_hops + 1
            )
        passed: list[Checked] = []
        for hop, url in enumerate(urls):
            opened = first_hop if hop == 0 and first_hop is not None else allow
            try:
                passed.append(await self.check(url, opened))
            except BlockedError as exc:
                exc.hop = hop
                raise
        return tuple(passed)


async def check(
    url: str,
    allow: Allow = STRICT,
    *,
    resolver: Resolver | None = None,
    policy: PolicyStore | None = None,
) -> Checked:
    """Judge one URL (see Guard.check)."""
    return await Guard(resolver, policy).check(url, allow)


async def check_chain(
    urls: Sequence[str],
    allow: Allow = STRICT,
    *,
    first_hop: Allow | None = None,
    resolver: Resolver | None = None,
    policy: PolicyStore | None = None,
    max_hops: int = MAX_HOPS,
) -> tuple[Checked, ...]:
    """Judge a redirect chain hop by hop (see Guard.check_chain)."""
    return await Guard(resolver, policy).check_chain(
        urls, allow, first_hop=first_hop, max_hops=max_hops
    )
