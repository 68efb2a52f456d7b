"""ignorewalk: walk a tree the way ripgrep does — ignore files, `--glob` filters, sorted order.

One walk for every tool that must agree with `rg` on which files exist: the pure-Python
fallback of `search` and the code-graph tools. `globs` holds the glob grammar, `tree` the ignore
precedence, `walk` the traversal and the filter.
"""

from yagent.tools.ignorewalk.globs import Glob, GlobError, GlobList, parse_line, to_regex
from yagent.tools.ignorewalk.tree import IGNORE_FILES, IgnoreTree
from yagent.tools.ignorewalk.walk import SKIPPED_NAMES, Filter, Visibility, walk_files

__all__ = [
    "IGNORE_FILES",
    "SKIPPED_NAMES",
    "Filter",
    "Glob",
    "GlobError",
    "GlobList",
    "IgnoreTree",
    "Visibility",
    "parse_line",
    "to_regex",
    "walk_files",
]
