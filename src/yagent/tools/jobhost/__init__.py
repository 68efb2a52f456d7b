"""The session sandbox's supervisor (inside the sandbox) and the client a foreground command runs
through (on the host): `python -I`, standard library only.

Layout: `wire` (JSON lines and fds over the unix socket), `supervisor` (`serve`: starts, relays,
ends and lists the session's runs and jobs), `client` (`enter`: one foreground command), and
`__main__` (`serve --fd N` | `enter --socket PATH --log PATH -- ARGV…`).

Guarantees: `argv(*words)` is how a host runs it — `python -I -c …` with yagent's own source root
(the directory holding this `yagent` package) put first on the path when the interpreter does not
already have it: nothing from the environment (`PYTHONPATH`) or the working directory (the
workspace) is imported ahead of it, and the code run is the code of the running yagent.
"""

from __future__ import annotations

import sys
from pathlib import Path

SOURCE_ROOT = str(Path(__file__).resolve().parents[3])
_BOOT = (
    "import sys; root = sys.argv.pop(1); root in sys.path or sys.path.insert(0, root); "
    "from yagent.tools.jobhost.__main__ import main; sys.exit(main(sys.argv[1:]))"
)


def argv(*words: str) -> list[str]:
    """The argv that runs `__main__.main(words)` (see the package contract)."""
    return [sys.executable, "-I", "-c", _BOOT, SOURCE_ROOT, *words]
