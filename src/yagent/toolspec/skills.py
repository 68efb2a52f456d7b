"""toolspec.skills: the `SkillSource` seam `use_skill` reads from, and the skill value object.

The tool layer knows skills only through this protocol; where skills live (folders of SKILL.md
with front matter) is the source's business.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True, slots=True)
class SkillDoc:
    name: str
    description: str
    body: str
    root: Path
    files: tuple[str, ...] = ()
    # `allowed-tools`: the yagent tools opening the skill lets run without the question, and
    # each entry that grants nothing with the reason (`tools.skills` decides both)
    grants: tuple[str, ...] = ()
    not_granted: tuple[str, ...] = ()


class SkillSource(Protocol):
    def list(self) -> Sequence[SkillDoc]: ...

    def get(self, name: str) -> SkillDoc | None: ...
