"""Secrets in yagent's own process against the real product, under `-y` (outside paths approved):
a `yagent run --json -y` process (real bubblewrap, default preset) against a scripted
OpenAI-compatible server on loopback, with an API key, a token and a password in its environment.

The sandbox gives commands a scrubbed environment and its own `/proc`; the file tools and
`search` run in yagent's process, where `/proc/self/environ` holds the keys. No route — reading,
searching the file or its directory, through `/proc/self`, `/proc/thread-self`, the pid, or a
shell command — may bring a secret to the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.test_attacks_floods import run as flood_run

SECRETS = {
    "OPENAI_API_KEY": "sk-APIKEY-9d1e",
    "GITHUB_TOKEN": "ghp-TOKEN-51c0",
    "DB_PASSWORD": "PASSWORD-77aa",
}


def run(tmp_path: Path, batch: list[tuple[str, dict[str, Any]]]) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir()
    return flood_run(tmp_path, ws, batch, secrets=SECRETS)


def test_no_route_brings_yagents_own_environment_to_the_model(tmp_path: Path) -> None:
    pattern = "APIKEY|TOKEN|PASSWORD"
    batch: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "/proc/self/environ"}),
        ("read_file", {"path": "/proc/thread-self/environ"}),
        ("search", {"pattern": pattern, "path": "/proc/self/environ"}),
        ("search", {"pattern": pattern, "path": "/proc/thread-self/environ"}),
        ("search", {"pattern": "TOKEN", "path": "/proc/self/environ", "fixed_strings": True}),
        ("search", {"pattern": pattern, "path": "/proc/self/task"}),
        ("search", {"pattern": pattern, "path": "/proc/self", "glob": "environ"}),
        ("run_bash", {"command": "env; cat /proc/$PPID/environ /proc/1/environ | tr '\\0' '\\n'"}),
    ]
    sent, results = run(tmp_path, batch)
    for result in results:
        for value in SECRETS.values():
            assert value not in result["content"], result
    for result in results[:5]:  # the file itself, by any name: refused, saying why
        assert "would read a process's environment" in result["content"], result
    for body in sent:
        text = json.dumps(body)
        for value in SECRETS.values():
            assert value not in text
