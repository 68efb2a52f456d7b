"""`decide_command`: the whole line judged on its bash AST, strictest verdict wins.

Guarantees:
- Every command the line can run counts (see `syntax`): each is unwrapped through the exec-style
  wrappers (see `wrappers`) down to what it executes, inner scripts (`sh -c`, heredocs fed to a
  shell, eval, git -c command values…) are parsed and judged the same way, and each resulting argv
  is matched against the rules. The line's decision is the strictest of them.
- Facts the rules cannot see raise the floor to prompt: write redirections (`wrote`), dynamic code
  (`dynamic`: substitutions, run-time command names, eval, shells reading unseen code), privilege
  changes, environment steering, configuration overrides, path-qualified commands matched by
  basename, run-time arguments that could match a stricter rule, wrapper options not understood.
  A write redirection is also judged as writing its file (`dd of=FILE`, `truncate FILE`): a
  forbidden rule on those forbids it (`> /dev/sda`, `>> /etc/passwd`); a run-time target
  (`> "$F"`) that a `truncate` rule may cover makes the line UNCHECKABLE.
- `uncheckable` says whether the forbidden rules could be checked: it is set when a command name
  or code is known only at run time (`$a -rf /`, `$(echo rm) …`, `eval "$X"`, `sh -c "$X"`, a
  shell reading a pipe) or when a run-time word could make a forbidden rule match (`rm -rf $X`).
  Such a line is never run on a standing permission
  (docs/adr/0031-run-time-words-are-not-auto-approved.md); that is the host's to enforce.
- Restricting rules match a command by its meaning (see `meaning`, `rules`); a command decided by a
  rule it does not spell says how it was read (`CommandVerdict.meant`).
- When the host lets it look at the disk (`disk=True`), path operands are also judged where their
  symbolic links lead now (`operands.on_disk`), and a script file the line runs — by a shell, by
  `source`/`.`, or by its path when its `#!` names a shell — is read (`scripts`) and its lines
  judged as if typed there. A script that cannot be read, or that another command of the line
  names (it may write it first), and a line that may make links (`scripts.makes_links`) before
  a command whose operands could then lead to a forbidden target, are UNCHECKABLE: run-time
  facts (docs/adr/0028-links-scripts-and-destroyers-judged-where-they-lead.md).
- A line with no command at all gets the policy default.
- The `Verdict` also carries every command's words as read (`words`: wrappers and what they run,
  inner scripts included, brace fields and all) and every redirection's file (`targets`), for
  hosts that judge paths; rules never see these beyond the argv they match.
- Never allows what it cannot judge: a line over `MAX_LINE_BYTES`, an AST over `MAX_AST_NODES`
  (summed over inner scripts), inner scripts nested deeper than `MAX_NESTING`, a script whose
  substitutions, subshells, groups and quotes nest deeper than `MAX_SYNTAX_DEPTH`, or any parse
  error raises an `UnjudgeableError` (module-level seams, patched by tests).
Leaves to the host: asking the human on prompt, and what "forbidden" costs the caller.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from yagent.kernel.confine.cmdpolicy import git, meaning, operands, scripts, syntax, wrappers
from yagent.kernel.confine.cmdpolicy.errors import TooLargeError
from yagent.kernel.confine.cmdpolicy.model import (
    NO_STDIN,
    Arg,
    Permission,
    Signal,
    SignalKind,
    Stdin,
    basename,
)
from yagent.kernel.confine.cmdpolicy.rules import PrefixRule
from yagent.kernel.judge import invoke, toolfail

MAX_LINE_BYTES = 16 * 1024
MAX_AST_NODES = 20_000
MAX_NESTING = 8
# Substitutions, subshells, groups, quotes… nested in one script (see `nesting`): deeper lines are
# refused as unreadable before the AST is walked, so a line nested thousands deep stays cheap.
MAX_SYNTAX_DEPTH = 64
# Steering variables whose value is a command line the program runs: the value is judged too.
COMMAND_VALUED_ENV = ("*_COMMAND", "*PAGER", "*EDITOR", "VISUAL", "BROWSER", "*ASKPASS")


@dataclass(frozen=True, slots=True)
class CommandVerdict:
    """One command's judgement: its argv, decision, deciding rule and the wrappers it ran under."""

    argv: tuple[str, ...]
    decision: Permission
    rule: PrefixRule | None
    signals: tuple[Signal, ...] = ()
    via: tuple[str, ...] = ()
    exact: bool = True  # every word is static: `argv` is exactly what runs
    meant: str = ""  # how it was read, when a rule it does not spell decided it

    def describe(self) -> str:
        where = f" (via {' > '.join(self.via)})" if self.via else ""
        by = f"rule {self.rule.name!r}" if self.rule is not None else "the default"
        if self.meant:
            by += f" (read as {self.meant!r}: the same meaning)"
        why = (
            f": {self.rule.justification}"
            if self.rule is not None and self.rule.justification
            else ""
        )
        return f"{' '.join(self.argv)}{where} → {self.decision.value} by {by}{why}"


