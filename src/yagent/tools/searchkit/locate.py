"""searchkit.locate: where ripgrep is.

Contract: `locate_rg()` looks, in order, for the `rg` the `ripgrep` wheel installs beside this
interpreter's scripts, then for `rg` on PATH; None when there is neither. Standard library only,
so `yagent doctor` reports ripgrep without importing the search machinery (`searchkit.rg` runs
it, `tools.search` is the tool).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rg:
    path: str
    source: str  # "ripgrep wheel" or "PATH"


def _wheel_dirs() -> list[str]:
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    with contextlib.suppress(KeyError):
        dirs.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    return [d for d in dirs if d]


def locate_rg(wheel_dirs: list[str] | None = None, search_path: str | None = None) -> Rg | None:
    """The wheel's `rg` first, then `rg` on PATH (`search_path` overrides `$PATH`)."""
    for directory in wheel_dirs if wheel_dirs is not None else _wheel_dirs():
        candidate = os.path.join(directory, "rg")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return Rg(candidate, "ripgrep wheel")
    found = shutil.which("rg", path=search_path)
    return Rg(found, "PATH") if found else None
