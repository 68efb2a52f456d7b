"""git's global options: stripped before matching, judged for what they make git run.

Guarantees: `normalise_git` returns `git <subcommand …>` without the global options (`-C`,
`--git-dir`, `--no-pager`…), so a rule on `git status` matches `git -C sub status`. Options that
change what git executes (`-c`, `--config-env`, `--exec-path=`) are CONFIG signals; the value of
a `-c` key git runs as a command (core.pager, core.sshCommand, alias.* with `!`, …) is returned as
a script to judge. `-p` / `--paginate` are DYNAMIC signals: they run a pager even into a pipe,
and the repository's configuration chooses it. An option not in git's table is OPAQUE.
`--output` (or `--output=FILE`, and any abbreviation of it) before `--` makes git write a file:
a WRITE signal whatever the subcommand.
Leaves to the caller: judging the scripts and the normalised argv. Known limit: configuration
read from files (the repository's .git/config, ~/.gitconfig) is not visible here.
"""

from __future__ import annotations

import fnmatch

from yagent.kernel.confine.cmdpolicy.model import Arg, Signal, SignalKind

# git configuration keys whose value is a command git runs (alias/credential values with `!`).
_GIT_COMMAND_KEYS = (
    "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass",
    "sequence.editor", "diff.external", "diff.*.command", "diff.*.textconv", "difftool.*.cmd",
    "mergetool.*.cmd", "merge.*.driver", "filter.*.clean", "filter.*.smudge", "filter.*.process",
    "credential.helper", "credential.*.helper", "alias.*", "pager.*", "gpg.program",
    "gpg.*.program", "uploadpack.packobjectshook", "remote.*.uploadpack", "remote.*.receivepack",
    "sendemail.*cmd", "web.browser", "browser.*.cmd", "man.*.cmd",
)  # fmt: skip
_PAGINATE = frozenset({"-p", "--paginate"})
_OUTPUT = "--output"
_GIT_WITH_ARG = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})
_GIT_FLAGS = frozenset({
    "-P", "--no-pager", "--bare", "--no-replace-objects", "--literal-pathspecs",
    "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
    "--no-lazy-fetch", "--no-advice", "--super-prefix", "--list-cmds", "--html-path", "--exec-path",
    "--man-path", "--info-path", "--version", "--help",
})  # fmt: skip


def normalise_git(args: tuple[Arg, ...]) -> tuple[tuple[Arg, ...], list[Signal], list[Arg]]:
    """`git` with its global options stripped, the signals they raise and the scripts they set."""
    signals: list[Signal] = []
    scripts: list[Arg] = []
    i = 1
    while i < len(args):
        value = args[i].value
        if value is None or not value.startswith("-"):
            break
        key, eq, _ = value.partition("=")
        nxt = args[i + 1] if i + 1 < len(args) else Arg.of("")
        step = 1
        if value in ("-c", "--config-env") or value.startswith("-c"):
            setting = nxt if value in ("-c", "--config-env") else Arg.of(value[2:])
            step = 2 if value in ("-c", "--config-env") else 1
            signals.append(Signal(SignalKind.CONFIG, f"git {value} {setting.shown}"))
            if value != "--config-env":
                scripts.extend(_git_command_value(setting))
        elif key == "--config-env" or (key == "--exec-path" and eq):
            signals.append(Signal(SignalKind.CONFIG, f"git {value}"))
        elif value in _PAGINATE:
            signals.append(
                Signal(SignalKind.DYNAMIC, f"git {value} runs the pager the configuration names")
            )
        elif value in _GIT_WITH_ARG:
            step = 2
        elif key not in _GIT_WITH_ARG and key not in _GIT_FLAGS:
            signals.append(Signal(SignalKind.OPAQUE, f"git: option {value} not understood"))
        i += step
    return (args[0], *args[i:]), [*signals, *_writes(args[i:])], scripts


def _writes(rest: tuple[Arg, ...]) -> list[Signal]:
    """`--output[=FILE]` in a subcommand's options: git writes that file."""
    for arg in rest:
        if arg.value == "--":
            break
        key = (arg.value or "").partition("=")[0]
        if len(key) >= len("--out") and _OUTPUT.startswith(key):
            return [Signal(SignalKind.WRITE, f"git {arg.shown}: writes a file")]
    return []


def _git_command_value(setting: Arg) -> list[Arg]:
    if setting.value is None:
        return [Arg(None, setting.source)]
    key, _, value = setting.value.partition("=")
    if not any(fnmatch.fnmatchcase(key.lower(), p) for p in _GIT_COMMAND_KEYS):
        return []
    return [Arg.of(value[1:] if value.startswith("!") else value)]
