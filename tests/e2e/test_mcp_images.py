"""Images from an MCP tool (server-everything's get-tiny-image) through the real product:
`yagent run --json` against scripted OpenAI-compatible and Anthropic servers. A model that takes
images gets the image; one that does not gets a placeholder with the type and size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_mcp_inbound import EXIT, results, run
from tests.mcpservers import everything_stdio
from yagent.llm.scripted import call

pytestmark = pytest.mark.timeout(180)
IMAGE = call("ev__get-tiny-image", "{}", call_id="img")


def parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for m in body["messages"]
        if isinstance(m.get("content"), list)
        for part in m["content"]
    ]


def test_openai_compatible_model_with_vision_gets_the_image(tmp_path: Path) -> None:
    done, lines, received = run(
        tmp_path, [IMAGE, EXIT], everything_stdio(), ("-y",), llm="vision = true"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "attached as image 1" in results(lines)["img"]["content"]
    messages = received[1].body["messages"]
    roles = [m["role"] for m in messages]
    assert roles[-2:] == ["tool", "user"]  # the images follow the run of tool messages
    urls = [p["image_url"]["url"] for p in parts(received[1].body) if p["type"] == "image_url"]
    assert len(urls) == 1
    assert urls[0].startswith("data:image/png;base64,iVBOR")
    labels = [p["text"] for p in parts(received[1].body) if p["type"] == "text"]
    assert "image 1 returned by tool call img (ev__get-tiny-image)" in labels


def test_a_model_without_vision_gets_a_placeholder_not_the_bytes(tmp_path: Path) -> None:
    done, lines, received = run(tmp_path, [IMAGE, EXIT], everything_stdio(), ("-y",))
    assert done.returncode == 0, done.stderr[-3000:]
    content = results(lines)["img"]["content"]
    assert "[image image/png," in content
    assert "not shown to this model" in content
    assert not [p for p in parts(received[1].body) if p.get("type") == "image_url"]
    assert "iVBOR" not in str(received[1].body)


def test_anthropic_gets_the_image_inside_the_tool_result(tmp_path: Path) -> None:
    done, _, received = run(
        tmp_path, [IMAGE, EXIT], everything_stdio(), ("-y",), provider="anthropic"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    tool_results = [p for p in parts(received[1].body) if p.get("type") == "tool_result"]
    blocks = tool_results[0]["content"]
    assert blocks[0]["type"] == "text"
    assert "attached as image 1" in blocks[0]["text"]
    assert blocks[1]["type"] == "image"
    assert blocks[1]["source"]["media_type"] == "image/png"
    assert blocks[1]["source"]["data"].startswith("iVBOR")
