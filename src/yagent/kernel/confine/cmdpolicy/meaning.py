"""A command read by its meaning, not its spelling: how forbidden and prompt rules match.

Guarantees:
- `read(words)` gives a command's `Meaning`: its program (the basename of the first word; `git`
  with its subcommand), its options in canonical spelling and its operands. For a program in
  `programs.PROGRAMS`: clusters are split (`-rf` is `-r -f`), long options map to their short
  twin (`--recursive` is `-r`, and `-R` is rm's `-r`), `--opt=value` and `--opt value` alike,
  options count wherever they stand (GNU programs permute) until `--`, operands are a set (order
  does not matter), a numeric chmod MODE loses its leading zeros (and `a=rwx`, `a+rwx` are `777`),
  `git push +ref` is a forced
  push. Every operand that is a path is normalised lexically: `//` → `/`, `.` segments and a
  trailing slash dropped, `..` resolved on the text (`/usr/..` is `/`), `$HOME`/`${HOME}` read as
  `~`. `find P… -delete` also means `rm -r -f P…`. Other programs keep their words in order, each
  path-looking word (`/…`, `~…`, `./…`, `../…`) normalised the same way.
- `covers(rule, command)` is DEFINITE when the command does at least what the rule names: the
  same program, every option of the rule among the command's, every operand of the rule reached by
  one of the command's — the same path; for a deleting program given its recursive option, a path
  above it (`/` holds everything); a glob that can name it or a directory above it (`/tmp/x/pre*`
  names `/tmp/x/precious`), or that names everything in it (`/*`, `/.*`, `~/*` stand for `/`, `~`).
  POSSIBLE when only a word known at run time (`$X`, `$(…)`, a glob used as an option) or
  arguments `xargs` appends could make it so. NO otherwise.
- Where the host says (`Where`): a relative operand is joined to the working directory and `~`
  to the home directory before comparing, so `rm -rf ../..` from `/home/u/ws` is `rm -rf /home`
  and `rm -rf /home/u` is `rm -rf ~`. On a line that may change directory (`cd`, `pushd`, `popd`,
  `env -C`: `Where.moved`) a relative operand is known only at run time.
Refuses nothing; reads no file. Lexical only: a symbolic link on the way is not followed (see
docs/security.md).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass

from yagent.kernel.confine.cmdpolicy.expand import Dynamic
from yagent.kernel.confine.cmdpolicy.model import Arg, basename
from yagent.kernel.confine.cmdpolicy.programs import PROGRAMS, Program

NO, DEFINITE, POSSIBLE = 0, 1, 2
_HOME = re.compile(r"(?:\$HOME|\$\{HOME\})(/[^$`]*)?\Z")
_WHOLE = re.compile(r"[*?]*\*[*?]*\Z|\.[*?]*\*[*?]*\Z|\.\[!\.\]\*\Z|\.\[\^\.\]\*\Z|\.\.\?\*\Z")
_FIND_LEADING = frozenset({"-H", "-L", "-P"})
# symbolic chmod modes that leave every permission bit of user, group and others set (`777`)
_EVERYONE_ALL = frozenset(
    f"{who}{op}{perms}"
    for who in ("a", "ugo", "uog", "ogu")
    for op in ("=", "+")
    for perms in ("rwx", "rxw", "wrx", "wxr", "xrw", "xwr")
)


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand: a path (`root` "/", "~" or "" for relative, and its segments), a glob (the
    same, segments being fnmatch patterns), plain text, or unknown (`kind` says which)."""

    kind: str  # "path" | "glob" | "text" | "unknown"
    text: str = ""
    root: str = ""
    segments: tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        if self.kind in ("path", "glob"):
            return _join(self.root, self.segments)
        return self.text


UNKNOWN = Operand("unknown", "…")


@dataclass(frozen=True, slots=True)
class Where:
    """Where a command runs, as far as the host knows: relative operands start at `cwd`, `~` is
    `home` (None: not known; compared as written), `moved`: the line may change directory."""

    cwd: str | None = None
    home: str | None = None
    moved: bool = False


NOWHERE = Where()


def place(operand: Operand, where: Where) -> Operand:
    """`operand` as an absolute path where `where` says how (see the module contract)."""
    if operand.kind not in ("path", "glob"):
        return operand
    if operand.root == "~" and where.home:
        base = where.home
    elif operand.root == "" and where.moved:
        return UNKNOWN
    elif operand.root == "" and where.cwd:
        base = where.cwd
    else:
        return operand
    root, segments = _split("/".join((base, *operand.segments)))
    return Operand(operand.kind, operand.text, root, segments)


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
            if key in table.long_value and not eq:
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
    leading = 0 if options & table.no_leading else table.leading
    heads = tuple(_leading(name, w) for w in plain[:leading])
    operands = tuple(_operand(table, w) for w in plain[leading:])
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
    value = word.value
    if name == "chmod" and value.isdigit():
        value = f"{int(value, 8):o}" if set(value) <= set("01234567") else value
    if name == "chmod" and value in _EVERYONE_ALL:
        value = "777"
    return Operand("text", value)


def _operand(table: Program, word: Arg) -> Operand:
    if table.key_values:
        value = word.value
        if value is None:
            return UNKNOWN
        key, eq, path = value.partition("=")
        if eq and key in table.key_values:
            return Operand("text", f"{key}={_path(path).shown}")
        return Operand("text", value)
    return _word(word)


def _generic(word: Arg) -> Operand:
    value = word.value
    if value is not None and not value.startswith(("/", "~", "./", "../")):
        return Operand("text", value)
    return _word(word)


