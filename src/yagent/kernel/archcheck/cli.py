"""Command line: `python -m yagent.kernel.archcheck [check] | docsync | pkgcov`.

Exit status: 0 clean, 1 violations / mismatches / failures, 2 the input cannot be used (policy
error, unreadable report, bad arguments).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path

from yagent.kernel.archcheck.docsync import run_docsync
from yagent.kernel.archcheck.gate import check_tree
from yagent.kernel.archcheck.pkgcov import run_pkgcov
from yagent.kernel.archcheck.policy import PolicyError, load_policy
from yagent.kernel.archcheck.report import render

POLICY_FILE = "architecture-policy.yaml"


def _check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m yagent.kernel.archcheck",
        description="Judge the tree against architecture-policy.yaml. "
        "Sub-commands: docsync (README kernel table vs code), pkgcov (per-package coverage).",
    )
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    parser.add_argument("--policy", type=Path, help=f"policy file (default: ROOT/{POLICY_FILE})")
    parser.add_argument("--report", action="store_true", help="list every finding")
    parser.add_argument(
        "--today", type=dt.date.fromisoformat, help="judge exceptions as of this date (YYYY-MM-DD)"
    )
    return parser


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def check(argv: Sequence[str]) -> int:
    args = _check_parser().parse_args(argv)
    root: Path = args.root
    policy_path: Path = args.policy or root / POLICY_FILE
    try:
        policy = load_policy(policy_path)
    except PolicyError as exc:
        print(f"archcheck: policy error in {exc.source}:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    report = check_tree(root, policy, _relative(policy_path, root), args.today)
    for line in render(report, full=args.report):
        print(line)
    return 0 if report.ok else 1


def docsync(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m yagent.kernel.archcheck docsync",
        description="Check README's kernel package table against the code.",
    )
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    parser.add_argument("--readme", default="README.md")
    parser.add_argument("--kernel-dir", default="src/yagent/kernel")
    args = parser.parse_args(argv)
    problems = run_docsync(args.root, readme=args.readme, kernel_dir=args.kernel_dir)
    for problem in problems:
        print(problem)
    if problems:
        print(f"docsync: {len(problems)} mismatch{'es' if len(problems) != 1 else ''}")
        return 1
    print("docsync: the kernel package table matches the code")
    return 0


def pkgcov(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m yagent.kernel.archcheck pkgcov",
        description="Per-package coverage floor from `coverage json` output.",
    )
    parser.add_argument("coverage_json", type=Path)
    parser.add_argument("--min", type=float, required=True, dest="minimum")
    parser.add_argument("--exempt", action="append", default=[], metavar="PKG=reason")
    args = parser.parse_args(argv)
    status, lines = run_pkgcov(args.coverage_json, args.minimum, args.exempt)
    for line in lines:
        print(line, file=sys.stderr if status == 2 else sys.stdout)
    return status


COMMANDS = {"check": check, "docsync": docsync, "pkgcov": pkgcov}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in COMMANDS:
        return COMMANDS[args[0]](args[1:])
    return check(args)
