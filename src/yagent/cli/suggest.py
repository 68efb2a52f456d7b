"""Command groups that answer a mistyped or unknown command with the way on, instead of click's
bare "No such command".

Contract:
- `Group` (a `click.Group`): an unknown COMMAND is a usage error (exit 2) naming the closest
  command (`lst` → *did you mean 'list'?*), else what the group's `otherwise(args)` says the
  words most likely meant (the root: a task given without `run`; `sessions`: a session id given
  without `show`), else the group's commands. Options, and parsing for completion, are left to
  click.
- `closest(word, known)`: the one known name close enough to `word` to be offered as what was
  meant (`CUTOFF`), else None — for commands that take their verbs as arguments (`batch`).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import click

CUTOFF = 0.75  # how close a word must be to a command to be offered as what was meant


def closest(word: str, known: Sequence[str]) -> str | None:
    """The known name `word` most likely meant (a typo of it), else None."""
    close = difflib.get_close_matches(word, known, n=1, cutoff=CUTOFF)
    return close[0] if close and " " not in word else None


class Group(click.Group):
    def otherwise(self, args: list[str]) -> str:
        """What the words most likely meant when they name no command ('' when nothing)."""
        return ""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        word = args[0] if args else "-"
        if (
            not ctx.resilient_parsing
            and not word.startswith("-")
            and not self.get_command(ctx, word)
        ):
            raise click.UsageError(self._unknown(args, self.list_commands(ctx)), ctx)
        return super().resolve_command(ctx, args)

    def _unknown(self, args: list[str], known: list[str]) -> str:
        word = args[0]
        close = closest(word, known)
        if close is not None:
            return f"No such command {word!r} (did you mean {close!r}?)"
        meant = self.otherwise(args)
        if meant:
            return f"No such command {word!r}; {meant}"
        return f"No such command {word!r}; the commands: {', '.join(known)}"
