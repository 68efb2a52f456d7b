"""When the garbage collector runs in a one-app process, and what its permanent generation takes.

Guarantees:
- `hold_until_open()` is for a host that runs one command, and at most one app, per process (the
  `yagent` command's process entry). From then on no collection runs until the start-up is over:
  until the app is open (`opened()`, called by `open_app`) or, for a command that opens none,
  until `release()` (once the command's module is imported). Start-up allocates hundreds of
  thousands of objects that all stay alive (modules, classes, the configuration, the tool specs,
  the engine): the ≈ 190 collections it triggered walked them for nothing (≈ 40 ms CPU before a
  run's first model request, ≈ 14 ms of `doctor`; docs/performance.md, "Seventh pass").
- At the end of the hold, `gc.freeze()` moves what start-up built into the permanent generation
  and collection resumes: no later full collection walks those objects again (a full collection
  cost 30–50 ms about once in seven 100-step runs; frozen, none came — "A full collection now and
  then"). Every app opened later in the process freezes again (`opened()`).
- Without it (a library user, the tests opening many apps in one process) nothing is held or
  frozen: freezing would keep what each closed app leaves in reference cycles for the process's
  life.
Leaves to the host: calling it, and calling `release()` where a command that opens no app begins
its work; nothing here unfreezes.
"""

from __future__ import annotations

import gc

_state = {"freeze": False, "held": False}


def hold_until_open() -> None:
    """No collection until the app is open or `release()`; freeze what start-up built then."""
    _state["freeze"] = True
    _state["held"] = True
    gc.disable()


def release() -> None:
    """End the hold (if any): freeze what start-up built, then let the collector run again."""
    if _state["held"]:
        _state["held"] = False
        gc.freeze()
        gc.enable()


def opened() -> bool:
    """Called by `open_app` once the app is open: freezes (and ends the hold) when asked. True
    when it froze."""
    if not _state["freeze"]:
        return False
    gc.freeze()  # a performance hint: what start-up built is left out of every later full walk
    release()
    return True
