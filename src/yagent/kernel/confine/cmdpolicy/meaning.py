"""A command read by its meaning, not its spelling: how forbidden and prompt rules match.

Guarantees:
- `read(words)` gives a command's `Meaning`: its program (the basename of the first word; `git`
  with its subcommand), its options in canonical spelling and its operands. For a program in
  `programs.PROGRAMS`: clusters are split (`-rf` is `-r -f`), long options map to their short
  twin (`--recursive`, `--rec` and rm's `-R` are `-r`), `--opt=value` and `--opt value` alike,
  options that change no outcome are dropped (rm's `-f`, `-i`, `-v`), options count wherever
  they stand (GNU programs permute) until `--`, operands are a set (rsync's destination alone,
  mv's sources alone: `Program.kept`), a leading OWNER or MODE is one only when a path follows
  it (a rule `chown -R /` names every owner), a chmod MODE is compared by what it does
  (`modes`: `a+rwx`, `u=rwx,go=rwx` and `0777` are `777`; `777` does at least `o+w`), `git
  push +ref` is a forced push. Operands are read as paths by `operands` (lexical
  normalisation, `$HOME` as `~`, globs).
  `find P… -delete` also means `rm -r -f P…`, and `find P -exec … {}` gives `{}` as a glob of
  P's tree (`find_each`); `mkfs.ext4 …` also means `mkfs …`; `cp`, `install` and `tee`
  also mean `dd of=F` and `truncate F` of each file they write (`WRITERS`: tee's files, cp's
  last operand and a file in it, a file in `-t DIR`; a run-time destination is unknown). A
  program whose listing option is given (`Program.reads`: `fdisk -l`) or whose operands after
  the first only look (`Program.looks`: `parted DISK print`) has no operands to match.
  Other programs keep their words in order, each path-looking word (`/…`, `~…`, `./…`,
  `../…`) normalised.
- `covers(rule, command, where=…)` is DEFINITE when the command does at least what the rule
  names: the same program, every option of the rule among the command's, every operand of the
  rule reached by one of the command's (`operands.reaches`: the same path; for a deleting program
  given its recursive option, a path above it; a glob naming it or everything in it), operands
  placed where the host says (`operands.Where`: the working directory, the home directory, or
  unknown after a `cd`) and, when the host lets it look, also where their links lead now
  (`operands.on_disk`; a program that acts on a link itself — rm, mv — keeps a last component
  named without `/`). POSSIBLE when only a word known at run time (`$X`, `$(…)`, a glob used
  as an option), arguments `xargs` appends, or a link the line may make first
  (`Where.linked`) could make it so. NO otherwise.
Refuses nothing; reads no file but through `operands.on_disk` (see docs/security.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from yagent.kernel.confine.cmdpolicy import modes
from yagent.kernel.confine.cmdpolicy.expand import Field
from yagent.kernel.confine.cmdpolicy.model import Arg, basename
from yagent.kernel.confine.cmdpolicy.operands import (
    DEFINITE,
    NO,
    NOWHERE,
    POSSIBLE,
    UNKNOWN,
    Operand,
    Where,
    on_disk,
    path_operand,
    place,
    reaches,
    word_operand,
)
from yagent.kernel.confine.cmdpolicy.programs import PROGRAMS, Program

_FIND_LEADING = frozenset({"-H", "-L", "-P"})


@dataclass(frozen=True, slots=True)
class Meaning:
    program: str  # "rm", "git push"; "" when the program is known only at run time
    options: frozenset[str] = frozenset()
    leading: tuple[Operand, ...] = ()  # chmod's MODE, chown's OWNER
    operands: tuple[Operand, ...] = ()
    unsure: bool = False  # a run-time word where an option could stand, or an open tail
    open_tail: bool = False  # xargs appends words: operands too may come at run time
    table: Program | None = None
    also: tuple[Meaning, ...] = ()  # what the command means as well (find -delete: rm -r -f)
    maybe: bool = False  # this meaning holds only if run-time words make it (find / $X)

    def shown(self) -> str:
        words = [self.program, *sorted(self.options), *(o.shown for o in self.leading)]
        text = " ".join([*words, *(o.shown for o in self.operands)])
        return " = ".join((text, *(a.shown() for a in self.also)))


def program_of(word: str) -> str:
    """The program a command word names, as rules are grouped: its basename, `mkfs.*` as
    `mkfs` (each filesystem's maker is `mkfs -t` by another name)."""
    name = basename(word)
    return "mkfs" if name.startswith("mkfs.") else name


def read(words: Sequence[Arg], open_tail: bool = False) -> Meaning:
    """The meaning of one command's words (see the module contract)."""
    head = words[0].value if words else None
    if head is None:
        return Meaning("", unsure=True)
    name = basename(head)
    rest = tuple(words[1:])
    if name == "git" and rest:
        sub = rest[0].value
        if sub is None:
            return Meaning("git ?", unsure=True)
        if f"git {sub}" in PROGRAMS:
            name, rest = f"git {sub}", rest[1:]
    table = PROGRAMS.get(name)
    if table is None:
        operands = tuple(_generic(w) for w in rest)
        meaning = Meaning(name, operands=operands, unsure=open_tail, open_tail=open_tail)
        if name == "find":
            return Meaning(meaning.program, operands=meaning.operands, also=_find(rest))
        if name in WRITERS:  # cp x /etc/passwd writes /etc/passwd as `> /etc/passwd` does
            return Meaning(name, operands=operands, unsure=open_tail, also=_writes(name, rest))
        if program_of(name) != name:  # mkfs.ext4 … is also mkfs …
            also = Meaning(program_of(name), operands=operands, unsure=open_tail)
            return Meaning(name, operands=operands, unsure=open_tail, also=(also,))
        return meaning
    return _tabled(name, table, rest, open_tail)


def _tabled(name: str, table: Program, rest: tuple[Arg, ...], open_tail: bool) -> Meaning:
    options: set[str] = set()
    plain: list[Arg] = []
    unsure = open_tail
    i = 0
    ended = False
    while i < len(rest):
        word = rest[i]
        value = word.value
        i += 1
        if value is None:
            unsure = unsure or (not ended and _may_be_option(word))
            plain.append(word)
        elif ended or value == "-" or not value.startswith("-") or _is_mode(table, value, plain):
            plain.append(word)
        elif value == "--":
            ended = True
        elif value.startswith("--"):
            key, eq, _ = value[2:].partition("=")
            options.add(table.canonical(f"--{key}"))
            if table.takes_value(f"--{key}") and not eq:
                i += 1
        else:
            for j, ch in enumerate(value[1:], start=1):
                options.add(table.canonical(f"-{ch}"))
                if ch in table.short_value:
                    i += 0 if j + 1 < len(value) else 1
                    break
    if name == "git push" and any(w.value and w.value.startswith("+") for w in plain):
        options.add("-f")
        plain = [Arg.of(w.value[1:]) if w.value and w.value[0] == "+" else w for w in plain]
    options -= table.noise
    leading = 0 if options & table.no_leading else min(table.leading, max(len(plain) - 1, 0))
    heads = tuple(_leading(name, w) for w in plain[:leading])
    kept = plain[leading:]
    if len(kept) > 1 and table.kept == "last":
        kept = kept[-1:]
    elif len(kept) > 1 and table.kept == "sources" and table.target_option not in options:
        kept = kept[:-1]
    looking = table.looks and len(kept) > 1 and all(w.value in table.looks for w in kept[1:])
    if options & table.reads or looking:  # `fdisk -l /dev/sda`, `parted /dev/sda print`
        kept = []
    operands = tuple(_operand(table, w) for w in kept)
    return Meaning(name, frozenset(options), heads, operands, unsure, open_tail, table)


def _may_be_option(word: Arg) -> bool:
    """A run-time word that may expand to an option: it starts with `-`, a run-time part or a
    glob character (`*` may expand to a file named `-rf`)."""
    return any(f.text[:1] in ("", "-", "$", "`", "*", "?", "[") for f in word.expanded)


def _is_mode(table: Program, value: str, plain: list[Arg]) -> bool:
    """chmod reads `-w` as a MODE when no MODE came yet."""
    letters = table.mode_letters
    return bool(letters) and not plain and all(ch in letters for ch in value[1:].split(",")[0])


def _leading(name: str, word: Arg) -> Operand:
    if word.value is None:
        return UNKNOWN
    if name == "chmod" and modes.effect(word.value) is not None:
        return Operand("mode", word.value)
    return Operand("text", word.value)


def _operand(table: Program, word: Arg) -> Operand:
    if table.key_values:
        value = word.value
        if value is None:
            return UNKNOWN
        key, eq, path = value.partition("=")
        if eq and key in table.key_values:
            return Operand("text", f"{key}={path_operand(path).shown}")
        return Operand("text", value)
    return word_operand(word)


def _generic(word: Arg) -> Operand:
    value = word.value
    if value is not None and not value.startswith(("/", "~", "./", "../")):
        return Operand("text", value)
    return word_operand(word)


def _find_starts(rest: tuple[Arg, ...]) -> tuple[list[Arg], int]:
    """find's starting points (after -H/-L/-P) and where its expression begins."""
    i = 0
    while i < len(rest) and rest[i].value in _FIND_LEADING:
        i += 1
    starts: list[Arg] = []
    while i < len(rest) and not _find_expression(rest[i].value):
        starts.append(rest[i])
        i += 1
    return starts, i


def _find(rest: tuple[Arg, ...]) -> tuple[Meaning, ...]:
    """`find P… -delete` also means `rm -r -f P…` (whatever its tests keep)."""
    starts, i = _find_starts(rest)
    expression = [w.value for w in rest[i:]]
    if "-delete" not in expression and None not in expression:
        return ()
    operands = tuple(word_operand(w) for w in starts) or (path_operand("."),)
    rm = PROGRAMS["rm"]
    maybe = "-delete" not in expression
    return (Meaning("rm", frozenset({"-r", "-f"}), (), operands, table=rm, maybe=maybe),)


WRITERS = frozenset({"cp", "install", "tee"})
# Options of cp and install that take a value: short letters, long names (`-t` apart).
_COPY_VALUES = {
    "cp": ("S", ("suffix", "sparse", "no-preserve")),
    "install": ("mogS", ("mode", "owner", "group", "suffix", "strip-program")),
    "tee": ("", ()),
}


def _writes(name: str, rest: tuple[Arg, ...]) -> tuple[Meaning, ...]:
    """What a file writer writes, as `dd of=F` and `truncate F` (a write redirection's meaning):
    each of tee's files; cp's and install's destination — its last operand (or a file in it,
    when it is a directory), or a file in the `-t DIR` directory (`-t/etc`, `-at /etc`,
    `--target-directory=/etc`, `--target /etc`). A run-time word there is an unknown
    destination."""
    letters, names = _COPY_VALUES[name]
    targets: list[Arg] = []
    plain: list[Arg] = []
    i, ended = 0, False
    while i < len(rest):
        word, value = rest[i], rest[i].value
        i += 1
        if value is None or ended or value == "-" or not value.startswith("-"):
            plain.append(word)
        elif value == "--":
            ended = True
        elif value.startswith("--"):
            key, eq, given = value[2:].partition("=")
            names_dir = name != "tee" and bool(key) and "target-directory".startswith(key)
            if names_dir:
                taken = Arg.of(given) if eq else rest[i] if i < len(rest) else Arg(None, value)
                targets.append(_inside(taken))
            if (names_dir or key in names) and not eq:
                i += 1
        else:
            for j, ch in enumerate(value[1:], start=1):
                if (ch == "t" and name != "tee") or ch in letters:
                    tail = value[j + 1 :]
                    taken = Arg.of(tail) if tail else rest[i] if i < len(rest) else Arg(None, "")
                    i += 0 if tail else 1
                    if ch == "t":
                        targets.append(_inside(taken))
                    break
    if name == "tee":
        targets = [w for w in plain if w.value != "-"]
    elif not targets and len(plain) > 1:
        targets = [plain[-1], _inside(plain[-1])]  # the file itself, or one in that directory
    out: list[Meaning] = []
    for target in targets:
        out.append(read((Arg.of("dd"), Arg.of(f"of={target.value}") if target.value else target)))
        out.append(read((Arg.of("truncate"), target)))
    return tuple(out)


def _inside(directory: Arg) -> Arg:
    """A file `cp -t DIR` writes: one in DIR (unknown when DIR is)."""
    value = directory.value
    return directory if value is None else Arg.of(value.rstrip("/") + "/x")


def find_each(tail: tuple[Arg, ...]) -> Arg:
    """What `{}` stands for in `find P … -exec`: a path in P's tree (`P/**` as a glob), when
    find has one static starting point (-execdir runs elsewhere: known only at run time)."""
    starts, i = _find_starts(tail)
    start = starts[0].value if starts else "."
    if len(starts) > 1 or start is None or (i < len(tail) and tail[i].value is None):
        return Arg(None, "{}")
    pattern = "".join(f"[{ch}]" if ch in "*?[" else ch for ch in start)
    return Arg(None, "{}", (Field(f"{start}/**", glob=f"{pattern.rstrip('/')}/**"),))


def _find_expression(value: str | None) -> bool:
    return value is None or value.startswith("-") or value in ("(", "!", ",")


def covers(rule: Meaning, command: Meaning, *, above: bool = True, where: Where = NOWHERE) -> int:
    """DEFINITE, POSSIBLE or NO: does `command`, run `where`, do at least what `rule` names?
    `above=False` leaves out the paths above the rule's (a rule naming the very path is the
    better name)."""
    best = _covers(rule, command, above, where)
    for other in command.also:
        found = _covers(rule, other, above, where)
        found = POSSIBLE if other.maybe and found == DEFINITE else found
        best = found if found == DEFINITE or (found == POSSIBLE and best == NO) else best
    return best


def _covers(rule: Meaning, command: Meaning, above: bool, where: Where) -> int:
    if not command.program or (command.program == "git ?" and rule.program.split()[0] == "git"):
        return POSSIBLE
    if rule.program != command.program:
        return NO
    operands = tuple(place(o, where) for o in command.operands)
    if rule.table is None:
        wanted = tuple(place(o, where) for o in rule.operands)
        return _in_order(wanted, operands, command.unsure)
    table = command.table
    answers = [DEFINITE if rule.options <= command.options else _unsure(command)]
    deep = (
        above
        and table is not None
        and table.deletes
        and (not table.recursive or table.recursive in command.options)
    )
    for i, want in enumerate(rule.leading):
        have = command.leading[i] if i < len(command.leading) else None
        answers.append(_leading_reaches(have, want))
    operands += _where_they_lead(command, operands, where)
    for want in rule.operands:
        placed = place(want, where)
        resolved = None if _patterned(want) else on_disk(want, placed, where, True)
        wants = (placed,) if resolved is None else (placed, resolved)
        found = [reaches(have, w, deep) for have in operands for w in wants]
        if DEFINITE in found:
            answers.append(DEFINITE)
        else:
            answers.append(POSSIBLE if POSSIBLE in found or command.open_tail else NO)
    return NO if NO in answers else POSSIBLE if POSSIBLE in answers else DEFINITE


def _patterned(operand: Operand) -> bool:
    """A rule's path holding wildcards (`/dev/sd*`, `/etc/**`): it names paths, it is none."""
    return any(ch in segment for segment in operand.segments for ch in "*?[")


def _leading_reaches(have: Operand | None, want: Operand) -> int:
    if have is None:
        return POSSIBLE
    if have.kind == "mode" and want.kind == "mode":
        return DEFINITE if modes.covers(have.text, want.text) else NO
    return reaches(have, want, False)


def _where_they_lead(
    command: Meaning, placed_operands: tuple[Operand, ...], where: Where
) -> tuple[Operand, ...]:
    """The command's path operands (`placed_operands`: as placed) as the disk resolves them now
    (symbolic links followed), and an unknown one when the line may make links before it runs
    (`Where.linked`)."""
    if not where.disk and not where.linked:
        return ()
    follows = command.table is None or command.table.follows_last
    out: list[Operand] = []
    for operand, placed in zip(command.operands, placed_operands, strict=True):
        if where.linked and operand.kind in ("path", "glob") and operand.segments:
            out.append(UNKNOWN)
        resolved = on_disk(operand, placed, where, follows)
        if resolved is not None:
            out.append(resolved)
    return tuple(out)


def _unsure(command: Meaning) -> int:
    return POSSIBLE if command.unsure else NO


def _in_order(want: tuple[Operand, ...], have: tuple[Operand, ...], open_tail: bool) -> int:
    answer = DEFINITE
    for i, token in enumerate(want):
        if i >= len(have):
            return POSSIBLE if open_tail else NO
        found = reaches(have[i], token, False)
        if found == NO:
            return NO
        answer = max(answer, found)
    return answer
