"""G10: every built-in agent's tool surface, pinned in a golden file.

`golden/tool_surface.txt` lists, per built-in agent (catalog order), every built-in tool its
profile grants, sorted by name, with the tool's effect, tier and `serial` flag. A change of any
agent's tools — a tool added to the registry, a profile widened or narrowed, an effect changed —
turns this test red until the golden file is rewritten on purpose:

    YAGENT_UPDATE_GOLDEN=1 pytest tests/agents/test_tool_surface.py

then review the diff of `tests/agents/golden/tool_surface.txt` and commit it with the change.
"""

from __future__ import annotations

import os
from pathlib import Path

from yagent.agents import catalog
from yagent.toolspec.builtin import BUILTIN

GOLDEN = Path(__file__).parent / "golden" / "tool_surface.txt"


def render() -> str:
    lines = ["# agent → tools its profile grants: name, effect, tier, serial (generated)"]
    for name in catalog.BUILTIN_AGENTS:
        agent = catalog.builtin(name, step_retries=0)
        lines += ["", f"[{name}] profile={agent.profile.name}"]
        for spec in sorted(BUILTIN, key=lambda s: s.name):
            if agent.profile.grants(spec):
                serial = " serial" if spec.serial else ""
                lines.append(f"  {spec.name} {spec.effect.value} {spec.tier.name.lower()}{serial}")
    return "\n".join(lines) + "\n"


def test_g10_agent_tool_surfaces_match_the_golden_file() -> None:
    got = render()
    if os.environ.get("YAGENT_UPDATE_GOLDEN"):
        GOLDEN.write_text(got, encoding="utf-8")
    assert got == GOLDEN.read_text(encoding="utf-8"), (
        "an agent's tool surface changed: if deliberate, rewrite the golden file with "
        "YAGENT_UPDATE_GOLDEN=1 (see this module's docstring)"
    )


def test_g10_render_is_deterministic_and_covers_every_agent() -> None:
    text = render()
    assert text == render()
    for name in catalog.BUILTIN_AGENTS:
        assert f"[{name}]" in text
    # the session tools are Meta's alone
    meta = text.split("[meta]")[1]
    assert "read_session read" in meta
    assert text.count("read_session") == 1
