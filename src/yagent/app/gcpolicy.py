"""When the garbage collector's permanent generation takes what start-up built.

Guarantees:
- `freeze_once_open()` is for a host that runs one app per process (the `yagent` command's
  process entry). After it, every `open_app` calls `gc.freeze()` once the app is open, so the
  objects start-up left alive (≈ 80 000: modules, config, tool specs, the engine) are no longer
  walked by generation-2 collections — a full collection cost 30–50 ms about once in seven
  100-step runs; frozen, none came (docs/performance.md, "A full collection now and then").
- Without it (a library user, the tests opening many apps in one process) nothing is frozen:
  freezing would keep what each closed app leaves in reference cycles for the process's life.
Leaves to the host: calling it; nothing here unfreezes.
"""

from __future__ import annotations

import gc

_state = {"freeze": False}


def freeze_once_open() -> None:
    """Ask every app opened from now on in this process to freeze what start-up built."""
    _state["freeze"] = True


def opened() -> bool:
    """Called by `open_app` once the app is open: freezes when asked. True when it froze."""
    if not _state["freeze"]:
        return False
    gc.freeze()  # a performance hint: what start-up built is left out of every later full walk
    return True
