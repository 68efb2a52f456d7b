"""pii: value-level detection and redaction of personal data, per output surface.

Contract:
- Detects Chinese mainland mobile numbers, resident ID numbers (GB 11643: province, real birth
  date, MOD 11-2 check digit), bank cards (Luhn) and e-mail addresses — validated, so a wrong
  check digit or an impossible date is not a finding (see `detect`). Fullwidth forms are folded
  (NFKC) before detection and the original characters are masked; IDN e-mail addresses count.
- The only redacting entry points are `apply(text, surface)` and `apply_value(obj, surface)`:
  the surface (MODEL, LOG, DISPLAY) is always explicit and picks the action (off / mask / block)
  from one policy snapshot. `block` returns `Result(blocked=True, value=None, findings=...)`,
  never a silent mask; `Result.unwrap()` raises BlockedError for it.
- The runtime policy (action per surface, strength, kinds) is one object in a `PolicyStore`,
  swapped atomically with a unique monotonic generation, and subscribers are told after each
  landed swap; a raising subscriber does not undo it.
Leaves to the host: which surface a text is leaving through, and the policy values.
"""

from yagent.kernel.confine.pii.apply import (
    DEFAULT_STORE,
    MAX_DEPTH,
    BlockedError,
    KeyCollisionError,
    Result,
    TooDeepError,
    apply,
    apply_value,
    is_clean,
)
from yagent.kernel.confine.pii.detect import (
    ALL_KINDS,
    Finding,
    Kind,
    Strength,
    luhn,
    scan,
    valid_card,
    valid_id,
)
from yagent.kernel.confine.pii.policy import (
    Action,
    PiiError,
    Policy,
    PolicyError,
    PolicyGeneration,
    PolicyStore,
    ReentrantSwapError,
    StaleGenerationError,
    SubscriberFailure,
    Surface,
    Swapped,
)

__all__ = [
    "ALL_KINDS",
    "DEFAULT_STORE",
    "MAX_DEPTH",
    "Action",
    "BlockedError",
    "Finding",
    "KeyCollisionError",
    "Kind",
    "PiiError",
    "Policy",
    "PolicyError",
    "PolicyGeneration",
    "PolicyStore",
    "ReentrantSwapError",
    "Result",
    "StaleGenerationError",
    "Strength",
    "SubscriberFailure",
    "Surface",
    "Swapped",
    "TooDeepError",
    "apply",
    "apply_value",
    "is_clean",
    "luhn",
    "scan",
    "valid_card",
    "valid_id",
]
