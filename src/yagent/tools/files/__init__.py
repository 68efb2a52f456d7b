"""yagent.tools.files: the file tool executors.

`read_file` (paged, budgeted, byte-faithful), `write_file` (atomic), `search_replace_in_file`
(exact unique replacement with the one CRLF fallback), `list_dir` and `print_dir_tree`
(.gitignore-aware). Each module states its own contract; the limits are module-level values in
the module that applies them (`read.MAX_READ_LINES`, `edit.MAX_EDIT_BYTES`, …) so tests can lower
them. Every executor resolves paths through the workspace guard and reports the file it acted on
as `path` (workspace-relative inside the workspace).
"""

from __future__ import annotations

from yagent.tools.files.edit import search_replace_in_file
from yagent.tools.files.listing import list_dir, print_dir_tree
from yagent.tools.files.read import read_file
from yagent.tools.files.write import write_file

__all__ = [
    "list_dir",
    "print_dir_tree",
    "read_file",
    "search_replace_in_file",
    "write_file",
]
