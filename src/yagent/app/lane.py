"""A lane: what a run needs to run one task confined — a parallel task (`app.fanrun`) or a
delegation (`app.delegation`).

Contract:
- `Lane` carries the task's name, its delegation id (on everything the run records), its areas
  (`kernel.judge.areas` declaration: the worktree ring on its Surface) and its confined
  command gate; `link` only for a delegation (`app.delegationpool.Link`: its pool, depth
  and watchdog).
- `Lane.frame(agent)` puts the task's marker on the first line of the agent's prompt
  (`lanemarkers.marker(name)` for a parallel task, `delegation_marker(name)` for a delegation:
  scripted and replay engines route each task's requests by it), followed by the task's areas.
- `framed(None, agent)` is the agent unchanged (a run outside any lane).
It sits below the run modules and `app.services`, which all name it; `app.fanout` re-exports it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from yagent.agents.catalog import AgentDef
from yagent.app.delegationpool import Link
from yagent.app.lanemarkers import delegation_marker, marker
from yagent.kernel.judge import areas
from yagent.tools.areastage import describe
from yagent.tools.commands import CommandGate


@dataclass(frozen=True, slots=True)
class Lane:
    """What `App.run` needs to run one task confined: its delegation id, declaration, gate;
    `link` for a delegation (`app.delegation`): its pool, depth and watchdog."""

    name: str
    delegation_id: str
    declaration: areas.Declaration
    commands: CommandGate
    link: Link | None = None

    def frame(self, agent: AgentDef) -> AgentDef:
        """`agent` with this task's marker on its prompt's first line and its areas after it."""
        first, newline, rest = agent.prompt.strip().partition("\n")
        if self.link is None:
            mark, role = marker(self.name), f"task {self.name!r} of a parallel run"
        else:
            mark, role = delegation_marker(self.name), f"delegation {self.name!r}"
        prompt = (
            f"{first} {mark}{newline}{rest}\n\n## Your worktree\n"
            f"You are {role}: other agents work in this workspace "
            f"at the same time. Your declared areas ({describe(self.declaration)}) are the only "
            "paths your tools may reach; you may read what you may write. Every other path is "
            "refused, and shell commands see the workspace read-only except your writable "
            "areas. If the task needs more, say so in your final report."
        )
        return dataclasses.replace(agent, prompt=prompt)


def framed(lane: Lane | None, agent: AgentDef) -> AgentDef:
    return agent if lane is None else lane.frame(agent)
