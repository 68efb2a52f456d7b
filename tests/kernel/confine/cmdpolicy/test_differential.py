"""Differential test against real bash: never allow a line bash would run differently.

bash runs each generated line with a PATH holding only `sh`/`bash`, so every other command is
"not found" and lands in `command_not_found_handle`, which reports the argv bash built (after all
quoting, expansion and line-continuation rules) and runs nothing. The policy allows a set of fake
command names and forbids `NAME -y`. Property: when `decide_command` allows a line, every argv
bash actually ran is allowed by the same rules. (A line the guard prompts on, forbids or refuses
is fine whatever bash does.) The regression lines are the grammar/bash disagreements this test
found: each was an allow before the fix.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yagent.kernel.confine.cmdpolicy import (
    Permission,
    Policy,
    PrefixRule,
    UnjudgeableError,
    decide_command,
)

BASH = "/usr/bin/bash" if Path("/usr/bin/bash").exists() else "/bin/bash"
_NAMES = ["aa", "bb", "cc", "dd", "ee", "ff", "gg", "ll", "mm ", "ss", "tt", "uu", "vv", "ww"]
POLICY = Policy(
    [PrefixRule(f"allow-{i}", (n,), Permission.ALLOW) for i, n in enumerate(_NAMES)]
    + [PrefixRule(f"forbid-{i}", (n, "-y"), Permission.FORBIDDEN) for i, n in enumerate(_NAMES)]
)
_HANDLER = (
    "command_not_found_handle() { local IFS=$'\\x1f'; printf '%s\\x1e' \"$*\" >&3; return 127; }\n"
    "export -f command_not_found_handle\n"
)


def bash_runs(line: str) -> list[tuple[str, ...]]:
    """The argvs bash tries to run for `line`; nothing outside sh/bash can actually run."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bin").mkdir()
        for shell in ("sh", "bash"):
            os.symlink(BASH, root / "bin" / shell)
        script = root / "line.sh"
        script.write_text(_HANDLER + line + "\nwait\n")
        out = root / "argv"
        proc = subprocess.Popen(
            [BASH, "--norc", "--noprofile", "-c", 'exec 3>"$1"; . "$0"', str(script), str(out)],
            cwd=root,
            env={"PATH": str(root / "bin")},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=10)
        finally:
            # Whatever the line started (background jobs, subshells) goes with it.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        data = out.read_text("utf-8", "replace") if out.exists() else ""
    return [tuple(record.split("\x1f")) for record in data.split("\x1e") if record]


def assert_sound(line: str) -> None:
    try:
        verdict = decide_command(POLICY, line)
    except UnjudgeableError:
        return
    if verdict.decision is not Permission.ALLOW:
        return
    for argv in bash_runs(line):
        assert POLICY.decide(argv).decision is Permission.ALLOW, (
            f"allowed {line!r}, but bash ran {argv!r}\n{verdict.explain()}"
        )


REGRESSIONS = [
    "ll\n\\tt -y",  # newline then an escaped word: the grammar glued it to `ll`
    "ll\n\\\ntt -y",  # newline, then a line continuation
    "ll #c \\\n\\\ntt -y",  # a comment's trailing backslash does not continue the line
    "ll >/dev/null -y",  # words after a redirection are arguments
    "ll 2>/dev/null tt -y",
    "aa | ll 2>/dev/null -y",  # …of the pipeline's last command
    "ll <<E -y\nb\nE",  # words after a heredoc operator
    "ll >/dev/null\n\\\ntt -y",  # a redirection's words do not cross a newline
    "ll <<ll\nll&&ll <<'F'\n$(tt -y)\nF\nll",  # a heredoc ends only at its own line
    "ll <<E\n`tt -y`\nE",  # backticks in an unquoted heredoc body
    "ll x ${X:-`tt -y`}",  # backticks in a parameter default
    "ll `\\\\tt -y`",  # backtick bodies are un-escaped before parsing
    "tt\r x",  # bash keeps a bare CR in the word: it runs `tt\r`
    "ll x\r",
    "ll '-'\\y",  # quoted and escaped parts touching: one word to bash, two to the grammar
    'll "-"\\y',
]


@pytest.mark.slow
@pytest.mark.parametrize("line", REGRESSIONS)
def test_regression_lines_are_sound(line: str) -> None:
    assert_sound(line)


_WORDS = [
    "aa", "ll", "\\tt", "'ss'", '"uu"', "v''v", "m\\ m", "$U", "t\\\nt", "g{g,}", "cc*",
    "$'tt'", "$'\\x74t'", "$'t\\164'", "$'\\u0074t'", "$'t\\0t'", "{t,a}t", "t{t..t}",
    "'l'\\l",
]  # fmt: skip
_ARGS = [
    "x", "-y", "'-y'", "\\-y", '"$V"', "$V", "\\;", "'&&'", "#c", "a=b", "\\\n", "\\\n-y",
    '"a\nb"', "$(ll -y)", "`tt -y`", "<(ss -y)", "\\\\", "$'\\n'", "{a,b}", "2>&1", ">/dev/null",
    "\r", "1", "$'-y'", "$'\\x2dy'", "{-y,x}", "{x,-y}", "-{y,}", "'-'\\y", "{x..z}",
]  # fmt: skip
_SEPARATORS = [";", "&&", "||", "|", "&", "\n", " ;\n", "\n\\\n", " \\\n", "|&", "\r\n", " #c\n"]
_FORMS = [
    "( {} )", "{{ {}; }}", "ll $({})", 'll "$({})"', "ll <({})", "if {}; then {}; fi",
    "for v in 1; do {}; done", "FN() {{ {}; }}; FN", "case a in a) {};; esac", "! {}", "X=$({})",
    "{} > /dev/null", "{} 2>&1", "ll <<E\n{}\nE", "ll <<'E'\n{}\nE", "ll `{}`",
    "sh -c '{}'", 'bash -c "{}"', "ll ${{X:-`{}`}}",
]  # fmt: skip


_FUNCTION_IDS = itertools.count()


@st.composite
def _simple(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(_WORDS))
    return " ".join([head, *draw(st.lists(st.sampled_from(_ARGS), max_size=3))])


def _lines(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _simple()
    inner = _lines(depth - 1)

    @st.composite
    def form(draw: st.DrawFn) -> str:
        template = draw(st.sampled_from(_FORMS))
        # Each function gets its own name: a body can then never call itself (no fork bombs).
        template = template.replace("FN", f"fn{next(_FUNCTION_IDS)}")
        return template.format(*[draw(inner) for _ in range(template.count("{}"))])

    statement = st.one_of(_simple(), form())

    @st.composite
    def sequence(draw: st.DrawFn) -> str:
        parts = draw(st.lists(statement, min_size=1, max_size=3))
        out = parts[0]
        for part in parts[1:]:
            out += draw(st.sampled_from(_SEPARATORS)) + part
        return out

    return sequence()


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_lines(2))
def test_allowed_lines_run_only_allowed_commands_in_bash(line: str) -> None:
    assert_sound(line)


@pytest.mark.slow
def test_harness_sees_what_bash_runs() -> None:
    # The oracle itself must work, or the property above would pass vacuously.
    assert bash_runs("aa x 'y z'; sh -c 'bb -y'; echo $(cc)") == [
        ("aa", "x", "y z"),
        ("bb", "-y"),
        ("cc",),
    ]
    assert POLICY.decide(("bb", "-y")).decision is Permission.FORBIDDEN
