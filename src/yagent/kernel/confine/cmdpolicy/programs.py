"""Option tables of the programs restricting rules name, for reading a command by its meaning.

Guarantees: each `Program` lists a program's options in one canonical spelling — a short option
(`-r`) when it has one, else its long name (`--no-preserve-root`) — with every other spelling of
the same option mapped to it (`-R` and `--recursive` are rm's `-r`), a long option also by any
unambiguous abbreviation (`--rec`, as getopt_long takes it). Options that take a value are
listed, so their value is never read as an operand. `noise` lists options that change how a
program reports or asks, not what it does (rm's `-f`, `-i`, `-v`): they are left out of every
comparison, so a rule on `rm -rf X` also stops `rm -r X` (without a terminal nobody is asked).
`leading` counts the operands that come before the paths and are not paths (chmod's MODE,
chown's OWNER) — read as such only when a path follows them, so a rule `chown -R /` names any
owner; `deletes` marks a program that removes what its recursive form is given (or, with no
recursive option, what it is given), with everything below it. `kept` says which operands are
acted on: all, the `last` (rsync's destination) or the `sources` (mv's, all but the last
unless a target-directory option names it); `follows_last` is False for a program that acts on
a symbolic link itself when named without a trailing `/` (rm, mv). `reads` lists the options
that make a program only look (`fdisk -l`, `sfdisk -d`, `sgdisk -p`) and `looks` the operands
that, when all the operands after the first are among them, do (`parted DISK print`).
Programs not in `PROGRAMS` are read as spelled (see `meaning`).
Leaves to `meaning`: splitting clusters, `--opt=value`, `--`, and comparing the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Program:
    """One program's option table (see the module contract)."""

    short: Mapping[str, str]  # a short option letter → its canonical spelling
    long: Mapping[str, str]  # a long option name → its canonical spelling
    short_value: str = ""  # short options that take a value
    long_value: frozenset[str] = frozenset()  # long options that take a value
    leading: int = 0  # operands before the paths that are not paths
    no_leading: frozenset[str] = frozenset()  # canonical options that remove `leading`
    recursive: str = ""  # the canonical option that makes it act on whole trees
    deletes: bool = False  # removes what it is given (a tree, when `recursive` is set)
    mode_letters: str = ""  # chmod: `-w` is a MODE, not an option, when all letters are these
    key_values: frozenset[str] = field(default_factory=frozenset)  # dd: KEY=PATH operands
    noise: frozenset[str] = frozenset()  # canonical options that change no outcome
    kept: str = ""  # "" all operands, "last" the destination only, "sources" all but the last
    target_option: str = ""  # with `kept="sources"`: the option naming the target directory
    follows_last: bool = True  # a link named last (no trailing `/`) is followed
    reads: frozenset[str] = frozenset()  # canonical options that make it only look (fdisk -l)
    looks: frozenset[str] = frozenset()  # operands that, all after the first, only look (parted)

    def canonical(self, spelled: str) -> str:
        """The canonical spelling of one option (`-R` → `-r`, `--recursive` → `-r`, `--rec`
        → `-r`); an ambiguous abbreviation or an unknown option stays as spelled."""
        if not spelled.startswith("--"):
            return self.short.get(spelled[1:], spelled)
        name = spelled[2:]
        if name in self.long:
            return self.long[name]
        meant = {self.long[k] for k in self.long if k.startswith(name)} if name else set()
        return meant.pop() if len(meant) == 1 else spelled

    def takes_value(self, spelled: str) -> bool:
        """Whether the long option `--name` (or an abbreviation of one) takes a value."""
        name = spelled[2:]
        return name in self.long_value or (
            bool(name)
            and name not in self.long
            and any(k.startswith(name) for k in self.long_value)
        )


def _same(letters: str) -> dict[str, str]:
    return {ch: f"-{ch}" for ch in letters}


def _long(names: str, **mapped: str) -> dict[str, str]:
    out = {name: f"--{name}" for name in names.split()}
    out.update({name.replace("_", "-"): value for name, value in mapped.items()})
    return out


_ROOT = "no-preserve-root preserve-root one-file-system"
_CHANGE = _long(
    "no-preserve-root preserve-root dereference",
    recursive="-R",
    silent="-f",
    quiet="-f",
    verbose="-v",
    changes="-c",
    no_dereference="-h",
)
_CHOWN = Program(
    short={**_same("RfvchHLP")},
    long=_CHANGE,
    long_value=frozenset({"from", "reference"}),
    leading=1,
    no_leading=frozenset({"--reference"}),
    recursive="-R",
    noise=frozenset({"-f", "-v", "-c"}),
)

_RSYNC_VALUES = (
    "rsh filter exclude include exclude-from include-from files-from temp-dir compare-dest "
    "copy-dest link-dest backup-dir suffix chmod chown usermap groupmap rsync-path log-file "
    "log-file-format out-format partial-dir max-size min-size max-delete bwlimit timeout "
    "contimeout port password-file block-size modify-window compress-level skip-compress "
    "sockopts iconv protocol checksum-choice compress-choice read-batch write-batch "
    "only-write-batch info debug stop-after stop-at outbuf max-alloc remote-option address "
    "early-input checksum-seed"
)
_RSYNC = Program(  # options that delete at the destination all read as `--delete`
    short={},
    long={
        **_long(_RSYNC_VALUES),
        **dict.fromkeys(_long("del delete-excluded delete-missing-args"), "--delete"),
        **{f"delete-{when}": "--delete" for when in ("before", "during", "delay", "after")},
        "delete": "--delete",
    },
    short_value="eBfTM",
    long_value=frozenset(_RSYNC_VALUES.split()),
    deletes=True,  # --delete removes what the source lacks, anywhere below the destination
    kept="last",
)

