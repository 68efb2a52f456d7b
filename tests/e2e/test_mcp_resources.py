"""Resources and prompts through the real product: `yagent run --json` (the read-only Repo agent)
against a scripted OpenAI-compatible server, with the real server-everything in `[mcp.ev]`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_mcp_inbound import EXIT, results, run
from tests.mcpservers import everything_stdio
from yagent.llm.scripted import call

pytestmark = pytest.mark.timeout(180)


def test_resource_refs_in_the_task_and_resource_and_prompt_tools(tmp_path: Path) -> None:
    read = call(
        "ev__mcp_read_resource", json.dumps({"uri": "demo://resource/dynamic/text/2"}), call_id="r"
    )
    prompt = call(
        "ev__mcp_get_prompt",
        json.dumps({"name": "args-prompt", "arguments": {"city": "Oslo"}}),
        call_id="p",
    )
    task = "Summarise @ev:demo://resource/dynamic/text/1, and @nope:demo://x/1."
    done, lines, received = run(
        tmp_path, [read, prompt, EXIT], everything_stdio(), ("-y", "--agent", "repo"), task
    )
    assert done.returncode == 0, done.stderr[-3000:]
    first = received[0].body["messages"]
    user = next(m["content"] for m in first if m["role"] == "user")
    assert "[@ev:demo://resource/dynamic/text/1: resource from MCP server ev, untrusted" in user
    assert "Resource 1: This is a plaintext resource" in user
    assert "no MCP server named 'nope' is configured (ev)" in user
    got = results(lines)
    assert got["r"]["ok"], got["r"]  # read-only: the Repo agent may use it
    assert "demo://resource/dynamic/text/2" in got["r"]["content"]
    assert got["p"]["ok"], got["p"]
    assert "What's weather in Oslo?" in got["p"]["content"]
    refs = next(x for x in lines if x.get("type") == "mcp_resource_ref")["references"]
    assert [r["ok"] for r in refs] == [True, False]
