"""A browser screenshot reaches the model as an image through the real product: a
`yagent run --agent browser --json` process, real headless Chromium on a loopback dev server
(opened with `--allow-local`), and a recording wire server standing in for the provider.

A model that takes images (Anthropic, or OpenAI-compatible with `[llm] vision = true`) receives
the very PNG that was saved; one that does not receives the text result only, which says so.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_providers import anthropic_reply, openai_reply
from tests.llm.wire import WireServer
from tests.tools.browser.site import Site, serve
from yagent.llm.scripted import call

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve() as s:
        yield s


def run(
    tmp_path: Path, site: Site, provider: str, llm: str = ""
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    turns = [
        call("browser_navigate", json.dumps({"url": site.url("/")}), call_id="nav"),
        call("browser_screenshot", json.dumps({"path": "page.png"}), call_id="shot"),
        call("agent_exit", json.dumps({"reason": "done", "summary": "looked"}), call_id="x"),
    ]
    reply = anthropic_reply if provider == "anthropic" else openai_reply
    with WireServer([reply(t) for t in turns]) as server:
        base = server.url if provider == "anthropic" else f"{server.url}/v1"
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "{provider}"\nmodel = "m-test"\nbase_url = "{base}"\n{llm}\n'
            "step_retries = 0\n[agent]\ndeferred_tools = false\n"
        )
        env = {
            **os.environ,
            "YAGENT_HOME": str(home),
            "OPENAI_API_KEY": "sk-test-not-real",
            "ANTHROPIC_API_KEY": "sk-ant-test-not-real",
        }
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
            env.pop(name, None)
        argv = [sys.executable, "-m", "yagent.cli", "run", "--json", "-y", "-C", str(ws)]
        argv += ["--agent", "browser", "--allow-local", str(site.port), "look at the app"]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=200)
        bodies = [r.body for r in server.received]
    return done, bodies


def parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for m in body["messages"]
        if isinstance(m.get("content"), list)
        for part in m["content"]
    ]


def shot_text(body: dict[str, Any]) -> dict[str, Any]:
    """The screenshot's text result as the OpenAI-compatible model read it."""
    for message in body["messages"]:
        if message["role"] == "tool" and message["tool_call_id"] == "shot":
            content = message["content"]
            text = content if isinstance(content, str) else "".join(p["text"] for p in content)
            result = json.loads(text)
            assert isinstance(result, dict)
            return result
    raise AssertionError("no screenshot result in the request")


def test_openai_compatible_model_with_vision_sees_the_screenshot(
    tmp_path: Path, site: Site
) -> None:
    done, bodies = run(tmp_path, site, "openai", "vision = true")
    assert done.returncode == 0, done.stderr[-3000:]
    result = shot_text(bodies[2])
    assert result["seen_by_model"] is True
    saved = Path(result["path"]).read_bytes()
    urls = [p["image_url"]["url"] for p in parts(bodies[2]) if p["type"] == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(saved).decode("ascii")]
    labels = [p["text"] for p in parts(bodies[2]) if p["type"] == "text"]
    assert "image 1 returned by tool call shot (browser_screenshot)" in labels


def test_a_model_without_vision_reads_that_it_was_only_saved(tmp_path: Path, site: Site) -> None:
    done, bodies = run(tmp_path, site, "openai")
    assert done.returncode == 0, done.stderr[-3000:]
    result = shot_text(bodies[2])
    assert result["seen_by_model"] is False
    assert "browser_snapshot" in result["note"]
    assert Path(result["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in parts(bodies[2]) if p.get("type") == "image_url"]
    assert "iVBOR" not in json.dumps(bodies[2])


def test_anthropic_gets_the_screenshot_inside_the_tool_result(tmp_path: Path, site: Site) -> None:
    done, bodies = run(tmp_path, site, "anthropic")
    assert done.returncode == 0, done.stderr[-3000:]
    results = [
        p for p in parts(bodies[2]) if p.get("type") == "tool_result" and p["tool_use_id"] == "shot"
    ]
    blocks = results[0]["content"]
    assert blocks[0]["type"] == "text"
    result = json.loads(blocks[0]["text"])
    assert result["seen_by_model"] is True
    saved = Path(result["path"]).read_bytes()
    assert blocks[1]["type"] == "image"
    assert blocks[1]["source"]["media_type"] == "image/png"
    assert base64.b64decode(blocks[1]["source"]["data"]) == saved
