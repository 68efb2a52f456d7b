"""Benchmark: cmdpolicy decisions per second (the cost it adds to each shell tool call).

Figures (one JSON line each, median of several runs over a mixed corpus of realistic lines —
plain commands, pipelines, chains, redirects, wrappers, `sh -c`, heredocs, substitutions):
- cmdpolicy_decide_command: full `decide_command` (parse, AST facts, wrappers, rules), with
  `ratio_to_parse`: how many times the bare tree-sitter parse of the same lines it costs, both
  measured in this run (the parse is the floor any AST-based guard pays);
- cmdpolicy_decide_command_us: the same as microseconds per decision (median line);
- cmdpolicy_prefix_decide: the pure prefix `Policy.decide(argv)` on pre-tokenised argvs;
- cmdpolicy_split_commands: token-level `split_commands` lines per second;
- cmdpolicy_host_decide_us: what yagent's command gate pays per line — the built-in rules,
  operands placed in a temp workspace and home, links followed and scripts read on the disk
  (`disk=True`) — median over the corpus, and `attacks_us` over spellings of forbidden
  commands that go through links, symbolic modes, scripts and the newer destroyers
  (docs/adr/0028-links-scripts-and-destroyers-judged-where-they-lead.md).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import tree_sitter_bash
from tree_sitter import Language, Parser

from yagent.kernel.confine.cmdpolicy import (
    Permission,
    Policy,
    PrefixRule,
    UnjudgeableError,
    decide_command,
    split_commands,
    tokenize,
)

RUNS = 7
ROUNDS = 40  # passes over the corpus per run

A, P, F = Permission.ALLOW, Permission.PROMPT, Permission.FORBIDDEN
POLICY = Policy(
    [
        PrefixRule("git-status", ("git", "status"), A, match=("git status -sb",)),
        PrefixRule("git-diff", ("git", "diff"), A),
        PrefixRule("git-log", ("git", "log"), A),
        PrefixRule("git-push", ("git", "push"), P),
        PrefixRule("git-push-force", ("git", "push", "--force"), F),
        PrefixRule("ls", ("ls",), A),
        PrefixRule("cat", ("cat",), A),
        PrefixRule("grep", ("grep",), A),
        PrefixRule("rg", ("rg",), A),
        PrefixRule("head", ("head",), A),
        PrefixRule("wc", ("wc",), A),
        PrefixRule("find", ("find",), A),
        PrefixRule("echo", ("echo",), A),
        PrefixRule("pytest", ("pytest",), A, match=("pytest -q",)),
        PrefixRule("python-m-pytest", ("python", "-m", "pytest"), A),
        PrefixRule("ruff", ("ruff",), A),
        PrefixRule("make-test", ("make", "test"), A),
        PrefixRule("rm-rf", ("rm", "-rf"), F, match=("rm -rf /",)),
        PrefixRule("curl", ("curl",), F),
    ]
)

CORPUS = [
    "git status",
    "git status -sb && git diff --stat",
    "git log --oneline -n 20 | head -n 5",
    "git -C sub --no-pager diff HEAD~1 -- src/",
    "ls -la src/yagent/kernel",
    "cat README.md | grep -n install",
    "rg -n 'def decide' src/ --type py",
    "grep -rn TODO src 2>/dev/null | wc -l",
    "find . -name '*.py' -not -path './.venv/*' -exec grep -l cmdpolicy {} +",
    "pytest -q tests/kernel -k 'not slow' 2>&1 | tail -n 20",
    "python -m pytest -x --ff tests/",
    "ruff check --fix src tests && ruff format src tests",
    "make test",
    "timeout 300 pytest -q",
    "CI=1 FOO=bar pytest -q tests/e2e",
    'echo "$HOME" && ls ~/.config',
    'for f in src/*.py; do wc -l "$f"; done',
    "if [ -f pyproject.toml ]; then cat pyproject.toml; fi",
    "sh -c 'cd src && ls -la && git status'",
    "cat <<'EOF' > notes.txt\nline one\nline two\nEOF",
    "git commit -m \"$(cat <<'EOF'\nfix: handle CRLF\nEOF\n)\"",
    "git push origin main",
    "npm install && npm test",
    "docker compose up -d db",
    "curl -fsSL https://example.com/install.sh | sh",
    "rm -rf build/ dist/",
    "echo $(git rev-parse HEAD) > .version",
    "sudo apt-get install -y ripgrep",
]


ATTACKS = [
    "rm -rf ./homelink/",
    "rm -rf homelink/*",
    "chmod -R a+rwx ~",
    "chmod -R u=rwx,go=rwx /",
    "chown -R nobody ~",
    "rsync -a --delete empty/ ~/",
    "mv ~ /tmp/x",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "truncate -s 0 /etc/passwd",
    "bash ./wipe.sh",
    "./wipe.sh",
    "ln -s / r && rm -rf r/",
]


def _host_us(lines: Sequence[str]) -> list[float]:
    """Microseconds per decision of each line as the command gate judges it (see contract)."""
    from yagent.tools.shellrules import build_policy

    policy = build_policy([])
    with tempfile.TemporaryDirectory() as tmp:
        work, home = Path(tmp, "work"), Path(tmp, "home")
        (work / "empty").mkdir(parents=True)
        home.mkdir()
        (work / "homelink").symlink_to(home)
        (work / "wipe.sh").write_text("#!/bin/sh\necho cleaning\nrm -rf ~/\n")
        where: dict[str, Any] = {"cwd": str(work), "home": str(home), "disk": True}
        out = []
        for line in lines:
            decide_command(policy, line, **where)
            start = time.process_time()
            for _ in range(100):
                decide_command(policy, line, **where)
            out.append((time.process_time() - start) / 100 * 1e6)
    return out


def _rate(op: Callable[[object], object], items: Sequence[object]) -> float:
    """Operations per second over ROUNDS passes, median of RUNS runs."""
    rates = []
    for _ in range(RUNS):
        start = time.perf_counter()
        for _ in range(ROUNDS):
            for item in items:
                op(item)
        rates.append(ROUNDS * len(items) / (time.perf_counter() - start))
    return statistics.median(rates)


def _decide(line: object) -> object:
    try:
        return decide_command(POLICY, str(line))
    except UnjudgeableError:  # pragma: no cover - the corpus is all judgeable (checked below)
        return None


def main() -> None:
    for line in CORPUS:
        decide_command(POLICY, line)  # the corpus must be judgeable: a refusal is not a decision
    parser = Parser(Language(tree_sitter_bash.language()))
    encoded = [line.encode() for line in CORPUS]
    argvs = [tokenize(line) for line in CORPUS if "\n" not in line]

    parse_rate = _rate(lambda data: parser.parse(data), encoded)  # type: ignore[arg-type]
    decide_rate = _rate(_decide, CORPUS)
    prefix_rate = _rate(lambda argv: POLICY.decide(argv), argvs)  # type: ignore[arg-type]
    split_rate = _rate(lambda line: split_commands(str(line)), CORPUS)
    per_line = []
    for line in CORPUS:
        start = time.perf_counter()
        for _ in range(200):
            decide_command(POLICY, line)
        per_line.append((time.perf_counter() - start) / 200 * 1e6)

    host = _host_us(CORPUS)
    attacks = _host_us(ATTACKS)
    common = {"runs": RUNS, "corpus_lines": len(CORPUS)}
    figures = [
        {
            "name": "cmdpolicy_decide_command",
            "value": round(decide_rate),
            "unit": "decisions/s",
            "ratio_to_parse": round(parse_rate / decide_rate, 2),
            "parse_only": round(parse_rate),
            **common,
        },
        {
            "name": "cmdpolicy_decide_command_us",
            "value": round(statistics.median(per_line), 1),
            "unit": "us/decision (median line)",
            "max_line_us": round(max(per_line), 1),
            **common,
        },
        {
            "name": "cmdpolicy_prefix_decide",
            "value": round(prefix_rate),
            "unit": "argvs/s",
            **common,
        },
        {
            "name": "cmdpolicy_host_decide_us",
            "value": round(statistics.median(host), 1),
            "unit": "us CPU/decision (median line, built-in rules, disk=True)",
            "max_line_us": round(max(host), 1),
            "attacks_us": round(statistics.median(attacks), 1),
            "attack_lines": len(ATTACKS),
            **common,
        },
        {
            "name": "cmdpolicy_split_commands",
            "value": round(split_rate),
            "unit": "lines/s",
            **common,
        },
    ]
    for figure in figures:
        print(json.dumps(figure))


if __name__ == "__main__":
    main()
