"""The swap race against `search`, through the real product: a `yagent run --json -y` process
(real bubblewrap, default preset) against a scripted OpenAI-compatible server on loopback.

A background job in the session sandbox swaps `ws/d` between a directory inside the workspace
and a symbolic link to the person's `~/.ssh` (a credential store: hidden from every tool, `-y`
included) as fast as it can, while the model searches `d` again and again. `search` runs in
yagent's own process: it must search what was judged — the directory inside, or nothing (the
path judged as the hidden one is refused) — never the store the link points to a moment later.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.test_attacks_floods import run

SECRET = "BEGIN-KEY-6d2f"
SEARCHES = 150
FLIPPER = """
import os, sys
name, outside = sys.argv[1:3]
held, link = name + ".dir", name + ".link"
os.symlink(outside, link)
while True:  # `name` is a directory inside, then a link to `outside`, then the directory again
    os.rename(name, held)
    os.rename(link, name)
    os.rename(name, link)
    os.rename(held, name)
"""


def test_search_through_a_flipping_link_never_reads_the_hidden_store(tmp_path: Path) -> None:
    ssh = tmp_path / ".ssh"  # the run's HOME is tmp_path
    ssh.mkdir()
    (ssh / "id_rsa").write_text(f"{SECRET} KEY\n")
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "id_rsa").write_text("public KEY\n")
    (ws / "flip.py").write_text(FLIPPER)
    flip = f"python3 flip.py d {ssh}"
    batch: list[tuple[str, dict[str, Any]]] = [
        ("run_bash", {"command": flip, "is_background": True}),
        *[("search", {"pattern": "KEY", "path": "d"}) for _ in range(SEARCHES)],
    ]
    sent, results = run(tmp_path, ws, batch)
    found = [json.loads(r["content"]) for r in results[1 : 1 + SEARCHES]]
    assert all(SECRET not in r["content"] for r in results)
    for body in sent:
        assert SECRET not in json.dumps(body)
    inside = sum(1 for f in found if "public KEY" in json.dumps(f))
    assert inside > 0, "some searches ran while `d` was the directory inside"
