"""Tool schemas as both providers accept them, and the catalog line (title and a short
description) — from the real server-everything, and for the shapes it does not produce."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.types import Tool, ToolAnnotations

from tests.mcpservers import everything_stdio
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.mcp.client import McpTools
from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.specs import to_spec
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)


@pytest.mark.anyio
async def test_real_schemas_reach_providers_clean_and_the_catalog_shows_title_and_purpose(
    workspace: Path,
) -> None:
    async with McpTools((ServerConfig.from_mapping("ev", everything_stdio()),)) as mcp:
        options = SurfaceOptions(deferred=True)
        surface = Surface(
            BUILTIN,
            profile("coding"),
            WorkspaceGuard(workspace),
            external=mcp.specs,
            options=options,
        )
        catalog = surface.catalog_text()
        defs = [s.tool_def() for s in mcp.specs]
    assert "ev__echo" in catalog
    assert "Echo Tool — Echoes back the input string" in catalog
    text = json.dumps(defs)
    assert "$schema" not in text
    for d in defs:
        params = d["parameters"]
        assert params["type"] == "object"
        assert not {"anyOf", "oneOf", "allOf", "not"} & set(params)


def test_top_level_combinators_are_folded_and_the_rule_is_said() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"mode": {"type": "string"}},
        "oneOf": [
            {"properties": {"path": {"type": "string"}}, "required": ["path", "mode"]},
            {"properties": {"url": {"type": "string"}}, "required": ["url", "mode"]},
        ],
    }
    spec = to_spec("s", Tool(name="fetch", input_schema=schema, annotations=READ), 10.0)
    params = spec.parameters
    assert set(params["properties"]) == {"mode", "path", "url"}
    assert params["required"] == ["mode"]  # only what every branch requires
    assert "oneOf" not in params
    assert "$schema" not in params
    assert "must also satisfy" in spec.description
    assert '"required": ["path", "mode"]' in spec.description
    assert "called without arguments" not in spec.description


def test_all_of_requires_every_branchs_fields() -> None:
    schema = {
        "type": "object",
        "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ],
    }
    spec = to_spec("s", Tool(name="t", input_schema=schema, annotations=READ), 10.0)
    assert spec.parameters["required"] == ["a", "b"]
    assert set(spec.parameters["properties"]) == {"a", "b"}


def test_catalog_line_without_a_title_is_the_first_sentence() -> None:
    tool = Tool(
        name="t", description="Does one thing. Then more detail.", input_schema={}, annotations=READ
    )
    assert to_spec("s", tool, 10.0).brief == "Does one thing."
