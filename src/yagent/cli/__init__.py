"""The `yagent` command.

Until the agent issue lands this command only answers `--version` and `--help`; it never pretends
to run a task. Any other invocation exits with status 2 and says what is available.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from yagent import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yagent",
        description="yagent: a multi-agent coding agent for the terminal.",
        epilog="The agent commands (run, resume, sessions, doctor) arrive with the agent issue.",
    )
    parser.add_argument("--version", action="version", version=f"yagent {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        parser.print_help()
        return 0
    parser.parse_args(args)
    return 0  # pragma: no cover - argparse exits on every remaining form


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