# Partition and swap writers: each rewrites the disk it is given (a listing option only looks).
_PARTITIONERS: Mapping[str, Program] = {
    "mkswap": Program(
        short=_same("cfvqhV"),
        long=_long("check force verbose", pagesize="-p", label="-L", uuid="-U", offset="-o"),
        short_value="pLUoes",
        long_value=frozenset({"pagesize", "label", "uuid", "offset", "endianness", "size", "lock"}),
    ),
    "sfdisk": Program(
        short=_same("adlrsVJgGfnqFNXYwWOo"),
        long=_long(
            "activate dump list reorder show-size verify json show-geometry show-pt-geometry "
            "force no-act quiet list-free partno label label-nested wipe wipe-partitions "
            "backup-file output color lock"
        ),
        short_value="NXYwWOo",
        long_value=frozenset(
            {"partno", "label", "label-nested", "wipe", "wipe-partitions", "backup-file"}
            | {"output", "color", "lock"}
        ),
        reads=frozenset(
            {"-d", "-l", "-s", "-V", "-J", "-g", "-G", "-F", "--dump", "--list", "--show-size"}
            | {"--verify", "--json", "--show-geometry", "--show-pt-geometry", "--list-free"}
        ),
    ),
    "fdisk": Program(
        short=_same("lxsnbowWtCHSLcuB"),
        long=_long("list list-details bytes noauto-pt", getsz="-s", output="-o", type="-t"),
        short_value="bowWtCHS",
        long_value=frozenset({"sector-size", "output", "type", "wipe", "wipe-partitions", "lock"}),
        reads=frozenset({"-l", "-x", "-s", "--list", "--list-details", "--getsz"}),
    ),
    "parted": Program(
        short=_same("lmsfja"),
        long=_long("list machine script fix json align"),
        short_value="a",
        long_value=frozenset({"align"}),
        reads=frozenset({"-l", "--list"}),
        looks=frozenset({"print", "p", "help", "version", "unit", "align-check", "s", "b", "mib"}),
    ),
    "sgdisk": Program(
        short=_same("pvPOiAbcdDeEfFgGhlmnortuUzZ"),
        long=_long(
            "print verify pretend print-mbr info zap zap-all clear mbrtogpt randomize-guids "
            "new delete change-name typecode backup load-backup"
        ),
        reads=frozenset({"-p", "-v", "-P", "-O", "-i", "--print", "--verify", "--pretend"})
        | frozenset({"--print-mbr", "--info"}),
    ),
}

PROGRAMS: Mapping[str, Program] = {
    **_PARTITIONERS,
    "rm": Program(
        short={**_same("rfiIdv"), "R": "-r"},
        long=_long(_ROOT, recursive="-r", force="-f", dir="-d", verbose="-v", interactive="-i"),
        recursive="-r",
        deletes=True,
        noise=frozenset({"-f", "-i", "-I", "-v"}),
        follows_last=False,
    ),
    "chmod": Program(
        short=_same("Rfvc"),
        long=_CHANGE,
        long_value=frozenset({"reference"}),
        leading=1,
        no_leading=frozenset({"--reference"}),
        recursive="-R",
        mode_letters="rwxXstugoa",
        noise=frozenset({"-f", "-v", "-c"}),
    ),
    "chown": _CHOWN,
    "chgrp": _CHOWN,
    "dd": Program(short={}, long={}, key_values=frozenset({"if", "of"})),
    "shred": Program(
        short={**_same("fuvxz")},
        long=_long("", force="-f", remove="-u", verbose="-v", exact="-x", zero="-z"),
        short_value="ns",
        long_value=frozenset({"iterations", "size", "random-source"}),
        deletes=False,
    ),
    "truncate": Program(
        short=_same("co"),
        long=_long("", no_create="-c", io_blocks="-o", reference="-r", size="-s"),
        short_value="rs",
        long_value=frozenset({"reference", "size"}),
    ),
    "mv": Program(
        short={**_same("bfinTuvZ"), "t": "-t", "S": "-S"},
        long=_long(
            "strip-trailing-slashes exchange no-copy context",
            backup="-b",
            force="-f",
            interactive="-i",
            no_clobber="-n",
            no_target_directory="-T",
            update="-u",
            verbose="-v",
            target_directory="-t",
            suffix="-S",
        ),
        short_value="tS",
        long_value=frozenset({"target-directory", "suffix"}),
        deletes=True,  # what it moves is gone from where it was, with all below it
        noise=frozenset({"-b", "-f", "-i", "-n", "-u", "-v", "-Z"}),
        kept="sources",
        target_option="-t",
        follows_last=False,
    ),
    "rsync": _RSYNC,
    "wipefs": Program(
        short=_same("abfnpqJi"),
        long=_long("all backup force no-act parsable quiet json noheadings"),
        short_value="otO",
        long_value=frozenset({"offset", "types", "output"}),
    ),
    "blkdiscard": Program(
        short=_same("sfzvq"),
        long=_long("secure force zeroout verbose quiet"),
        short_value="olp",
        long_value=frozenset({"offset", "length", "step"}),
    ),
    "git push": Program(
        short={**_same("fdnquv")},
        long=_long(
            "mirror all tags follow-tags atomic prune no-verify force-with-lease "
            "force-if-includes porcelain thin no-thin signed",
            force="-f",
            delete="-d",
            dry_run="-n",
            quiet="-q",
            verbose="-v",
            set_upstream="-u",
        ),
        short_value="o",
        long_value=frozenset({"repo", "receive-pack", "exec", "push-option", "recurse-submodules"}),
    ),
}
"""The programs read by meaning: those the built-in restricting rules name, and their kin."""
