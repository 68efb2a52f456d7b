"""Skills from folders, and the `use_skill` executor.

A skill is a folder holding `SKILL.md` whose YAML front matter names it and describes it:

    ---
    name: release-notes
    description: Write release notes from the git log.
    ---
    (instructions…)

`FolderSkillSource.for_workspace` reads, in this order (the first wins on a name clash — the
project's copy over the user's, yagent's folder over Claude Code's): `<workspace>/.yagent/skills`,
`<workspace>/.claude/skills`, `<yagent home>/skills`, `~/.claude/skills`, each `*/SKILL.md`.
A folder whose SKILL.md is missing, has no front matter, or lacks name/description is not
silently skipped: it is listed in `problems()` with the reason — and so is a project's skill
whose folder or SKILL.md is a link leading out of the workspace, which is never read (a checkout
linking `SKILL.md` to `~/.ssh/id_rsa` had its front matter listed and its body returned).
`use_skill` returns the instructions and the files the skill bundles; `folders()` are the skill
folders the file tools may read (read-only) wherever they are — only a folder that really is an
entry of its skills folder (a skill linking elsewhere, e.g. into yagent's state, is not opened
up).

`allowed-tools` (Claude Code: tools usable without asking while the skill is in use): names are
Claude's or yagent's (`toolspec.claudetools`). Opening the skill with `use_skill` gives each
mapped tool the standing permission a person's "always allow this tool" answer gives, for the
rest of the process — so it never lifts a forbidden command rule, never skips the question for
protected paths (`.git`, `.yagent`), never opens what the read mask hides and never adds a tool
the agent's profile lacks. It is honoured only from the person's own skills (yagent home,
`~/.claude/skills`) and from a project's skills once the person trusted them (`yagent trust`);
an untrusted project's grants, entries scoped by a pattern (`Bash(git add:*)` — a grant cannot
be narrowed to a prefix) and unknown names grant nothing and are listed with the reason.
The YAML parser loads with the first SKILL.md read: a run with no skill folders never loads it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yagent.kernel.judge import toolfail
from yagent.tools.adapter import ToolContext
from yagent.tools.treewalk import walk
from yagent.toolspec import SkillDoc, claudetools
from yagent.toolspec import params as p
from yagent.toolspec.builtin import BUILTIN

MAX_FILES_LISTED = 50


@dataclass(frozen=True, slots=True)
class SkillRoot:
    path: Path  # a folder of skill folders
    grants: bool  # whether its skills' allowed-tools may grant (the person's own, or trusted)
    why_not: str = ""  # when they may not: the reason shown
    jail: Path | None = None  # a project's: its skills must lie in the workspace, links resolved


def _grants(meta: dict[str, Any], root: SkillRoot) -> tuple[tuple[str, ...], tuple[str, ...]]:
    raw = meta.get("allowed-tools", meta.get("allowed_tools"))
    if raw is None:
        return (), ()
    try:
        entries = claudetools.split_names(raw)
    except claudetools.ToolNameError as exc:
        raise ValueError(f"SKILL.md allowed-tools: {exc}") from exc
    grants: list[str] = []
    refused: list[str] = []
    known = [spec.name for spec in BUILTIN]
    for entry in entries:
        try:
            name, pattern = claudetools.parse(entry)
            mapped = claudetools.to_yagent(name, known)
        except claudetools.ToolNameError as exc:
            refused.append(f"{entry}: {exc}")
            continue
        if pattern is not None:
            refused.append(f"{entry}: a grant cannot be narrowed to a pattern; asked as usual")
        elif not root.grants:
            refused.append(f"{entry}: {root.why_not}")
        else:
            grants.extend(t for t in mapped if t not in grants)
    return tuple(grants), tuple(refused)


def parse_skill(path: Path, root: SkillRoot | None = None) -> SkillDoc:
    """One SKILL.md; raises ValueError with the reason when it is not a usable skill."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        raise ValueError("SKILL.md has no front matter (it must start with ---)")
    parts = text.split("---", 2)
    if len(parts) < 3:
        raise ValueError("SKILL.md front matter is not closed with ---")
    import yaml  # loads with the first SKILL.md read (module docstring)

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
    grants, refused = _grants(meta, root or SkillRoot(path.parent.parent, False, "no source"))
    folder = path.parent
    files = sorted(
        os.path.relpath(os.path.join(top, name), folder)
        for top, _, names in walk(folder)
        for name in names
        if os.path.isfile(os.path.join(top, name)) and name != "SKILL.md"
    )
    return SkillDoc(
        name.strip(),
        description.strip(),
        parts[2].strip(),
        folder,
        tuple(files),
        grants,
        refused,
    )