def _word(word: Arg) -> Operand:
    """A word read as a path: static, `$HOME…`, a glob, or unknown."""
    fields = word.expanded
    if word.value is not None:
        if _other_tilde(word.value) and any(f.tilde for f in fields):
            return UNKNOWN  # `~user`, `~+`, `~-`: a directory only run time knows
        return _path(word.value) if word.value else Operand("text", "")
    if len(fields) != 1:
        return UNKNOWN
    field = fields[0]
    if field.dynamic == {Dynamic.PARAMETER} and field.glob is None:
        home = _HOME.match(field.text)
        return _path("~" + (home.group(1) or "")) if home else UNKNOWN
    if field.dynamic or field.glob is None:
        return UNKNOWN
    pattern = field.glob
    if pattern.startswith("~") and not field.tilde:
        return UNKNOWN
    root, segments = _split(pattern)
    return Operand("glob", pattern, root, segments)


def _other_tilde(value: str) -> bool:
    return value.startswith("~") and value != "~" and not value.startswith("~/")


def _path(text: str) -> Operand:
    root, segments = _split(text)
    return Operand("path", text, root, segments)


def _split(text: str) -> tuple[str, tuple[str, ...]]:
    if text.startswith("/"):
        root, rest = "/", text
    elif text == "~" or text.startswith("~/"):
        root, rest = "~", text[1:]
    else:
        root, rest = "", text
    stack: list[str] = []
    for segment in rest.split("/"):
        if segment in ("", "."):
            continue
        if segment == ".." and stack and stack[-1] != "..":
            stack.pop()
        elif segment == ".." and root == "/":
            continue  # `/..` is `/`
        else:
            stack.append(segment)
    return root, tuple(stack)


def _join(root: str, segments: tuple[str, ...]) -> str:
    if root == "/":
        return "/" + "/".join(segments)
    if root == "~":
        return "/".join(("~", *segments))
    return "/".join(segments) or "."


def _find(rest: tuple[Arg, ...]) -> tuple[Meaning, ...]:
    """`find P… -delete` also means `rm -r -f P…` (whatever its tests keep)."""
    i = 0
    while i < len(rest) and rest[i].value in _FIND_LEADING:
        i += 1
    starts: list[Arg] = []
    while i < len(rest) and not _find_expression(rest[i].value):
        starts.append(rest[i])
        i += 1
    expression = [w.value for w in rest[i:]]
    if "-delete" not in expression and None not in expression:
        return ()
    operands = tuple(_word(w) for w in starts) or (_path("."),)
    rm = PROGRAMS["rm"]
    maybe = "-delete" not in expression
    return (Meaning("rm", frozenset({"-r", "-f"}), (), operands, table=rm, maybe=maybe),)


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
    answers = [DEFINITE if rule.options <= command.options else _unsure(command)]
    recursive = command.table is not None and command.table.recursive in command.options
    deep = above and recursive and command.table is not None and command.table.deletes
    for i, want in enumerate(rule.leading):
        have = command.leading[i] if i < len(command.leading) else None
        answers.append(_reaches(have, want, False) if have is not None else POSSIBLE)
    for want in rule.operands:
        found = [_reaches(have, place(want, where), deep) for have in operands]
        if DEFINITE in found:
            answers.append(DEFINITE)
        else:
            answers.append(POSSIBLE if POSSIBLE in found or command.open_tail else NO)
    return NO if NO in answers else POSSIBLE if POSSIBLE in answers else DEFINITE


def _unsure(command: Meaning) -> int:
    return POSSIBLE if command.unsure else NO


def _in_order(want: tuple[Operand, ...], have: tuple[Operand, ...], open_tail: bool) -> int:
    answer = DEFINITE
    for i, token in enumerate(want):
        if i >= len(have):
            return POSSIBLE if open_tail else NO
        found = _reaches(have[i], token, False)
        if found == NO:
            return NO
        answer = max(answer, found)
    return answer


def _reaches(have: Operand, want: Operand, deep: bool) -> int:
    """Whether the command's operand `have` stands for (or, `deep`, holds) the rule's `want`."""
    if have.kind == "unknown" or want.kind == "unknown":
        return POSSIBLE
    if have.kind == "glob" and want.kind == "text":
        return POSSIBLE if fnmatch.fnmatchcase(want.text, have.text) else NO
    if want.kind != "path" or have.kind == "text":
        return DEFINITE if have.kind == want.kind and have.shown == want.shown else NO
    segments = have.segments
    whole = have.kind == "glob" and bool(segments) and _WHOLE.match(segments[-1]) is not None
    if whole and (have.root, segments[:-1]) == (want.root, want.segments):
        return DEFINITE  # everything in the directory the rule names
    if deep and have.kind == "path" and have.root == "/" and not segments:
        return DEFINITE  # `/` holds every path, `~` and relative ones too
    if have.root != want.root or len(segments) > len(want.segments):
        return NO
    if len(segments) < len(want.segments) and not deep:
        return NO
    if have.kind == "path":
        return DEFINITE if want.segments[: len(segments)] == segments else NO
    pairs = zip(want.segments, segments, strict=False)
    if all(_names(name, pattern) for name, pattern in pairs):
        return DEFINITE
    return NO


def _names(name: str, pattern: str) -> bool:
    """bash's match of one path segment: a leading dot is matched only by a leading dot."""
    if name.startswith(".") and not pattern.startswith((".", "[.]")):
        return False
    return fnmatch.fnmatchcase(name, pattern)
