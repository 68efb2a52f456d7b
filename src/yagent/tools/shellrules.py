"""Shell rules for `cmdpolicy`: the built-in set, the configured ones, and the remembered ones.

Guarantees:
- `build_policy` makes ONE `cmdpolicy.Policy` from the built-in rules, the user's and the project's
  `[[shell.rules]]` entries and the project's remembered rules, so every rule's `match` /
  `not_match` examples are checked against the whole set (an example can depend on another rule).
  A malformed or disagreeing rule is a `ShellRulesError` naming the rule — never skipped.
- The built-in set allows a few read-only commands, forbids what destroys the machine rather than
  the task — removing, moving, rsync-deleting into, or recursively re-owning or re-moding `/` or
  the home; filesystem makers; raw writes to disks (`dd of=`, `shred`, `wipefs`, `blkdiscard`);
  partitioning or swap-formatting them (`sfdisk`, `fdisk`, `parted`, `sgdisk`, `mkswap`; their
  listing forms only look); emptying, shredding or overwriting the system's files (`truncate`,
  `shred`, and `cp`/`install`/`tee` into /etc, /usr…) — and leaves
  everything else to the default (prompt). Each rule carries its
  own examples, so a grammar or kernel change that breaks one fails at start-up, not in use.
- `RuleFile` (`<workspace>/.yagent/shell-rules.toml`) is yagent's own file: rules are appended by
  writing a complete new file beside it and renaming it over the old one (atomic: a reader sees
  the old file or the new one, never half), and the text is read back through `tomllib` before
  the rename, so a file yagent writes always loads.
Leaves to the caller: when to remember (the person's answer), which rules to add, and whether
the file's rules may apply at all (a repository can ship this file: `app.projectkeys` withholds
its allow rules until the person trusted its content; `on_append` lets the host carry that trust
over yagent's own write).
"""

from __future__ import annotations

import shlex
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from yagent.kernel.confine import cmdpolicy
from yagent.tools.atomicfile import atomic_write

RULES_FILE = Path(".yagent") / "shell-rules.toml"
_HEADER = (
    "# Shell rules yagent wrote when you answered 'remember' to a command.\n"
    "# Same shape as [[shell.rules]] in config.toml; edit or delete entries freely.\n"
)


class ShellRulesError(Exception):
    """A rule set that cannot be built or a rules file that cannot be read or written."""


def _allow(name: str, prefix: str, *examples: str, not_match: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "name": name,
        "prefix": prefix.split(),  # tokens as given: no shell quoting to read at every start
        "verdict": "allow",
        "match": list(examples) or [prefix],
        "not_match": list(not_match),
        "justification": "built-in: reads only",
    }


def _forbid(
    name: str, prefix: str, *examples: str, not_match: Sequence[str] = ()
) -> dict[str, Any]:
    return {
        "name": name,
        "prefix": prefix.split(),  # tokens as given: no shell quoting to read at every start
        "verdict": "forbidden",
        "match": list(examples) or [prefix],
        "not_match": list(not_match),
        "justification": "built-in: destroys the machine, not the task",
    }


# Whole disks and their partitions: writing one raw destroys every file system on it.
DISKS: tuple[tuple[str, str], ...] = (
    ("sd", "/dev/sd"), ("hd", "/dev/hd"), ("vd", "/dev/vd"), ("xvd", "/dev/xvd"),
    ("nvme", "/dev/nvme"), ("mmcblk", "/dev/mmcblk"), ("dm", "/dev/dm-"),
    ("mapper", "/dev/mapper/"), ("disk", "/dev/disk/*/"), ("md", "/dev/md"),
)  # fmt: skip
DISK_SUFFIX = {
    "nvme": "0n1",
    "mmcblk": "0",
    "dm": "0",
    "mapper": "root",
    "disk": "ata-x",
    "md": "0",
}
DISK_SUFFIX = {name: DISK_SUFFIX.get(name, "a") for name, _ in DISKS}


def _disk(name: str, pattern: str) -> str:
    """An example device for a disk pattern (`/dev/sd` → `/dev/sda`)."""
    return pattern.replace("*", "by-id") + DISK_SUFFIX[name]


# The system's own files: emptying or overwriting one of them breaks the machine.
SYSTEM_DIRS = ("/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/var/lib")