def _outside(doc_path: Path, root: SkillRoot) -> str:
    """Why a project's skill is not read — its folder or SKILL.md is a link leading out of the
    workspace (to a credential store, say: its front matter would be listed, its body returned) —
    or ""."""
    if root.jail is None:
        return ""
    jail = os.path.realpath(root.jail)
    real = os.path.realpath(doc_path)
    if real == jail or real.startswith(jail.rstrip("/") + "/"):
        return ""
    return f"SKILL.md leads to {real}, outside the workspace: not read"


class FolderSkillSource:
    def __init__(self, roots: Iterable[Path | SkillRoot]) -> None:
        self._roots = tuple(  # earlier roots win on a name clash
            r if isinstance(r, SkillRoot) else SkillRoot(r, False, "not a trusted skill folder")
            for r in roots
        )
        self._skills: dict[str, SkillDoc] = {}
        self._problems: list[tuple[str, str]] = []
        self.reload()

    @classmethod
    def for_workspace(
        cls,
        workspace: Path,
        home: Path,
        user_home: Path | None = None,
        *,
        trust: Mapping[str, str] | None = None,
    ) -> FolderSkillSource:
        """The four skill folders (module docstring). `trust` maps a project folder
        (".yagent/skills", ".claude/skills") to its trust status; only "trusted" grants."""
        trust = trust or {}

        def project(folder: str) -> SkillRoot:
            status = trust.get(folder, "not trusted")
            why = f"the project's {folder} is {status} (review it with yagent trust)"
            return SkillRoot(workspace / folder, status == "trusted", why, workspace)

        roots = [
            project(".yagent/skills"),
            project(".claude/skills"),
            SkillRoot(home / "skills", True),
        ]
        if user_home is not None:
            roots.append(SkillRoot(user_home / ".claude" / "skills", True))
        return cls(roots)

    def reload(self) -> None:
        skills: dict[str, SkillDoc] = {}
        problems: list[tuple[str, str]] = []
        for root in self._roots:
            if not root.path.is_dir():
                continue
            for folder in sorted(d for d in root.path.iterdir() if d.is_dir()):
                doc_path = folder / "SKILL.md"
                if not doc_path.is_file():
                    problems.append((str(folder), "no SKILL.md"))
                    continue
                outside = _outside(doc_path, root)
                if outside:
                    problems.append((str(doc_path), outside))
                    continue
                try:
                    doc = parse_skill(doc_path, root)
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

    def folders(self) -> tuple[Path, ...]:
        """The listed skills' folders, resolved — each only when it is really an entry of its
        skills folder (not a link leading elsewhere)."""
        out: list[Path] = []
        for doc in self.list():
            real = doc.root.resolve()
            if real.parent == doc.root.parent.resolve():
                out.append(real)
        return tuple(out)


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
    for tool in doc.grants:  # `allowed-tools`: a standing permission, like "always" (docstring)
        ctx.surface.guard.allow_tool_for_session(tool)
    out: dict[str, Any] = {
        "name": doc.name,
        "description": doc.description,
        "instructions": doc.body,
        "root": str(doc.root),
        "files": files,
    }
    if doc.grants:
        out["allowed_tools"] = f"these run without asking from now on: {', '.join(doc.grants)}"
    if doc.not_granted:
        out["not_granted"] = list(doc.not_granted)
    if len(doc.files) > MAX_FILES_LISTED:
        out["files_truncated"] = f"showing {MAX_FILES_LISTED} of {len(doc.files)} files"
    return out
