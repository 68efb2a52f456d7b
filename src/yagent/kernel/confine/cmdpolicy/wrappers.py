"""Exec-style wrappers: what a command runs when its job is to run another command.

Guarantees: a recognised wrapper (by the basename of its static first word) yields the `Run`s it
executes — an argv (env, timeout, nice, nohup, stdbuf, time, command, exec, builtin, sudo, doas,
setsid, ionice, taskset, flock, unbuffer, coproc, busybox, toybox, xargs, find -exec/-execdir/
-ok/-okdir, watch -x) or a shell script to parse (sh/bash/zsh/… -c, a heredoc or here-string fed to
a shell, eval, trap actions, alias values, watch, parallel, su -c, flock -c, env -S). git's
global options are handled in `git`. A shell or `source` running a file only run time names
(`bash <(curl …)`, `. $F`) is DYNAMIC and UNCHECKABLE, like a shell reading a pipe; one the
line names statically is given as `Unwrapped.file`, for the caller to read (`scripts`).
Options are parsed from each tool's documented option table; an option not in the table is an
OPAQUE signal (the guess of where the command starts may be wrong, so the line cannot be allowed).
Privilege changes (sudo, doas, su) are PRIVILEGE signals; a shell that reads code nobody can see
(a pipe, a file, the terminal), eval and parallel input are DYNAMIC.
Leaves to the caller: judging the runs (recursively) and the wrapper's own argv when it is not
transparent (a shell running a script file, eval, alias, find, su without -c…).
"""

from __future__ import annotations

import contextlib
import shlex
from dataclasses import dataclass, field

from yagent.kernel.confine.cmdpolicy import meaning
from yagent.kernel.confine.cmdpolicy.model import Arg, Signal, SignalKind, Stdin


@dataclass(frozen=True, slots=True)
class Run:
    """Something a wrapper executes: an argv, or a script (`script.value` None: not static)."""

    argv: tuple[Arg, ...] = ()
    open_tail: bool = False
    script: Arg | None = None


@dataclass(frozen=True, slots=True)
class Unwrapped:
    runs: tuple[Run, ...]
    signals: tuple[Signal, ...] = ()
    assigned: tuple[tuple[str, Arg], ...] = ()  # NAME=VALUE words given to the command
    transparent: bool = True  # its own argv is judged only by rules written for it
    pass_stdin: bool = True
    file: Arg | None = None  # a script file it runs (`bash x.sh`, `. x.sh`), named statically


@dataclass(frozen=True, slots=True)
class Options:
    """One tool's option table."""

    flags: str = ""
    with_arg: str = ""
    attached: str = ""  # short options whose optional argument can only be attached
    long_flags: frozenset[str] = frozenset()
    long_with_arg: frozenset[str] = frozenset()
    numeric: bool = False  # `-10` is an option (nice)
    assignments: bool = False  # NAME=VALUE words may precede the command (env, sudo)
    operands: int = 0  # words between the options and the command (timeout's duration…)
    plus: bool = False  # `+o` style options (shells)


@dataclass(slots=True)
class Parsed:
    rest: tuple[Arg, ...] = ()
    seen: dict[str, Arg | None] = field(default_factory=dict)
    signals: list[Signal] = field(default_factory=list)
    assigned: list[tuple[str, Arg]] = field(default_factory=list)


def _opts(
    flags: str = "",
    with_arg: str = "",
    *,
    lf: str = "",
    la: str = "",
    attached: str = "",
    numeric: bool = False,
    assignments: bool = False,
    operands: int = 0,
    plus: bool = False,
) -> Options:
    long_flags, long_with_arg = frozenset(lf.split()), frozenset(la.split())
    return Options(
        flags, with_arg, attached, long_flags, long_with_arg, numeric, assignments, operands, plus
    )


