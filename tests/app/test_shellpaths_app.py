"""Issue 13 item 2 in the assembled app: a shell line naming a path outside the workspace is a
question, and refused (nobody to ask: every question answered no) it is denied — through the real
judgement ring, the built-in shell rules (which allow `cat`, `grep`, `git diff`), the real
`run_bash` and bwrap. The outside target is a sibling temp dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yagent.agents import catalog
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.llm.scripted import ScriptedEngine, call

MARKER = catalog.builtin("coding", 0).marker
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- shellpaths"


def _hex(path: Path) -> str:
    return "$'" + "".join(f"\\x{ord(c):02x}" for c in str(path)) + "'"


@pytest.mark.anyio
async def test_outside_paths_on_allowed_commands_are_refused(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    secret = ws.parent / "outside" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text(KEY + "\n")
    (ws / "a.txt").write_text("inside\n")
    deep = "../" * len(ws.parts) + str(secret).lstrip("/")
    attempts = [
        f"cat {deep}",
        f"cat {_hex(secret)}",
        f"cat {{{secret},a.txt}}",
        "grep -r BEGIN ../..",
        "git diff --no-index ../outside/.ssh/id_rsa a.txt",
    ]
    script = [
        call("run_bash", json.dumps({"command": line}), call_id=f"c{i}")
        for i, line in enumerate([*attempts, "cat a.txt"])
    ]
    script.append(call("agent_exit", json.dumps({"reason": "r"}), call_id="end"))
    engine = ScriptedEngine({"coding": script}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        session_id, _ = await app.run("t", agent_name="coding")
        records = app.store.tool_calls(session_id)
    *refused, control, _ = records
    assert len(refused) == len(attempts)
    for line, record in zip(attempts, refused, strict=True):
        assert not record.ok, line
        assert "outside the workspace" in (record.content or ""), (line, record.content)
        assert KEY not in (record.content or "")
    assert control.ok, "the same command on a workspace file runs"
    assert "inside" in (control.content or "")
