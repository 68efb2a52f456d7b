"""Dependency direction: who owns each file, and whether each import may cross its boundary.

Ownership: every Python file under `source_root` belongs to the module with the longest root that
contains it (a root is a directory, owning everything below it, or a single `.py` file). Judged:

- `import-boundary`: a file imports a first-party module owned by another module that its own
  module's `requires` does not list (and no `import_exempt` entry lets through), or owned by nobody;
- `kernel-purity`: a file of the kernel module imports first-party code outside the kernel — never
  allowed, whatever `requires` says;
- `unregistered-package`: Python files that no root owns are invisible to the gate;
- `stale-root`: a root that owns no Python file (missing, empty, or entirely claimed by longer
  roots) is a declaration that no longer describes the tree.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from yagent.kernel.archcheck import imports
from yagent.kernel.archcheck.files import python_files, read_text
from yagent.kernel.archcheck.model import (
    IMPORT_BOUNDARY,
    KERNEL_PURITY,
    POLICY_EXCEPTION,
    STALE_ROOT,
    UNREGISTERED_PACKAGE,
    Violation,
    parse_error,
)
from yagent.kernel.archcheck.policy import ImportExempt, Module, Policy


def claim(path: str, roots: list[tuple[str, Module]]) -> tuple[str, Module] | None:
    """The longest root containing `path` and its module (`roots` sorted longest first)."""
    for root, module in roots:
        if path == root or path.startswith(root + "/"):
            return root, module
    return None


def owner_of(path: str, roots: list[tuple[str, Module]]) -> Module | None:
    claimed = claim(path, roots)
    return None if claimed is None else claimed[1]


@dataclass
class SourceTree:
    """The Python files under the source root and the module names they define."""

    source_root: str
    files: list[str]
    paths: dict[str, str] = field(default_factory=dict)

    @classmethod
    def scan(cls, root: Path, source_root: str) -> SourceTree:
        tree = cls(source_root, python_files(root, source_root))
        prefix = len(source_root) + 1
        for path in tree.files:
            rel = path[prefix:]
            parts = rel.removesuffix(".py").split("/")
            for depth in range(1, len(parts)):
                package = ".".join(parts[:depth])
                tree.paths.setdefault(package, f"{source_root}/{'/'.join(parts[:depth])}")
            tree.paths[imports.module_name(rel)] = path
        return tree

    def rel(self, path: str) -> str:
        return path[len(self.source_root) + 1 :]

    def first_party(self, name: str) -> bool:
        return name.split(".")[0] in self.paths

    def path_of(self, name: str) -> str:
        return self.paths.get(name) or f"{self.source_root}/{name.replace('.', '/')}.py"

    def targets(self, ref: imports.ImportRef) -> list[str]:
        """The modules an import makes this file depend on (a `from` name may be a submodule)."""
        assert ref.base is not None
        if not ref.names:
            return [ref.base]
        found = {
            f"{ref.base}.{n}" if f"{ref.base}.{n}" in self.paths else ref.base for n in ref.names
        }
        return sorted(found)


class DependencyJudge:
    def __init__(self, root: Path, policy: Policy, policy_path: str) -> None:
        self.root = root
        self.policy = policy
        self.policy_path = policy_path
        pairs = [(r, m) for m in policy.modules for r in m.roots]
        self.roots = sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)
        self.tree = SourceTree.scan(root, policy.source_root)
        self.used_exempts: set[tuple[str, ImportExempt]] = set()
        self.violations: list[Violation] = []

    def judge(self) -> list[Violation]:
        owned: dict[str, Module] = {}
        unowned: list[str] = []
        claimed_roots: set[str] = set()
        for path in self.tree.files:
            claimed = claim(path, self.roots)
            if claimed is None:
                unowned.append(path)
            else:
                claimed_roots.add(claimed[0])
                owned[path] = claimed[1]
        self._stale_roots(claimed_roots)
        self._invisible(unowned)
        for path, module in owned.items():
            self._judge_file(path, module)
        for module in self.policy.modules:
            for exempt in module.import_exempt:
                if (module.id, exempt) not in self.used_exempts:
                    self._add(
                        self.policy_path,
                        0,
                        POLICY_EXCEPTION,
                        f"stale import_exempt {exempt.target!r} of module {module.id!r}: no import "
                        "needs it any more; remove it",
                    )
        return self.violations

    def _add(self, path: str, line: int, rule: str, message: str) -> None:
        self.violations.append(Violation(path, line, rule, message))

    def _stale_roots(self, claimed_roots: set[str]) -> None:
        for module in self.policy.modules:
            for root in module.roots:
                if root in claimed_roots:
                    continue
                why = "is missing" if not (self.root / root).exists() else "owns no Python file"
                self._add(
                    root,
                    0,
                    STALE_ROOT,
                    f"root {root!r} of module {module.id!r} {why}: the declaration no longer "
                    "describes the tree (remove the root or restore the code)",
                )

    def _invisible(self, unowned: list[str]) -> None:
        units: dict[str, int] = {}
        all_roots = [r for r, _ in self.roots]
        for path in unowned:
            parts = path.split("/")
            unit = path
            for depth in range(len(self.tree.source_root.split("/")) + 1, len(parts)):
                candidate = "/".join(parts[:depth])
                if not any(r == candidate or r.startswith(candidate + "/") for r in all_roots):
                    unit = candidate
                    break
            units[unit] = units.get(unit, 0) + 1
        for unit, count in sorted(units.items()):
            kind = "module file" if unit.endswith(".py") else f"package directory ({count} files)"
            self._add(
                unit,
                0,
                UNREGISTERED_PACKAGE,
                f"{kind} {unit!r} is registered in no module: invisible to the gate "
                "(add it to a module's roots in the policy)",
            )

    def _judge_file(self, path: str, module: Module) -> None:
        try:
            tree = ast.parse(read_text(self.root, path), filename=path)
        except SyntaxError as exc:
            self.violations.append(parse_error(path, exc))
            return
        package = imports.package_of(self.tree.rel(path))
        if path.endswith("/__init__.py"):
            package = imports.module_name(self.tree.rel(path))
        for ref in imports.collect(tree, package):
            if ref.base is None:
                self._add(
                    path,
                    ref.line,
                    IMPORT_BOUNDARY,
                    "relative import climbs above the top-level package",
                )
                continue
            for target in self.tree.targets(ref):
                if self.tree.first_party(target):
                    self._judge_import(path, ref, target, module)

    def _judge_import(self, path: str, ref: imports.ImportRef, target: str, module: Module) -> None:
        target_owner = owner_of(self.tree.path_of(target), self.roots)
        owner_name = "no module" if target_owner is None else f"module {target_owner.id!r}"
        kernel = self.policy.kernel
        if kernel and kernel.forbid_outside and module.id == kernel.module:
            if target_owner is None or target_owner.id != kernel.module:
                self._add(
                    path,
                    ref.line,
                    KERNEL_PURITY,
                    f"the kernel imports {target!r} ({owner_name}, via {ref.form}): the kernel "
                    "never imports first-party code outside itself, whatever `requires` says",
                )
            return
        if target_owner is None:
            self._add(
                path,
                ref.line,
                IMPORT_BOUNDARY,
                f"module {module.id!r} imports {target!r} (via {ref.form}), which no module owns",
            )
            return
        if target_owner.id == module.id or target_owner.id in module.requires:
            return
        for exempt in module.import_exempt:
            if target == exempt.target or target.startswith(exempt.target + "."):
                self.used_exempts.add((module.id, exempt))
                return
        self._add(
            path,
            ref.line,
            IMPORT_BOUNDARY,
            f"module {module.id!r} imports {target!r} of module {target_owner.id!r} (via "
            f"{ref.form}), but its requires does not list {target_owner.id!r}",
        )