_SUDO_LONG = (
    "askpass background preserve-env set-home login remove-timestamp reset-timestamp list "
    "non-interactive preserve-groups stdin shell validate version edit"
)
_SUDO_ARG = "close-from chdir group host prompt chroot role type command-timeout other-user user"
_XARGS_LONG = "null interactive no-run-if-empty verbose exit show-limits open-tty"
_XARGS_ARG = (
    "arg-file delimiter eof max-lines max-args max-procs max-chars process-slot-var replace"
)
_WATCH_LONG = (
    "beep color no-color errexit chgexit no-title exec precise no-wrap no-rerun differences"
)
_PARALLEL_LONG = (
    "pipe dry-run keep-order group ungroup line-buffer verbose tag eta progress bar quote "
    "no-notice halt-on-error null xargs"
)
_PARALLEL_ARG = (
    "jobs sshlogin sshloginfile arg-file delimiter colsep joblog results res tmpdir workdir wd "
    "timeout delay retries tagstring tag-string halt memfree load basefile return transfer-file "
    "env max-args max-replace-args max-lines max-chars block"
)
_SIMPLE: dict[str, Options] = {
    "env": _opts(
        "i0v", "uCSP", lf="ignore-environment null debug", la="unset chdir split-string",
        assignments=True,
    ),
    "timeout": _opts(
        "v", "sk", lf="foreground preserve-status verbose", la="signal kill-after", operands=1
    ),
    "nice": _opts("", "n", la="adjustment", numeric=True),
    "nohup": _opts(),
    "stdbuf": _opts("", "ioe", la="input output error"),
    "time": _opts("pavq", "of", lf="append verbose portability quiet", la="output format"),
    "command": _opts("pvV"),
    "exec": _opts("cl", "a"),
    "builtin": _opts(),
    "sudo": _opts("AbEHiKklnPSsVve", "CDghpRrTtUu", lf=_SUDO_LONG, la=_SUDO_ARG, assignments=True),
    "doas": _opts("ns", "uC"),
    "setsid": _opts("cfw", lf="ctty fork wait"),
    "ionice": _opts("t", "cnp", lf="ignore", la="class classdata pid pgid uid"),
    "taskset": _opts("ac", lf="all-tasks cpu-list", operands=1),
    "flock": _opts(
        "sxunoFe", "wEc", lf="shared exclusive unlock nonblock close no-fork verbose",
        la="timeout conflict-exit-code command", operands=1,
    ),
    "unbuffer": _opts("p"),
    "coproc": _opts(),
    "busybox": _opts(),
    "toybox": _opts(),
    "xargs": _opts("0prtxo", "adEILnPs", attached="eil", lf=_XARGS_LONG, la=_XARGS_ARG),
    "watch": _opts("bcegtxpwr", "nq", attached="d", lf=_WATCH_LONG, la="interval equexit"),
    "su": _opts(
        "lmpfP", "cgGsw", lf="login preserve-environment pty fast",
        la="command session-command group supp-group shell whitelist-environment",
    ),
    "parallel": _opts("0XkqumvtegrEh", "jSadInNLlPsC", lf=_PARALLEL_LONG, la=_PARALLEL_ARG),
}  # fmt: skip
_TRAP = _opts("lp")
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"})
_SHELL = _opts(
    "abcdefghijklmnpqrstuvwxyzABCDEFGHIJKLMNPQRSTUVWXYZ",
    "oO",
    lf="login noprofile norc posix restricted verbose version debugger dump-strings help "
    "noediting pretty-print dump-po-strings",
    la="rcfile init-file",
    plus=True,
)
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITES = frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
_PRIVILEGED = frozenset({"sudo", "doas", "su"})
_SPLITS = frozenset({"0", "d", "E", "e", "a", "L", "l", "null", "delimiter", "eof", "arg-file"})


def parse_options(name: str, spec: Options, args: tuple[Arg, ...]) -> Parsed:
    """Walk `args` (the words after the wrapper's name) through its option table."""
    out = Parsed()
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None:
            break
        if value == "--":
            i += 1
            break
        if spec.assignments and _is_assignment(value):
            variable, _, assigned = value.partition("=")
            out.assigned.append((variable, Arg(assigned, args[i].source)))
            i += 1
        elif value.startswith("--") and len(value) > 2:
            key, eq, attached = value[2:].partition("=")
            nxt = args[i + 1] if i + 1 < len(args) else None
            if key in spec.long_with_arg:
                out.seen[key] = Arg.of(attached) if eq else nxt
                i += 1 if eq else 2
            else:
                if key not in spec.long_flags:
                    out.signals.append(
                        Signal(SignalKind.OPAQUE, f"{name}: option --{key} not understood")
                    )
                out.seen[key] = None
                i += 1
        elif len(value) > 1 and (value[0] == "-" or (spec.plus and value[0] == "+")):
            if spec.numeric and value[1:].isdigit():
                i += 1
                continue
            i += _cluster(name, spec, value, args[i + 1] if i + 1 < len(args) else None, out)
        else:
            break
    rest = args[i:]
    return Parsed(rest[spec.operands :], out.seen, out.signals, out.assigned)


