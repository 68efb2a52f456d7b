"""An MCP tool result's content blocks as text for the model.

Contract:
- Text blocks are kept as they are. Audio, and images when the model does not take images,
  become a placeholder naming their MIME type and decoded size (the model is told what it did
  not get, never silence). When the host says the model takes images (`VISION_KEY`), an image
  (PNG, JPEG, GIF, WebP; at most `IMAGE_BYTES` decoded, `IMAGE_LIMIT` per result) is collected
  for the model and its placeholder says "attached as image N"; one it cannot attach says why.
  A `resource_link` keeps its URI, name, title and MIME type; an embedded resource keeps its
  text (a binary one: its URI, MIME type and decoded size).
- Annotations: a block whose `audience` excludes the assistant (only "user") is not given to the
  model — its omission is said in one line; `priority` orders nothing but is shown when declared.
- An unknown block type is named, not dropped.
Everything returned still passes the host's untrusted-text neutraliser on its way to the model.
"""

from __future__ import annotations

from typing import Any

from yagent.tools.invocation import Slot

VISION_KEY: Slot[bool] = Slot("model_takes_images")  # services: the model accepts images
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
IMAGE_BYTES = 3 * 1024 * 1024  # decoded, per image
IMAGE_LIMIT = 4  # per tool result


def _size(data: str) -> int:
    """Decoded size of base64 text, in bytes."""
    stripped = data.rstrip("=")
    return len(stripped) * 3 // 4


def _priority(item: Any) -> str:
    priority = getattr(getattr(item, "annotations", None), "priority", None)
    return f" (priority {priority:g})" if isinstance(priority, int | float) else ""


def _for_user_only(item: Any) -> bool:
    audience = getattr(getattr(item, "annotations", None), "audience", None) or ()
    return bool(audience) and "assistant" not in list(audience)


def _resource(res: Any) -> str:
    uri = getattr(res, "uri", "?")
    mime = getattr(res, "mime_type", None) or "?"
    text = getattr(res, "text", None)
    if isinstance(text, str):
        return f"[resource {uri} ({mime})]\n{text}"
    blob = getattr(res, "blob", "") or ""
    return f"[resource {uri}: binary {mime}, {_size(blob)} bytes, not shown]"


def _image(item: Any, images: list[tuple[str, str]] | None) -> str:
    mime = getattr(item, "mime_type", None) or "?"
    data = getattr(item, "data", "") or ""
    size = _size(data)
    head = f"[image {mime}, {size} bytes"
    if images is None:
        return f"{head}: not shown to this model]"
    if mime not in IMAGE_TYPES:
        return f"{head}: not attached, the model takes only {', '.join(IMAGE_TYPES)}]"
    if size > IMAGE_BYTES:
        return f"{head}: not attached, over the {IMAGE_BYTES} byte limit]"
    if len(images) >= IMAGE_LIMIT:
        return f"{head}: not attached, over the {IMAGE_LIMIT} images per result limit]"
    images.append((mime, data))
    return f"{head}: attached as image {len(images)}]"


def render_block(item: Any, images: list[tuple[str, str]] | None = None) -> str:
    """One block as text; with `images` (the model takes images) an image is appended there."""
    kind = getattr(item, "type", "")
    if kind == "text":
        return str(item.text) + _priority(item)
    if kind == "image":
        return _image(item, images) + _priority(item)
    if kind == "audio":
        mime = getattr(item, "mime_type", None) or "?"
        size = _size(getattr(item, "data", "") or "")
        return f"[{kind} {mime}, {size} bytes: not shown to this model]{_priority(item)}"
    if kind == "resource_link":
        name = getattr(item, "name", "") or ""
        title = getattr(item, "title", None)
        mime = getattr(item, "mime_type", None) or "?"
        label = f"{name} — {title}" if title else name
        return f"[resource link {item.uri} ({mime}): {label}]{_priority(item)}"
    if kind == "resource":
        return _resource(getattr(item, "resource", None)) + _priority(item)
    return f"[{kind or 'unknown'} content: not understood by yagent]"


def render_content(items: Any, images: list[tuple[str, str]] | None = None) -> str:
    parts: list[str] = []
    hidden = 0
    for item in items or ():
        if _for_user_only(item):
            hidden += 1
            continue
        parts.append(render_block(item, images))
    if hidden:
        parts.append(f"[{hidden} content block(s) meant for the user only, not shown]")
    return "\n".join(parts)