# Deliberately small: a command that can write, run code or read secrets by an option anywhere on
# its line (find -delete, sort -o, rg --pre, env) is not here, because prefix rules cannot see
# options after the prefix.
BUILTIN_RULES: tuple[dict[str, Any], ...] = (
    _allow("builtin-ls", "ls", "ls", "ls -la src"),
    _allow("builtin-cat", "cat", "cat README.md"),
    _allow("builtin-head", "head", "head -n 5 a.txt"),
    _allow("builtin-tail", "tail", "tail -n 5 a.txt"),
    _allow("builtin-wc", "wc", "wc -l a.txt"),
    _allow("builtin-grep", "grep", "grep -rn TODO src", not_match=["grep x a > out"]),
    _allow("builtin-pwd", "pwd"),
    _allow("builtin-echo", "echo", "echo hello"),
    _allow("builtin-true", "true"),
    _allow("builtin-which", "which", "which python"),
    _allow("builtin-diff", "diff", "diff a.txt b.txt"),
    _allow("builtin-git-status", "git status", "git status", "git status --short"),
    _allow("builtin-git-diff", "git diff", "git diff HEAD~1"),
    _allow("builtin-git-log", "git log", "git log --oneline -5"),
    _allow("builtin-git-show", "git show", "git show HEAD"),
    _allow("builtin-pytest", "pytest", "pytest -q"),
    _allow("builtin-python-pytest", "python -m pytest", "python -m pytest -q"),
    _allow("builtin-python3-pytest", "python3 -m pytest", "python3 -m pytest -q"),
    # Forbidden rules match by meaning (cmdpolicy.meaning): the examples below are respellings
    # checked through the real decision path at start-up (tests/tools/test_shellrules.py and
    # tests/kernel/confine/cmdpolicy/test_meaning.py hold many more).
    _forbid(
        "builtin-rm-rf-root",
        "rm -rf /",
        "rm -rf /",
        "git status; rm -rf /",
        "rm --recursive --force //",
        "rm -rf /*",
        "find / -delete",
    ),
    _forbid("builtin-rm-rf-home", "rm -rf ~", "rm -rf ~", "rm -fr $HOME/"),
    _forbid("builtin-mkfs", "mkfs", "mkfs /dev/sda1", "mkfs -t ext4 /dev/sda1"),
    *(
        _forbid(f"builtin-{maker}", maker, f"{maker} /dev/sda1")
        for maker in ("mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mke2fs")
    ),
    # A recursive change of owner or mode of `/` or the home breaks the machine whatever the
    # owner or mode: these rules name none, so every owner and mode counts (cmdpolicy.modes
    # reads symbolic modes; a rule naming a mode matches every spelling of that change).
    *(
        _forbid(f"builtin-{tool}-{where}", f"{tool} -R {path}", *examples)
        for tool, examples_of in (
            ("chmod", ("chmod -R 777 {p}", "chmod --recursive a+rwx {p}", "chmod -R o+w {p}/")),
            ("chown", ("chown -R nobody {p}", "chown --recursive root:root {p}")),
            ("chgrp", ("chgrp -R nogroup {p}",)),
        )
        for where, path in (("root", "/"), ("home", "~"))
        for examples in (tuple(e.format(p=path) for e in examples_of),)
    ),
    _forbid(
        "builtin-rsync-delete-root",
        "rsync --delete /",
        "rsync -a --delete empty/ /",
        not_match=["rsync -a --delete / /backup/", "rsync -a empty/ /"],
    ),
    _forbid(
        "builtin-rsync-delete-home",
        "rsync --delete ~",
        "rsync -a --del empty/ $HOME/",
        not_match=["rsync -a --delete ~/src/ /backup/"],
    ),
    _forbid("builtin-mv-root", "mv /", "mv / /tmp/x", "mv -t /tmp/x -- //"),
    _forbid("builtin-mv-home", "mv ~", "mv ~ /tmp/x", "mv -f $HOME/ /tmp/x", not_match=["mv x ~/"]),
    *(
        _forbid(f"builtin-{tool}-disk-{name}", f"{tool} {arg}{disk}*", *examples)
        for name, disk in DISKS
        for tool, arg, examples in (
            # cp/tee/install write their destination as `dd of=` does (cmdpolicy.meaning)
            (
                "dd",
                "of=",
                (
                    f"dd if=/dev/zero of={_disk(name, disk)}",
                    f"cp /dev/zero {_disk(name, disk)}",
                    f"echo x | tee -a {_disk(name, disk)}",
                ),
            ),
            ("shred", "", (f"shred -n 1 {_disk(name, disk)}",)),
            ("wipefs", "", (f"wipefs -a {_disk(name, disk)}",)),
            ("blkdiscard", "", (f"blkdiscard {_disk(name, disk)}",)),
            ("mkswap", "", (f"mkswap -L s {_disk(name, disk)}",)),
            ("sfdisk", "", (f"sfdisk --wipe always {_disk(name, disk)}",)),
            ("fdisk", "", (f"fdisk {_disk(name, disk)}",)),
            ("parted", "", (f"parted -s {_disk(name, disk)} mklabel gpt",)),
            ("sgdisk", "", (f"sgdisk -Z {_disk(name, disk)}",)),
        )
    ),
    *(
        _forbid(
            f"builtin-{tool}-system-{name.strip('/').replace('/', '-')}", f"{tool} {name}/**", *ex
        )
        for name in SYSTEM_DIRS
        for tool, ex in (
            (
                "truncate",
                (
                    f"truncate -s 0 {name}/x",
                    f"truncate --size=0 {name}//a/b",
                    f"cp x {name}/x",  # cp/tee/install write as `truncate` does (meaning)
                    f"cp -t {name} x",
                    f"echo x | tee -a {name}/x",
                    f"install -m 755 x {name}/x/",
                ),
            ),
            ("shred", (f"shred -u {name}/x",)),
        )
    ),
)