def _cluster(name: str, spec: Options, value: str, nxt: Arg | None, out: Parsed) -> int:
    """Parse `-abc`; returns how many words it used (1, or 2 when an argument follows)."""
    for j in range(1, len(value)):
        ch = value[j]
        if ch in spec.with_arg:
            if j + 1 < len(value):
                out.seen[ch] = Arg.of(value[j + 1 :])
                return 1
            out.seen[ch] = nxt
            return 2
        if ch in spec.attached:
            out.seen[ch] = Arg.of(value[j + 1 :])
            return 1
        if ch not in spec.flags:
            out.signals.append(Signal(SignalKind.OPAQUE, f"{name}: option -{ch} not understood"))
        out.seen[ch] = None
    return 1


def _is_assignment(word: str) -> bool:
    """env and sudo take any leading non-option word holding `=` as NAME=VALUE (any NAME)."""
    return "=" in word[1:] and not word.startswith("-")


def unwrap(name: str, args: tuple[Arg, ...], open_tail: bool, stdin: Stdin) -> Unwrapped | None:
    """What the wrapper `name` (args[0]'s basename) runs, or None when it is not a wrapper."""
    tail = args[1:]
    if name in SHELLS:
        return _shell(name, tail, open_tail, stdin)
    if name == "find":
        return _find(tail)
    if name in ("source", ".") and tail and tail[0].value is None:
        return _unseen(f"{name} runs a file known only at run time: {tail[0].source}")
    if name in ("source", ".") and tail:
        return Unwrapped((), transparent=False, file=tail[0])
    if name == "eval":
        return Unwrapped(
            (Run(script=_joined(tail)),),
            (Signal(SignalKind.DYNAMIC, "eval runs text as code"),),
            transparent=False,
        )
    if name == "trap":  # `trap ACTION SIGNAL…` runs ACTION later, as shell code
        parsed = parse_options(name, _TRAP, tail)
        listing = "l" in parsed.seen or "p" in parsed.seen or len(parsed.rest) < 2
        action = () if listing else (Run(script=parsed.rest[0]),)
        return Unwrapped(action, tuple(parsed.signals), transparent=False)
    if name == "alias":
        scripts = [_alias_value(a) for a in tail if a.value is None or "=" in a.value]
        return Unwrapped(tuple(Run(script=s) for s in scripts), transparent=False)
    spec = _SIMPLE.get(name)
    if spec is None:
        return None
    parsed = parse_options(name, spec, tail)
    signals = list(parsed.signals)
    if name in _PRIVILEGED:
        signals.append(Signal(SignalKind.PRIVILEGE, f"{name} runs as another user"))
    if name == "time" and ("o" in parsed.seen or "output" in parsed.seen):
        signals.append(Signal(SignalKind.WRITE, "time -o writes its report to a file"))
    if name == "sudo" and ("e" in parsed.seen or "edit" in parsed.seen):
        signals.append(Signal(SignalKind.WRITE, "sudo -e edits files"))
    runs, transparent = _runs(name, parsed, open_tail, signals, stdin)
    return Unwrapped(
        runs, tuple(signals), tuple(parsed.assigned), transparent, pass_stdin=name != "xargs"
    )


def _runs(
    name: str, parsed: Parsed, open_tail: bool, signals: list[Signal], stdin: Stdin
) -> tuple[tuple[Run, ...], bool]:
    rest, seen = parsed.rest, parsed.seen
    if name == "command" and ("v" in seen or "V" in seen):
        return (), False  # a lookup, not an execution
    if name == "env" and ("S" in seen or "split-string" in seen):
        split = seen.get("S") or seen.get("split-string")
        return (Run(script=_joined((split or Arg(None, "-S"), *rest))),), True
    if name in ("su", "flock"):
        # Both permute their arguments (getopt), so -c may follow the user or the lock file.
        script = seen.get("c") or seen.get("command") or _late_command(rest)
        if script is not None or "c" in seen or "command" in seen:
            return (Run(script=script or Arg(None, "-c")),), name != "su"
    if name == "su":
        return (), False
    if name == "watch" and not ("x" in seen or "exec" in seen):
        return ((Run(script=_joined(rest)),) if rest else ()), True
    if name == "parallel":
        detail = "parallel splices its input into shell code"
        signals.append(Signal(SignalKind.DYNAMIC, detail))
        signals.append(
            Signal(SignalKind.UNCHECKABLE, f"the forbidden rules cannot see it: {detail}")
        )
        cut = next(
            (i for i, a in enumerate(rest) if a.value in (":::", "::::", ":::+", "::::+")),
            len(rest),
        )
        return ((Run(script=_joined(rest[:cut])),) if cut else ()), False
    if name == "xargs":
        return _xargs(rest, seen, stdin), True
    return ((Run(rest, open_tail),) if rest else ()), True


