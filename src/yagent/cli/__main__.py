"""`python -m yagent.cli` runs the `yagent` command."""

from yagent.cli import entry

entry()
