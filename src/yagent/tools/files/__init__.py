"""yagent.tools.files: the file tool executors.

`read_file` (paged, budgeted, byte-faithful), `write_file` (atomic), `search_replace_in_file`
(exact unique replacement with the one CRLF fallback), `list_dir` and `print_dir_tree`
(.gitignore-aware). Each module states its own contract; the limits are module-level values in
the module that applies them (`read.MAX_READ_LINES`, `edit.MAX_EDIT_BYTES`, …) so tests can lower
them. Every executor resolves paths through the workspace guard and reports the file it acted on
as `path` (workspace-relative inside the workspace).

The package imports nothing: each executor is imported from its module (`read`, `write`, `edit`,
`listing`), so what the host needs of this package before any file tool runs — the edit journal
(`journal`), the judged paths (`judged`) — loads without the executors.
"""
