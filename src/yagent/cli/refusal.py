"""What stops a `yagent` command, said in one line on standard error, with its exit status.

Contract:
- `status(exc)`: 75 for a full disk anywhere in `exc`'s causes (`app.fulldisk`); 2 for a
  refusal (`refusals()`: configuration, session store, a session running elsewhere, an unusable
  file) or a directory yagent must write in and cannot (`cli.unwritable`); None for anything
  else, which propagates (a bug shows as one).
- `line(exc)`: the sentence, with what to do: free space; make the directory writable or move
  `YAGENT_HOME` (said before any damaged-store advice: a read-only store is not damaged); check
  and salvage a damaged store; list the sessions after an unknown one; write a recording after
  a `--replay` FILE that is not one.
- `say(line)` writes it with its control codes made visible (it may quote a file's content).
Errors' modules are imported once something was raised: a command that never reads the
configuration or a store does not load them only to be ready for their errors.
"""

from __future__ import annotations

import click

from yagent.cli.terminal import home_dir


def say(line: str) -> None:
    """A refusal on standard error, its control codes written out (it may quote a file)."""
    from yagent.cli.safetext import visible

    click.echo(visible(line), err=True)


def refusals() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """What stops a command before (or instead of) doing anything, said in one line (exit 2),
    and which of those are a damaged store (said with the advice to salvage it).

    Imported once something was raised, so that a command that never reads the configuration
    or a store does not load them only to be ready for their errors.
    """
    from yagent.app.config import ConfigError
    from yagent.app.lease import SessionBusyError
    from yagent.kernel.durable.sqlitefile import UnusableFileError
    from yagent.llm.replay import RecordingFormatError
    from yagent.memory.errors import DamagedStoreError, SessionStoreError

    refused = (
        ConfigError,
        SessionStoreError,
        SessionBusyError,
        UnusableFileError,
        RecordingFormatError,
    )
    return refused, (DamagedStoreError, UnusableFileError)


_DAMAGED = (
    " — `yagent doctor` checks the stores; `yagent doctor --salvage` copies what is still "
    "readable into a new file; then move the damaged file aside"
)


def status(exc: BaseException) -> int | None:
    """The exit status of an error said in one line: 75 a full disk (`app.fulldisk`), 2 a
    refusal or a directory yagent cannot write in (`cli.unwritable`); None for anything else (it
    propagates)."""
    from yagent.app.fulldisk import EXIT_FULL
    from yagent.cli import unwritable
    from yagent.kernel.durable.sqlitefile import disk_full

    if disk_full(exc):
        return EXIT_FULL
    return 2 if isinstance(exc, refusals()[0]) or unwritable.blocked(exc) else None


def line(exc: BaseException) -> str:
    from yagent.kernel.durable.sqlitefile import disk_full
    from yagent.memory.errors import StoreFullError

    if disk_full(exc) and not isinstance(exc, StoreFullError):  # a durable store, a state file
        return (
            f"yagent: the disk holding {home_dir()} is full ({exc}): free space there and run "
            "the command again (nothing was half-written)"
        )
    from yagent.cli import unwritable

    refused = unwritable.blocked(exc)  # before the damaged-store advice: a read-only store is fine
    if refused is not None:
        return unwritable.line(*refused, home_dir())
    advice = _DAMAGED if isinstance(exc, refusals()[1]) else ""
    from yagent.llm.replay import RecordingFormatError

    if isinstance(exc, RecordingFormatError):  # --replay FILE: not a recording
        advice = " — not a yagent recording (`yagent replay SESSION --save FILE` writes one)"
    if isinstance(exc, LookupError):  # no such session, an ambiguous prefix
        advice = " — `yagent sessions` lists this workspace's, `yagent sessions --all` every one"
    return f"yagent: {exc}{advice}"


def leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out
