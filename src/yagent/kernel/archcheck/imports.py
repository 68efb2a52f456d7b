"""Every way a Python file can import, collected from its syntax tree.

Forms: `import a.b`, `from a import b`, relative `from ..a import b` (resolved against the file's
own package), imports nested in functions, classes or `if TYPE_CHECKING:` blocks (the whole tree is
walked, so nesting never hides one), `importlib.import_module("literal")` (also with a literal
relative name and `package=`), `import_module("literal")` and `__import__("literal")`. Dynamic
imports with a non-literal name cannot be judged and are not reported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ImportRef:
    """One import statement or call.

    `base` is the absolute dotted module the statement names (`a.b` for `from a.b import c`), or
    None when a relative import climbs above the top-level package. `names` are the names after
    `import` in a `from` form: each may itself be a submodule of `base`.
    """

    line: int
    base: str | None
    names: tuple[str, ...]
    form: str


def module_name(rel_to_source_root: str) -> str:
    """`a/b/c.py` → `a.b.c`; a package's `__init__.py` → the package itself."""
    parts = rel_to_source_root.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(rel_to_source_root: str) -> str:
    """The package a relative import in this file is resolved against."""
    parts = rel_to_source_root.removesuffix(".py").split("/")
    return ".".join(parts[:-1])


def resolve_relative(package: str, level: int, module: str | None) -> str | None:
    """Absolute name of `from {'.' * level}{module} import ...` written inside `package`."""
    parts = package.split(".") if package else []
    keep = len(parts) - (level - 1)
    if keep < 1:
        return None
    base = parts[:keep]
    if module:
        base.append(module)
    return ".".join(base)


def _literal(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _dynamic_call(node: ast.Call, package: str) -> ImportRef | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id == "__import__":
        name = _literal(node.args[0]) if node.args else None
        return ImportRef(node.lineno, name, (), "__import__") if name else None
    is_import_module = (isinstance(func, ast.Name) and func.id == "import_module") or (
        isinstance(func, ast.Attribute)
        and func.attr == "import_module"
        and isinstance(func.value, ast.Name)
        and func.value.id == "importlib"
    )
    if not is_import_module or not node.args:
        return None
    name = _literal(node.args[0])
    if name is None:
        return None
    if not name.startswith("."):
        return ImportRef(node.lineno, name, (), "import_module")
    anchor = package
    for kw in node.keywords:
        if kw.arg == "package":
            anchor = _literal(kw.value) or package
    if len(node.args) > 1:
        anchor = _literal(node.args[1]) or package
    level = len(name) - len(name.lstrip("."))
    resolved = resolve_relative(anchor, level, name.lstrip(".") or None)
    return ImportRef(node.lineno, resolved, (), "import_module")


def collect(tree: ast.AST, package: str) -> list[ImportRef]:
    """All imports in `tree`, a file whose relative imports resolve against `package`."""
    refs: list[ImportRef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            refs.extend(ImportRef(node.lineno, alias.name, (), "import") for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names if alias.name != "*")
            if node.level:
                base = resolve_relative(package, node.level, node.module)
                refs.append(ImportRef(node.lineno, base, names, "relative from-import"))
            else:
                refs.append(ImportRef(node.lineno, node.module or "", names, "from-import"))
        elif isinstance(node, ast.Call):
            ref = _dynamic_call(node, package)
            if ref is not None:
                refs.append(ref)
    refs.sort(key=lambda r: r.line)
    return refs


def top_level_names(tree: ast.AST) -> set[str]:
    """Top-level names of the absolute imports in `tree` (what a dependency list speaks of)."""
    return {
        ref.base.split(".")[0]
        for ref in collect(tree, "")
        if ref.base and ref.form != "relative from-import"
    }