def _late_command(rest: tuple[Arg, ...]) -> Arg | None:
    for i, word in enumerate(rest):
        if word.value in ("-c", "--command"):
            return rest[i + 1] if i + 1 < len(rest) else Arg(None, "-c")
        if word.value is not None and word.value.startswith("--command="):
            return Arg.of(word.value.partition("=")[2])
    return None


def _xargs(rest: tuple[Arg, ...], seen: dict[str, Arg | None], stdin: Stdin) -> tuple[Run, ...]:
    """What xargs runs: the command with an open tail (its input appended at run time). The
    words of a here-string or heredoc it reads are appended too (default splitting only); the
    tail stays open, since another redirection on the line may be its input instead."""
    replace: str | None = None
    if "I" in seen or "replace" in seen:
        marker = seen.get("I") or seen.get("replace")
        replace = marker.value if marker is not None and marker.value else "{}"
    elif "i" in seen:
        replace = (seen["i"].value if seen["i"] is not None else None) or "{}"
    argv = rest or (Arg.of("echo"),)
    if replace is not None:
        argv = tuple(Arg(None, a.source) if a.value and replace in a.value else a for a in argv)
        return (Run(argv, open_tail=False),)
    if len(stdin.scripts) == 1 and stdin.scripts[0] is not None and not seen.keys() & _SPLITS:
        # a quoting xargs would refuse too appends nothing; the open tail still stands
        with contextlib.suppress(ValueError):
            argv += tuple(Arg.of(word) for word in shlex.split(stdin.scripts[0]))
    return (Run(argv, open_tail=True),)


def _shell(name: str, tail: tuple[Arg, ...], open_tail: bool, stdin: Stdin) -> Unwrapped:
    parsed = parse_options(name, _SHELL, tail)
    rest = parsed.rest[1:] if parsed.rest[:1] and parsed.rest[0].value == "-" else parsed.rest
    if "c" in parsed.seen:
        script = rest[0] if rest else None
        return Unwrapped(() if script is None else (Run(script=script),))
    if rest and "s" not in parsed.seen:
        if rest[0].value is None:  # `bash <(curl …)`, `bash $F`: a file only run time names
            return _unseen(f"{name} runs a script file known only at run time: {rest[0].source}")
        return Unwrapped((), transparent=False, file=rest[0])  # a file the line does not show
    if stdin.scripts and not open_tail:
        return Unwrapped(tuple(Run(script=Arg(s, s or "<heredoc>")) for s in stdin.scripts))
    return _unseen(f"{name} reads its code from stdin, a pipe or a terminal")


def _unseen(detail: str) -> Unwrapped:
    """Code nobody can see before it runs: DYNAMIC, and no forbidden rule can be checked."""
    unseen = Signal(SignalKind.UNCHECKABLE, f"the forbidden rules cannot see it: {detail}")
    return Unwrapped((), (Signal(SignalKind.DYNAMIC, detail), unseen), transparent=False)


def _find(tail: tuple[Arg, ...]) -> Unwrapped:
    runs: list[Run] = []
    signals: list[Signal] = []
    found = meaning.find_each(tail)
    i = 0
    while i < len(tail):
        value = tail[i].value
        if value in _FIND_WRITES:
            signals.append(Signal(SignalKind.WRITE, f"find {value}"))
        if value in _FIND_EXEC:
            end = next(
                (j for j in range(i + 1, len(tail)) if tail[j].value in (";", "+")), len(tail)
            )
            each = found if value in ("-exec", "-ok") else Arg(None, "{}")
            argv = tuple(
                (each if a.value == "{}" else Arg(None, a.source))
                if a.value and "{}" in a.value
                else a
                for a in tail[i + 1 : end]
            )
            if argv:
                runs.append(Run(argv))
            i = end
        i += 1
    return Unwrapped(tuple(runs), tuple(signals), transparent=False)


def _alias_value(word: Arg) -> Arg:
    if word.value is None:
        return Arg(None, word.source)
    return Arg.of(word.value.split("=", 1)[1])


def _joined(words: tuple[Arg, ...]) -> Arg:
    """Words that a tool joins with spaces and hands to a shell."""
    source = " ".join(a.source for a in words)
    if any(a.value is None for a in words):
        return Arg(None, source)
    return Arg(" ".join(a.value or "" for a in words), source)
