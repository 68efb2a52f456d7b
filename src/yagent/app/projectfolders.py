"""A repository's folders that other agents' conventions put power in, and their trust.

Claude Code reads `.claude/agents/*.md` (sub-agents: their own tools and model) and skills'
`allowed-tools` (tools used without asking). Both can loosen what yagent would otherwise ask
about, so — like `.yagent/config.toml` — they apply only once the person trusted their exact
content (`yagent trust`, `app.trust`).

Contract:
- Each folder in `FOLDERS` counts as one trusted unit, keyed by its relative path in the trust
  records: the sha256 over the sorted (relative name, content) of the files that matter — every
  `*.md` directly in `.claude/agents`, every `*/SKILL.md` in the skills folders. A folder with
  no such file has no digest (nothing to trust). Any change to any of those files — an added,
  removed or edited one — makes the folder CHANGED, untrusted again.
- `withheld` names what waits for trust: each project agent (`agents.<name>`) and each project
  skill whose front matter has `allowed-tools` (`skills.<folder>.allowed-tools`).
- Files are read once each; unreadable ones count by their error text, so they change the digest
  rather than vanish from it.
Leaves to the caller: what trusting a folder applies (`app.assemble`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from yagent.agents import agentfiles

AGENTS = ".claude/agents"
CLAUDE_SKILLS = ".claude/skills"
YAGENT_SKILLS = ".yagent/skills"
FOLDERS: dict[str, str] = {AGENTS: "*.md", CLAUDE_SKILLS: "*/SKILL.md", YAGENT_SKILLS: "*/SKILL.md"}
SKILL_FOLDERS = (YAGENT_SKILLS, CLAUDE_SKILLS)


def files_of(workspace: Path, folder: str) -> list[Path]:
    base = workspace / folder
    if not base.is_dir():
        return []
    return sorted(p for p in base.glob(FOLDERS[folder]) if p.is_file())


def _content(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        return f"unreadable: {exc}".encode()


def digests(workspace: Path) -> dict[str, str]:
    """Each folder's digest (see the module contract); folders with no files are absent."""
    out: dict[str, str] = {}
    for folder in FOLDERS:
        files = files_of(workspace, folder)
        if not files:
            continue
        sha = hashlib.sha256()
        for path in files:
            name = str(path.relative_to(workspace / folder)).encode()
            data = _content(path)
            sha.update(b"%d:%s%d:" % (len(name), name, len(data)))
            sha.update(data)
        out[folder] = sha.hexdigest()
    return out


def withheld(workspace: Path, folder: str) -> list[tuple[str, Any]]:
    """What `folder` would apply once trusted, as (dotted name, value) pairs."""
    if folder == AGENTS:  # by the name an agent is chosen with (`--agent NAME`)
        found = agentfiles.find(workspace, None).values()
        return [(f"agents.{f.name}", str(f.path.relative_to(workspace))) for f in found]
    out: list[tuple[str, Any]] = []
    for path in files_of(workspace, folder):
        head = _content(path).decode("utf-8", "replace").split("---", 2)
        lines = head[1].splitlines() if len(head) > 2 else []
        grants = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("allowed-tools:")]
        if grants:
            out.append((f"skills.{path.parent.name}.allowed-tools", grants[0]))
    return out
