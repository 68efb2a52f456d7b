"""Claude Code's sub-agent files (`.claude/agents/*.md`): where they are and what their front
matter says — nothing about what an agent made of one may do (that is `agents.imported`).

Contract:
- `find` lists the files by agent name: the project's (`<workspace>/.claude/agents`) before the
  person's (`~/.claude/agents`); a file whose front matter cannot be read is listed under its
  file name so choosing it reports the problem instead of "unknown agent".
- `front_matter(path)` is the file's YAML front matter (a mapping) and its body; a file that
  cannot be read, has no front matter between `---` lines, or whose front matter is not a YAML
  mapping is an `AgentFileError` naming the file.
Reading a folder needs YAML and the file system only: the project-trust check (`app.projectfolders`)
lists a repository's agents without building the tool specs an agent is made of. The YAML parser
loads with the first front matter read: a workspace without agent files never loads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class AgentFileError(ValueError):
    """An agent file that cannot be read as front matter and a body (the message names it)."""


@dataclass(frozen=True, slots=True)
class AgentFile:
    name: str
    path: Path
    project: bool  # from the workspace's .claude/agents (needs trust), not the person's own


def front_matter(path: Path) -> tuple[dict[str, Any], str]:
    """The front matter of the agent file at `path` and its body (see the module contract)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentFileError(f"{path}: cannot be read: {exc}") from None
    parts = text.split("---", 2)
    if not text.startswith("---") or len(parts) < 3:
        raise AgentFileError(f"{path}: needs YAML front matter between --- lines")
    import yaml  # the parser loads with the first front matter read (module contract)

    try:
        meta = yaml.safe_load(parts[1]) or {}
    except yaml.YAMLError as exc:
        raise AgentFileError(f"{path}: front matter is not valid YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise AgentFileError(f"{path}: front matter must be a mapping")
    return meta, parts[2].strip()


def find(workspace: Path, user_home: Path | None) -> dict[str, AgentFile]:
    """Agent name → its file (module contract: the project's first)."""
    found: dict[str, AgentFile] = {}
    folders = [(workspace / ".claude" / "agents", True)]
    if user_home is not None:
        folders.append((user_home / ".claude" / "agents", False))
    for folder, project in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            try:
                name = str(front_matter(path)[0].get("name") or path.stem)
            except AgentFileError:
                name = path.stem
            found.setdefault(name, AgentFile(name, path, project))
    return found


def names(files: Iterable[AgentFile]) -> str:
    return ", ".join(sorted(f.name for f in files)) or "none"
