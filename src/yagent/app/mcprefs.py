"""MCP resource references: `@<server>:<uri>` in a task brings that resource's content in.

Contract:
- A reference names a configured MCP server and a URI with a scheme (`@ev:demo://resource/1`);
  trailing punctuation is not part of it. `@session:` is never one (`app.sessionrefs`).
- Each distinct reference is read once through `tools.mcp.resources` (bounded by the server's
  `tool_timeout`) and appended to the task as a band naming its server and URI and saying it is
  untrusted; the content passes `reminder.neutralize` and is cut at `MAX_CHARS` with a visible note.
- A reference never silently disappears: an unknown server or a failed read becomes a band that
  says so. References are read from the person's own task only, never from appended bands.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from yagent.kernel.context import reminder
from yagent.kernel.judge import toolfail
from yagent.tools.mcp.connect import Servers

REFERENCE = re.compile(
    r"(?<![\w@])@([A-Za-z0-9_-]+):([A-Za-z][A-Za-z0-9+.-]*://[^\s]*[^\s.,;:!?)\]}'\"])"
)
MAX_CHARS = 8 * 1024


def references(task: str) -> list[tuple[str, str]]:
    """The distinct (server, uri) references in a task, in order."""
    found = ((m.group(1), m.group(2)) for m in REFERENCE.finditer(task))
    return list(dict.fromkeys(ref for ref in found if ref[0] != "session"))


async def expand(mcp: Servers, task: str) -> tuple[str, list[dict[str, Any]]]:
    """The bands to append to the task (one string, '' when none) and one fact per reference."""
    bands: list[str] = []
    facts: list[dict[str, Any]] = []
    for server, uri in references(task):
        head = f"@{server}:{uri}"
        link = mcp.links.get(server)
        if link is None:
            known = ", ".join(sorted(mcp.links)) or "none"
            bands.append(f"[{head}: no MCP server named {server!r} is configured ({known})]")
            facts.append({"server": server, "uri": uri, "ok": False, "error": "unknown server"})
            continue
        # the SDK-side reader loads only once a configured server is referenced
        from yagent.tools.mcp.resources import read_resource, run_bounded

        try:
            text = await run_bounded(link, functools.partial(read_resource, uri=uri))
        except toolfail.ToolFailure as exc:
            bands.append(f"[{head} could not be read: {exc}]")
            facts.append({"server": server, "uri": uri, "ok": False, "error": str(exc)})
            continue
        cut = len(text) > MAX_CHARS
        body = reminder.neutralize(text[:MAX_CHARS])
        note = f", cut at {MAX_CHARS} of {len(text)} chars" if cut else ""
        bands.append(
            f"[{head}: resource from MCP server {server}, untrusted content{note}]\n{body}\n"
            f"[end of {head}]"
        )
        facts.append({"server": server, "uri": uri, "ok": True, "chars": len(text), "cut": cut})
    return "\n\n".join(bands), facts
