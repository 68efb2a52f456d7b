"""Skills from folders, and the `use_skill` executor.

A skill is a folder holding `SKILL.md` whose YAML front matter names it and describes it:

    ---
    name: release-notes
    description: Write release notes from the git log.
    ---
    (instructions…)

`FolderSkillSource` reads `<workspace>/.yagent/skills/*/SKILL.md` and `~/.yagent/skills/*/SKILL.md`
(the project's copy wins over the user's on the same name). A folder whose SKILL.md is missing,
has no front matter, or lacks name/description is not silently skipped: it is listed in
`problems()` with the reason. `use_skill` returns the instructions and the files the skill bundles.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from yagent.kernel import toolfail
from yagent.tools.adapter import ToolContext
from yagent.toolspec import SkillDoc
from yagent.toolspec import params as p

MAX_FILES_LISTED = 50


def parse_skill(path: Path) -> SkillDoc:
    """One SKILL.md; raises ValueError with the reason when it is not a usable skill."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        raise ValueError("SKILL.md has no front matter (it must start with ---)")
    parts = text.split("---", 2)
    if len(parts) < 3:
        raise ValueError("SKILL.md front matter is not closed with ---")
    try:
        meta = yaml.safe_load(parts[1]) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"SKILL.md front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise ValueError("SKILL.md front matter must be a mapping")
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("SKILL.md front matter needs a 'name'")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("SKILL.md front matter needs a 'description'")
    root = path.parent
    files = sorted(
        str(f.relative_to(root)) for f in root.rglob("*") if f.is_file() and f.name != "SKILL.md"
    )
    return SkillDoc(name.strip(), description.strip(), parts[2].strip(), root, tuple(files))


class FolderSkillSource:
    def __init__(self, roots: Iterable[Path]) -> None:
        self._roots = tuple(roots)  # earlier roots win on a name clash
        self._skills: dict[str, SkillDoc] = {}
        self._problems: list[tuple[str, str]] = []
        self.reload()

    @classmethod
    def for_workspace(cls, workspace: Path, home: Path) -> FolderSkillSource:
        return cls([workspace / ".yagent" / "skills", home / "skills"])

    def reload(self) -> None:
        skills: dict[str, SkillDoc] = {}
        problems: list[tuple[str, str]] = []
        for root in self._roots:
            if not root.is_dir():
                continue
            for folder in sorted(d for d in root.iterdir() if d.is_dir()):
                doc_path = folder / "SKILL.md"
                if not doc_path.is_file():
                    problems.append((str(folder), "no SKILL.md"))
                    continue
                try:
                    doc = parse_skill(doc_path)
                except (ValueError, OSError) as exc:
                    problems.append((str(doc_path), str(exc)))
                    continue
                skills.setdefault(doc.name, doc)
        self._skills = skills
        self._problems = problems

    def list(self) -> Sequence[SkillDoc]:
        return [self._skills[n] for n in sorted(self._skills)]

    def get(self, name: str) -> SkillDoc | None:
        return self._skills.get(name)

    def problems(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._problems)


async def use_skill(ctx: ToolContext, args: p.UseSkillArgs) -> dict[str, Any]:
    source = ctx.skills
    if source is None:
        raise toolfail.ToolFailure(toolfail.Kind.NOT_FOUND, "no skills are configured")
    doc = source.get(args.name)
    if doc is None:
        known = ", ".join(s.name for s in source.list()) or "none"
        raise toolfail.ToolFailure(
            toolfail.Kind.NOT_FOUND, f"no skill named {args.name!r}; available: {known}"
        )
    files = list(doc.files[:MAX_FILES_LISTED])
    out: dict[str, Any] = {
        "name": doc.name,
        "description": doc.description,
        "instructions": doc.body,
        "root": str(doc.root),
        "files": files,
    }
    if len(doc.files) > MAX_FILES_LISTED:
        out["files_truncated"] = f"showing {MAX_FILES_LISTED} of {len(doc.files)} files"
    return out
