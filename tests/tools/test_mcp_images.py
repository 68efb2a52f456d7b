"""Which images of a tool result are attached for a model that takes images, and what the text
says about each (the path through a real server is tests/e2e/test_mcp_images.py)."""

from __future__ import annotations

import base64

import mcp_types as types

from yagent.tools.mcp import content


def image(mime: str, size: int) -> types.ImageContent:
    return types.ImageContent(
        type="image", mime_type=mime, data=base64.b64encode(b"x" * size).decode()
    )


def test_attached_images_are_bounded_and_each_refusal_is_said() -> None:
    blocks = [
        image("image/png", 10),
        image("image/tiff", 10),
        image("image/jpeg", content.IMAGE_BYTES + 1),
        *[image("image/png", 5) for _ in range(content.IMAGE_LIMIT)],
    ]
    got: list[tuple[str, str]] = []
    text = content.render_content(blocks, got)
    assert len(got) == content.IMAGE_LIMIT
    assert got[0][0] == "image/png"
    lines = text.splitlines()
    assert lines[0] == "[image image/png, 10 bytes: attached as image 1]"
    assert "not attached, the model takes only" in lines[1]
    assert "over the" in lines[2]
    assert "byte limit" in lines[2]
    assert lines[-1].endswith(f"over the {content.IMAGE_LIMIT} images per result limit]")


def test_without_vision_nothing_is_collected() -> None:
    text = content.render_content([image("image/png", 10)])
    assert text == "[image image/png, 10 bytes: not shown to this model]"
