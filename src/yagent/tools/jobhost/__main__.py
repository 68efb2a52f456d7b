"""`python -I -c … serve --fd N` | `enter --socket PATH --log PATH -- ARGV…` (see the package):
exit 125 and a usage line for anything else."""

from __future__ import annotations

import sys

from yagent.tools.jobhost.client import enter, fail
from yagent.tools.jobhost.supervisor import serve


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "serve" and argv[1] == "--fd":
        serve(int(argv[2]))
        return 0
    shape = [argv[i] if i < len(argv) else "" for i in (0, 1, 3, 5)]
    if len(argv) > 6 and shape == ["enter", "--socket", "--log", "--"]:
        return enter(argv[2], argv[4], argv[6:])
    return fail("usage: jobhost serve --fd N | enter --socket PATH --log PATH -- ARGV...")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