@dataclass(frozen=True, slots=True)
class Words:
    """The words of one command the line can run — a wrapper's own and each command it runs."""

    args: tuple[Arg, ...]
    open_tail: bool = False  # more arguments are appended at run time (xargs)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The line's judgement and the facts behind it."""

    line: str
    decision: Permission
    # the rules that set `decision` (empty when a floor or default did)
    rules: tuple[PrefixRule, ...]
    commands: tuple[CommandVerdict, ...]
    signals: tuple[Signal, ...]
    wrote: bool
    dynamic: bool
    words: tuple[Words, ...] = ()  # every command's words, inner scripts included
    targets: tuple[Arg, ...] = ()  # every file a redirection names

    @property
    def allowed(self) -> bool:
        return self.decision is Permission.ALLOW

    @property
    def uncheckable(self) -> tuple[Signal, ...]:
        """Why the forbidden rules cannot be checked before the line runs (empty: they were)."""
        every = (*self.signals, *(s for c in self.commands for s in c.signals))
        return tuple(dict.fromkeys(s for s in every if s.kind is SignalKind.UNCHECKABLE))

    def explain(self) -> str:
        lines = [f"{self.decision.value}: {self.line!r}"]
        if not self.commands:
            lines.append("  no command on the line: the policy default applies")
        lines.extend(f"  {c.describe()}" for c in self.commands)
        signals = [*self.signals, *(s for c in self.commands for s in c.signals)]
        if signals:
            lines.append("  signals (each floors the verdict at prompt):")
            lines.extend(f"    {s}" for s in signals)
        return "\n".join(lines)

    def to_invoke(self, stage: str = "cmdpolicy") -> invoke.Verdict:
        """This verdict in the judgement ring's vocabulary."""
        if self.decision is Permission.ALLOW:
            return invoke.Verdict.allow(stage=stage)
        if self.decision is Permission.PROMPT:
            return invoke.Verdict.prompt(self.explain(), stage=stage)
        return invoke.Verdict.deny(self.explain(), kind=toolfail.Kind.FORBIDDEN, stage=stage)


class RuleBook(Protocol):
    """What the judge asks of a rule set (`policy.Policy` is the one the kernel ships)."""

    @property
    def default(self) -> Permission: ...

    def judge_args(
        self,
        values: Sequence[str | None],
        open_tail: bool = False,
        words: Sequence[Arg] = (),
        where: operands.Where = operands.NOWHERE,
    ) -> tuple[Permission, PrefixRule | None, tuple[Signal, ...]]: ...

    def names(self, head: str) -> bool: ...

    def is_steering(self, variable: str) -> bool: ...


def decide_command(
    policy: RuleBook,
    line: str,
    *,
    cwd: str | None = None,
    home: str | None = None,
    disk: bool = False,
    readable: Callable[[str], bool] | None = None,
) -> Verdict:
    """Judge every command `line` can run; raises `UnjudgeableError` rather than guess.
    `cwd` and `home` (absolute), when the host gives them, place relative and `~` operands for
    the restricting rules (`operands.Where`); `disk` lets it follow links and read scripts in
    `cwd` that `readable` allows (`scripts`)."""
    size = len(line.encode("utf-8", "surrogatepass"))
    if size > MAX_LINE_BYTES:
        raise TooLargeError(f"the line is {size} bytes, over the {MAX_LINE_BYTES}-byte cap")
    judge = _Judge(policy, operands.Where(cwd, home, disk=disk, readable=readable))
    judge.script(line, (), 0)
    return judge.verdict(line)


