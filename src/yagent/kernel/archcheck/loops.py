"""Import loops and pinned directions, judged on the module import graph of the source root.

The graph has one node per Python module (a package is its `__init__`) and one edge per import,
in every form `imports.collect` reads: imports under `if TYPE_CHECKING:` and inside functions
count, because hiding a loop there does not remove it — the two modules still cannot be
understood, tested or moved one without the other. Judged:

- `import-loop`: every strongly connected component of two or more modules is a loop, inside a
  package or across packages. A loop is let through only when the policy's `import_loops` ratchet
  lists every one of its modules (a loop that grows by one module fails); an entry that no longer
  matches a loop is itself a violation (the ratchet only tightens). The message gives one cycle,
  each step with the file and line of its import.
- `import-direction`: an edge from a module under an `import_directions` entry's `from` to a
  module under one of its `forbid` prefixes (a target inside `from` itself is never forbidden, so
  `forbid: [pkg]` means "imports nothing of pkg but itself").
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass
from pathlib import Path

from yagent.kernel.archcheck import imports
from yagent.kernel.archcheck.deps import SourceTree
from yagent.kernel.archcheck.files import read_text
from yagent.kernel.archcheck.model import IMPORT_DIRECTION, IMPORT_LOOP, Violation
from yagent.kernel.archcheck.policy import ImportDirection, LoopAllowance, Policy


@dataclass(frozen=True, slots=True)
class Edge:
    path: str
    line: int


Graph = dict[str, dict[str, Edge]]


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def build_graph(root: Path, source_root: str) -> Graph:
    """Module → {imported first-party module → where the first such import is}."""
    tree = SourceTree.scan(root, source_root)
    names = {imports.module_name(tree.rel(path)): path for path in tree.files}
    graph: Graph = {name: {} for name in names}
    for name, path in names.items():
        rel = tree.rel(path)
        anchor = name if rel.endswith("__init__.py") else imports.package_of(rel)
        try:
            syntax = ast.parse(read_text(root, path), filename=path)
        except SyntaxError:
            continue  # the dependency judge reports it as a parse error
        for ref in imports.collect(syntax, anchor):
            if ref.base is None or not tree.first_party(ref.base):
                continue
            for target in tree.targets(ref):
                if target in names and target != name:
                    graph[name].setdefault(target, Edge(path, ref.line))
    return graph


def components(graph: Graph) -> list[list[str]]:
    """Strongly connected components of two or more modules (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
    return sorted(found)


def cycle(graph: Graph, members: list[str]) -> list[str]:
    """One shortest cycle through the first member, staying inside the component."""
    inside = set(members)
    first = members[0]
    previous: dict[str, str] = {}
    frontier = [first]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for nxt in sorted(graph[node]):
                if nxt == first:
                    path = [node]
                    while path[-1] != first:
                        path.append(previous[path[-1]])
                    return [first, *reversed(path[:-1]), first]
                if nxt in inside and nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return [first, first]


def _describe(graph: Graph, steps: list[str]) -> str:
    hops = [
        f"{a} → {b} ({graph[a][b].path}:{graph[a][b].line})" for a, b in itertools.pairwise(steps)
    ]
    return "; ".join(hops)


def judge_loops(
    graph: Graph, allowed: tuple[LoopAllowance, ...], policy_path: str
) -> list[Violation]:
    out: list[Violation] = []
    used: set[int] = set()
    for members in components(graph):
        excuse = next((i for i, a in enumerate(allowed) if set(members) <= set(a.modules)), None)
        if excuse is not None:
            used.add(excuse)
            continue
        steps = cycle(graph, members)
        edge = graph[steps[0]][steps[1]]
        out.append(
            Violation(
                edge.path,
                edge.line,
                IMPORT_LOOP,
                f"import loop among {len(members)} modules ({', '.join(members)}): "
                f"{_describe(graph, steps)} — move the shared piece to a module both import, "
                "or invert one edge with a protocol or an argument; a TYPE_CHECKING or "
                "in-function import does not break it",
            )
        )
    out.extend(
        Violation(
            policy_path,
            0,
            IMPORT_LOOP,
            f"import_loops entry {sorted(allowance.modules)} no longer matches a loop: remove it "
            "(the ratchet only tightens)",
        )
        for i, allowance in enumerate(allowed)
        if i not in used
    )
    return out


def judge_directions(graph: Graph, directions: tuple[ImportDirection, ...]) -> list[Violation]:
    out: list[Violation] = []
    for rule in directions:
        for name in sorted(graph):
            if not under(name, rule.source):
                continue
            for target, edge in sorted(graph[name].items()):
                if under(target, rule.source):
                    continue
                banned = next((p for p in rule.forbid if under(target, p)), None)
                if banned is not None:
                    out.append(
                        Violation(
                            edge.path,
                            edge.line,
                            IMPORT_DIRECTION,
                            f"{name} imports {target}: {rule.source} must not import "
                            f"{banned} ({rule.reason})",
                        )
                    )
    return out


def judge_graph(root: Path, policy: Policy, policy_path: str) -> list[Violation]:
    graph = build_graph(root, policy.source_root)
    found = judge_loops(graph, policy.import_loops, policy_path)
    found += judge_directions(graph, policy.import_directions)
    return found