def build_policy(
    entries: Sequence[Mapping[str, Any]],
    *,
    default: str = "prompt",
    builtin: bool = True,
) -> cmdpolicy.Policy:
    """One policy from the built-in rules (unless `builtin` is off) and `entries`. The built-in
    rules alone are not checked against their examples here: their tests check them
    (`tests/tools/test_shellrules.py`), and checking parses every example at every start
    (docs/adr/0029-built-in-rule-examples-checked-by-tests.md)."""
    rules = [*(BUILTIN_RULES if builtin else ()), *entries]
    document = {"rules": rules, "default": default}
    try:
        return cmdpolicy.Policy.from_mapping(document, check_examples=bool(entries))
    except cmdpolicy.PolicyError as exc:
        raise ShellRulesError(f"shell rules: {exc}") from exc


def remembered_rule(argv: Sequence[str], name: str, when: str) -> cmdpolicy.PrefixRule:
    """The allow rule for one exact command, its own text as its `match` example."""
    return cmdpolicy.PrefixRule(
        name=name,
        prefix=tuple(argv),
        verdict=cmdpolicy.Permission.ALLOW,
        match=(shlex.join(argv),),
        justification=f"remembered from an approval on {when}",
    )


def rule_entry(rule: cmdpolicy.PrefixRule) -> dict[str, Any]:
    """A rule as the plain table `cmdpolicy.Policy.from_mapping` reads."""
    return {
        "name": rule.name,
        "prefix": list(rule.prefix),
        "verdict": rule.verdict.value,
        "match": list(rule.match),
        "not_match": list(rule.not_match),
        "justification": rule.justification,
    }


class RuleFile:
    """The project's remembered rules: `<workspace>/.yagent/shell-rules.toml`.

    `on_append(before, after)` is told the file's bytes before (None: it did not exist) and after
    each append — the host carries its trust in the file over yagent's own write with it."""

    def __init__(
        self, workspace: Path, *, on_append: Callable[[bytes | None, bytes], None] | None = None
    ) -> None:
        self.path = workspace / RULES_FILE
        self.on_append = on_append

    def read(self) -> tuple[bytes | None, list[dict[str, Any]]]:
        """The file's bytes (None when it does not exist) and the rules they hold."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None, []
        except OSError as exc:
            raise ShellRulesError(f"{self.path}: cannot read: {exc.strerror}") from exc
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ShellRulesError(f"{self.path}: not valid TOML: {exc}") from exc
        unknown = sorted(set(data) - {"rules"})
        rules = data.get("rules", [])
        if unknown or not isinstance(rules, list):
            raise ShellRulesError(f"{self.path}: expected only [[rules]] tables, found {unknown}")
        return raw, [dict(r) if isinstance(r, dict) else r for r in rules]

    def entries(self) -> list[dict[str, Any]]:
        """The rules in the file (none when it does not exist)."""
        return self.read()[1]

    def append(self, rules: Sequence[cmdpolicy.PrefixRule]) -> None:
        """Add `rules` to the file, atomically (see the module contract)."""
        before, current = self.read()
        entries = [*current, *(rule_entry(r) for r in rules)]
        text = _HEADER + "".join(_table(e) for e in entries)
        if tomllib.loads(text).get("rules") != entries:  # pragma: no cover - _toml's own bug
            raise ShellRulesError(f"{self.path}: the rules did not survive a TOML round trip")
        after = text.encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, after)
        if self.on_append is not None:
            self.on_append(before, after)


def _table(entry: Mapping[str, Any]) -> str:
    lines = ["\n[[rules]]"]
    for key, value in entry.items():
        lines.append(f"{key} = {_toml(value)}")
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if isinstance(value, str):
        out = ['"']
        for ch in value:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ord(ch) < 0x20 or ord(ch) == 0x7F:
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise ShellRulesError(f"cannot write {type(value).__name__} into a rules file")