class _Judge:
    __slots__ = (
        "_commands", "_files", "_makers", "_nodes", "_policy", "_signals", "_targets", "_where",
        "_words",
    )  # fmt: skip

    def __init__(self, policy: RuleBook, where: operands.Where) -> None:
        self._policy = policy
        self._where = where
        self._commands: list[CommandVerdict] = []
        self._signals: list[Signal] = []
        self._words: list[Words] = []
        self._targets: list[Arg] = []
        self._files: list[tuple[str, int]] = []  # script files read, and who ran each
        self._makers = 0  # commands that may make links (`scripts.makes_links`)
        self._nodes = 0

    def script(self, text: str, via: tuple[str, ...], depth: int) -> None:
        _check_depth(depth)
        facts = syntax.parse(text, MAX_AST_NODES - self._nodes, MAX_SYNTAX_DEPTH)
        self._nodes += facts.nodes
        if not self._where.moved and any(scripts.moves(inv.args) for inv in facts.invocations):
            # sticky, and set before any command is judged: a `cd` anywhere on the line may
            # run before any other command (functions, loops), so relative operands are unknown
            self._where = replace(self._where, moved=True)
        self._makers += sum(scripts.makes_links(i.args) for i in facts.invocations)
        if self._makers and not self._where.linked:
            self._where = replace(self._where, linked=True)  # sticky, like `moved`
        self._signals.extend(facts.signals)
        self._targets.extend(facts.targets)
        self._assigned(facts.assigned, "", via, depth)
        for inv in facts.invocations:
            self.invocation(inv.args, False, inv.stdin, via, depth)
        for target in facts.written:
            self._redirected(target, via)
        for inner in facts.scripts:
            self.script(inner, (*via, "`…`"), depth + 1)

    def _redirected(self, target: Arg, via: tuple[str, ...]) -> None:
        """A write redirection writes its file as `dd of=FILE` and `truncate FILE` do: a
        forbidden rule on those forbids it (`> /dev/sda`, `>> /etc/passwd`)."""
        path = target.value
        if path is None:  # a run-time target: asked as any write redirection is (ADR 0028, 8)
            return
        for argv in (("dd", f"of={path}"), ("truncate", path)):
            decision, rule, _ = self._policy.judge_args(argv, False, (), self._where)
            if decision is Permission.FORBIDDEN:
                args = tuple(map(Arg.of, argv))
                self._record(args, decision, rule, (), (*via, f"> {target.source}"))
                break

    def _assigned(
        self, pairs: Iterable[tuple[str, Arg]], by: str, via: tuple[str, ...], depth: int
    ) -> None:
        for name, value in pairs:
            if not self._policy.is_steering(name):
                continue
            self._signals.append(Signal(SignalKind.STEERING, f"{by}{name} is assigned"))
            if any(fnmatch.fnmatchcase(name, p) for p in COMMAND_VALUED_ENV):
                if value.value is None:
                    self._signals.extend(_unseen(f"{name}={value.source}"))
                else:
                    self.script(value.value, (*via, name), depth + 1)

    def invocation(
        self, args: tuple[Arg, ...], open_tail: bool, stdin: Stdin, via: tuple[str, ...], depth: int
    ) -> None:
        if not args:  # pragma: no cover - the grammar gives no command without a word
            return
        _check_depth(depth)
        self._words.append(Words(args, open_tail))
        head = args[0].value
        name = None if head is None else basename(head)
        unwrapped = None if name is None else wrappers.unwrap(name, args, open_tail, stdin)
        if unwrapped is None or name is None:
            if self._where.disk and head is not None and "/" in head:  # `./x.sh`
                self._file(args[0], head, True, via, depth)
            self.leaf(args, open_tail, via, depth)
            return
        if unwrapped.file is not None and self._where.disk:
            self._file(unwrapped.file, name, False, via, depth)
        self._signals.extend(unwrapped.signals)
        self._assigned(unwrapped.assigned, f"{name}: ", via, depth)
        if not unwrapped.transparent or not unwrapped.runs or self._policy.names(name):
            self.leaf(args, open_tail, via, depth)
        inner_via = (*via, name)
        inner_stdin = stdin if unwrapped.pass_stdin else NO_STDIN
        for run in unwrapped.runs:
            if run.script is None:
                self.invocation(run.argv, run.open_tail, inner_stdin, inner_via, depth + 1)
            elif run.script.value is None:
                self._signals.extend(
                    _unseen(f"{name} runs code known only at run time: {run.script.source}")
                )
            else:
                self.script(run.script.value, inner_via, depth + 1)

    def _file(self, word: Arg, name: str, direct: bool, via: tuple[str, ...], depth: int) -> None:
        """A script file the command runs, judged as if its lines were typed (`scripts`)."""
        if word.value is None:
            return  # `wrappers` said so already: UNCHECKABLE
        script = scripts.read(word, self._where, direct)
        if script is None:
            return  # a program that is not a shell, or a binary: out of reach, as `python3 x.py`
        if script.text is None:
            self._signals.extend(
                _unseen(f"{name} runs {script.path}, which cannot be read: {script.unreadable}")
            )
            return
        self._files.append((script.path, len(self._words) - 1))
        self.script(script.text, (*via, f"{name} {word.source}"), depth + 1)

    def _rewritten(self) -> list[Signal]:
        """Script files another command of the line names: it may write them before they run."""
        if not self._files:
            return []
        words = [w.args for w in self._words]
        found = scripts.rewritten(self._files, words, self._targets, self._where)
        return [s for path in found for s in _unseen(f"{path} runs after the line may write it")]

    def leaf(
        self, args: tuple[Arg, ...], open_tail: bool, via: tuple[str, ...], depth: int
    ) -> None:
        head = args[0].value
        if head is None:
            signals = _unseen(f"command name known only at run time: {args[0].source}")
            decision = Permission.strictest(self._policy.default, Permission.PROMPT)
            self._record(args, decision, None, signals, via)
            return
        extra: list[Signal] = []
        if basename(head) == "git":
            args, extra, inner = git.normalise_git(args)
            for script in inner:
                if script.value is None:
                    extra.extend(_unseen(f"git runs {script.source}"))
                else:
                    self.script(script.value, (*via, "git -c"), depth + 1)
        values = tuple(a.value for a in args)
        where = self._where
        if where.linked and self._makers == 1 and scripts.makes_links(args):
            where = replace(where, linked=False)  # the one link maker: its own operands are seen
        decision, rule, signals = self._policy.judge_args(values, open_tail, args, where)
        meant = ""
        if rule is not None and rule.verdict is not Permission.ALLOW:
            spelled = values[: len(rule.prefix)]
            if spelled != rule.prefix and (basename(head), *spelled[1:]) != rule.prefix:
                meant = meaning.read(args, open_tail).shown()
        self._record(args, decision, rule, (*extra, *signals), via, meant)

    def _record(
        self,
        args: tuple[Arg, ...],
        decision: Permission,
        rule: PrefixRule | None,
        signals: tuple[Signal, ...],
        via: tuple[str, ...],
        meant: str = "",
    ) -> None:
        argv = tuple(a.shown for a in args)
        exact = all(a.value is not None for a in args)
        self._commands.append(CommandVerdict(argv, decision, rule, signals, via, exact, meant))

    def verdict(self, line: str) -> Verdict:
        commands = tuple(self._commands)
        signals = tuple(dict.fromkeys((*self._signals, *self._rewritten())))
        every = [*signals, *(s for c in commands for s in c.signals)]
        if commands:
            decision = Permission.strictest(*(c.decision for c in commands))
        else:
            decision = self._policy.default
        if every:
            decision = Permission.strictest(decision, Permission.PROMPT)
        deciding = {
            c.rule.name: c.rule for c in commands if c.rule is not None and c.decision is decision
        }
        return Verdict(
            line=line,
            decision=decision,
            rules=tuple(deciding[n] for n in sorted(deciding)),
            commands=commands,
            signals=signals,
            wrote=any(s.kind is SignalKind.WRITE for s in every),
            dynamic=any(s.kind is SignalKind.DYNAMIC for s in every),
            words=tuple(self._words),
            targets=tuple(self._targets),
        )


def _unseen(detail: str) -> tuple[Signal, ...]:
    """Code or a command name known only at run time: dynamic, and no forbidden rule can see it."""
    return (
        Signal(SignalKind.DYNAMIC, detail),
        Signal(SignalKind.UNCHECKABLE, f"the forbidden rules cannot see it: {detail}"),
    )


def _check_depth(depth: int) -> None:
    if depth > MAX_NESTING:
        raise TooLargeError(f"inner scripts and wrappers nest deeper than {MAX_NESTING}")
