"""A fixture tree for the search tests: ignore files of every kind, hidden, binary, CRLF, long
lines, non-UTF-8 bytes, a symlink and a `.git` directory — each with a `needle` that must or must
not be found."""

from __future__ import annotations

import os
from pathlib import Path

FILES: dict[str, bytes] = {
    ".gitignore": b"build/\n*.log\n!keep.log\nsecret.py\n/rootonly.txt\n",
    ".ignore": b"dot_ignored.txt\n",
    ".git/HEAD": b"needle in git metadata\n",
    ".git/info/exclude": b"excluded.txt\n",
    "src/app.py": b"import os\n\ndef needle():\n    return 'Needle'\n\nNEEDLE = needle()\n",
    "src/util/helpers.py": b"# a needle in a comment\nx = 1\nneedle(\n",
    "src/.hidden_conf": b"needle = hidden\n",
    "src/sub/.gitignore": b"generated.py\n!important.log\n",
    "src/sub/generated.py": b"needle generated\n",
    "src/sub/kept.py": b"needle kept\n",
    "src/sub/important.log": b"needle important\n",
    "src/rootonly.txt": b"needle not at the root\n",
    "build/out.py": b"needle built\n",
    "debug.log": b"needle debug\n",
    "keep.log": b"needle kept log\n",
    "secret.py": b"needle secret\n",
    "rootonly.txt": b"needle at the root\n",
    "excluded.txt": b"needle excluded\n",
    "dot_ignored.txt": b"needle dot-ignored\n",
    "data.bin": b"needle\x00binary\n",
    "notes.md": b"first needle\r\nsecond line\r\nneedle(3) here\r\n",
    "long.txt": b"x" * 1000 + b" needle " + b"y" * 1000 + b"\n",
    "unicode.txt": "héllo needle ü NEEDLE\n".encode(),
    "latin1.txt": b"caf\xe9 needle\n",
    "docs/a.txt": b"needle a\n",
    "docs/b.md": b"needle b\n",
}

# What a plain `needle` search (case-sensitive) finds: path -> matching line numbers.
VISIBLE_NEEDLES: dict[str, list[int]] = {
    "docs/a.txt": [1],
    "docs/b.md": [1],
    "keep.log": [1],
    "latin1.txt": [1],
    "long.txt": [1],
    "notes.md": [1, 3],
    "src/.hidden_conf": [1],
    "src/app.py": [3, 6],
    "src/rootonly.txt": [1],
    "src/sub/important.log": [1],
    "src/sub/kept.py": [1],
    "src/util/helpers.py": [1, 3],
    "unicode.txt": [1],
}


def build(ws: Path) -> Path:
    for rel, data in FILES.items():
        target = ws / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    os.symlink(ws / "src", ws / "link_to_src")  # never followed
    return ws
