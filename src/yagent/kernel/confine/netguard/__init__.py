"""netguard: outbound URL guard against SSRF.

Contract:
- Only http/https; one strict reading of the URL (ambiguous forms are refused, not guessed).
- A name layer before resolution (localhost, local-network suffixes, metadata names, every
  non-canonical numeric spelling of an address, policy extension lists).
- Every resolved address judged (loopback, private, CGNAT, link-local, metadata, multicast,
  reserved, unspecified, broadcast, documentation, every IPv4-in-IPv6 embedding, tunnels);
  a name with ANY blocked address is refused; a failed resolution is refused.
- Redirect chains re-judged hop by hop (`check_chain`), and the judgement repeated at the dial
  against the real peer (`GuardedTransport` / `new_client`), closing the DNS-rebinding window.
- `Allow` is the one named opening for both layers, strict when empty; extension lists live in a
  `Policy` swapped atomically with a unique, monotonic generation (`PolicyStore`).
- Every refusal is a `BlockedError` subclass naming the layer, the phase and the reason.
Leaves to the host: what to fetch, response size and content handling, and which Allow to grant.
"""

from yagent.kernel.confine.netguard.addresses import (
    OPENABLE,
    AddrClass,
    Classification,
    IPAddress,
    classify,
)
from yagent.kernel.confine.netguard.check import (
    MAX_HOPS,
    Checked,
    Guard,
    Resolver,
    SystemResolver,
    check,
    check_chain,
)
from yagent.kernel.confine.netguard.errors import (
    AddressBlockedError,
    BlockedError,
    Layer,
    NameBlockedError,
    NetguardError,
    PeerBlockedError,
    Phase,
    PolicyError,
    ResolveBlockedError,
    SchemeBlockedError,
    StaleGenerationError,
    URLBlockedError,
)
from yagent.kernel.confine.netguard.names import Target, classify_name, split_url
from yagent.kernel.confine.netguard.policy import (
    DEFAULT_POLICY,
    STRICT,
    Allow,
    Policy,
    PolicyStore,
    VersionedPolicy,
)
from yagent.kernel.confine.netguard.transport import GuardedBackend, GuardedTransport, new_client

__all__ = [
    "DEFAULT_POLICY",
    "MAX_HOPS",
    "OPENABLE",
    "STRICT",
    "AddrClass",
    "AddressBlockedError",
    "Allow",
    "BlockedError",
    "Checked",
    "Classification",
    "Guard",
    "GuardedBackend",
    "GuardedTransport",
    "IPAddress",
    "Layer",
    "NameBlockedError",
    "NetguardError",
    "PeerBlockedError",
    "Phase",
    "Policy",
    "PolicyError",
    "PolicyStore",
    "ResolveBlockedError",
    "Resolver",
    "SchemeBlockedError",
    "StaleGenerationError",
    "SystemResolver",
    "Target",
    "URLBlockedError",
    "VersionedPolicy",
    "check",
    "check_chain",
    "classify",
    "classify_name",
    "new_client",
    "split_url",
]
