"""Other agents' MCP server lists mapped onto yagent's tables (`app.mcpsources`), the importer's
plan (`app.mcpimport`), the config file edits (`app.mcpfiles`) and `.mcp.json` at load
(`app.mcpjson` through `app.config.load`), on real files in temporary directories."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from yagent.app import config, mcpfiles, mcpimport, trust
from yagent.app.mcpsources import (
    Found,
    McpSourceError,
    claude_server,
    codex_server,
    read_claude,
    read_codex,
)


@pytest.mark.parametrize(
    ("entry", "table"),
    [
        ({"command": "npx", "args": ["-y", "x"]}, {"command": "npx", "args": ["-y", "x"]}),
        ({"type": "stdio", "command": "s", "env": {"A": "b"}}, {"command": "s", "env": {"A": "b"}}),
        ({"type": "http", "url": "https://h/mcp"}, {"url": "https://h/mcp"}),
        (
            {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${T}"}},
            {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${T}"}},
        ),
    ],
)
def test_claude_entries_map(entry: dict[str, object], table: dict[str, object]) -> None:
    assert claude_server("s", entry) == Found("s", table)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"type": "sse", "url": "http://h/sse"}, "SSE transport is not supported"),
        ({"type": "ws", "url": "ws://h"}, "unknown type 'ws'"),
        ({"command": "s", "cwd": "/x"}, "unsupported field 'cwd'"),
        ({"command": "s", "args": ["${HOME}/x"]}, "'args' uses ${VAR} expansion"),
        ({"command": "${BIN}"}, "'command' uses ${VAR} expansion"),
        ({"url": "https://h/${PATH_PART}"}, "'url' uses ${VAR} expansion"),
        ({"url": "https://h", "headers": {"A": "${T:-x}"}}, "${VAR:-default}"),
        ({"url": "https://h", "headers": {"A": "Bearer $T"}}, "'headers' uses ${VAR}"),
        ({"command": "s", "args": "not-a-list"}, "'args' must be a list of strings"),
        ({"command": ""}, "'command' must be a non-empty string"),
    ],
)
def test_claude_entries_that_cannot_be_mapped_say_why(entry: dict[str, object], why: str) -> None:
    found = claude_server("s", entry)
    assert found.table is None
    assert why in found.why


def test_codex_entries_map_and_refuse_whole() -> None:
    full = {
        "command": "s",
        "args": ["a"],
        "env": {"K": "v"},
        "cwd": "/w",
        "startup_timeout_ms": 1500,
        "tool_timeout_sec": 9,
        "enabled": True,
    }
    assert codex_server("c", full).table == {
        "command": "s",
        "args": ["a"],
        "env": {"K": "v"},
        "cwd": "/w",
        "startup_timeout": 1.5,
        "tool_timeout": 9,
    }
    http = {"url": "https://h", "http_headers": {"X": "y"}, "env_http_headers": {"Z": "ZV"}}
    assert codex_server("c", http).table == {
        "url": "https://h",
        "headers": {"X": "y", "Z": "${ZV}"},
    }
    for entry, why in (
        ({"command": "s", "env_vars": ["A"]}, "'env_vars'"),
        ({"command": "s", "disabled_tools": ["a"]}, "tool filters"),
        ({"command": "s", "mystery": 1}, "unsupported field 'mystery'"),
        ({"command": "s", "enabled": False}, "disabled"),
        ({"command": "s", "tool_timeout_sec": 0}, "'tool_timeout' must be positive"),
    ):
        found = codex_server("c", entry)
        assert found.table is None
        assert why in found.why


def test_malformed_sources_name_file_and_place(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{\n "mcpServers": {"a": {"command": "x"}\n')
    with pytest.raises(McpSourceError, match=r"x\.json: not valid JSON: line 3 column 1"):
        read_claude(bad)
    bad.write_text("[]")
    with pytest.raises(McpSourceError, match="must be a JSON object"):
        read_claude(bad)
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(McpSourceError, match="not UTF-8"):
        read_claude(bad)
    with pytest.raises(McpSourceError, match="cannot be read"):
        read_claude(tmp_path / "missing.json")
    toml = tmp_path / "c.toml"
    toml.write_text("mcp_servers = 3\n")
    with pytest.raises(McpSourceError, match="'mcp_servers' must be a table"):
        read_codex(toml)
    toml.write_text('model = "m"\n')  # a Codex file without servers
    assert read_codex(toml) == []


def test_plan_imports_skips_and_replaces() -> None:
    found = [Found("a", {"command": "x"}), Found("b", None, "why"), Found("c", {"command": "y"})]
    rows = mcpimport.plan(found, {"c": {}}, replace=False)
    assert [(r.name, r.action) for r in rows] == [
        ("a", "imported"),
        ("b", "skipped"),
        ("c", "skipped"),
    ]
    rows = mcpimport.plan(found, {"c": {}}, replace=True)
    assert rows[2] == mcpimport.Row("c", "imported", "replaces the existing one")


def test_source_paths_follow_the_environment(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    desktop = mcpimport.source_path("claude-desktop", tmp_path, env)
    assert desktop == tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    xdg = {**env, "XDG_CONFIG_HOME": str(tmp_path / "x")}
    assert mcpimport.source_path("claude-desktop", tmp_path, xdg).parent == tmp_path / "x/Claude"
    assert mcpimport.source_path("codex", tmp_path, env) == tmp_path / ".codex" / "config.toml"
    moved = {**env, "CODEX_HOME": str(tmp_path / "cx")}
    assert mcpimport.source_path("codex", tmp_path, moved) == tmp_path / "cx" / "config.toml"
    assert mcpimport.source_path("claude", tmp_path / "ws", env) == tmp_path / "ws" / ".mcp.json"


def test_put_keeps_the_file_and_its_mode_and_refuses_before_writing(
    dirs: tuple[Path, Path],
) -> None:
    home, ws = dirs
    home.mkdir()
    target = mcpfiles.Target("user", home, ws)
    text = '# top\n[llm]\nmodel = "m"  # mine\n\n[mcp.old]\ncommand = "o"  # old one\n'
    target.path.write_text(text)
    os.chmod(target.path, 0o600)
    assert mcpfiles.put(target, "new", {"url": "https://h", "headers": {"A": "b"}}, False) is False
    after = target.path.read_text()
    assert after.startswith(text)
    assert stat.S_IMODE(target.path.stat().st_mode) == 0o600
    assert mcpfiles.tables(target.path)["new"] == {"url": "https://h", "headers": {"A": "b"}}
    with pytest.raises(mcpfiles.McpFileError, match="'oauth' needs a 'url' server"):
        mcpfiles.put(target, "bad", {"command": "x", "oauth": True}, False)
    with pytest.raises(mcpfiles.McpFileError, match="--replace"):
        mcpfiles.put(target, "old", {"command": "p"}, False)
    assert target.path.read_text() == after
    mcpfiles.remove(target, "new")
    mcpfiles.remove(target, "old")
    assert target.path.read_text().startswith('# top\n[llm]\nmodel = "m"  # mine\n')
    assert "mcp" not in target.path.read_text()
    with pytest.raises(mcpfiles.McpFileError, match="no MCP server named 'old'"):
        mcpfiles.remove(target, "old")


def test_put_refuses_a_file_it_cannot_read(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    home.mkdir()
    target = mcpfiles.Target("user", home, ws)
    target.path.write_text("[llm\n")
    with pytest.raises(mcpfiles.McpFileError, match="not valid TOML"):
        mcpfiles.put(target, "a", {"command": "x"}, False)
    target.path.write_text("mcp = 1\n")
    with pytest.raises(mcpfiles.McpFileError, match="'mcp' must be a table"):
        mcpfiles.put(target, "a", {"command": "x"}, False)
    with pytest.raises(mcpfiles.McpFileError, match="'mcp' must be a table"):
        mcpfiles.tables(target.path)


def test_project_put_carries_trust_only_when_it_was_trusted(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    target = mcpfiles.Target("project", home, ws)
    mcpfiles.put(target, "a", {"command": "x"}, False)  # a new file: the person's own
    assert trust.Store(home).status(ws, trust.CONFIG_FILE, target.path.read_bytes()) == "trusted"
    target.path.write_text(target.path.read_text() + "# edited by the repository\n")
    mcpfiles.put(target, "b", {"command": "y"}, False)
    raw = target.path.read_bytes()
    assert trust.Store(home).status(ws, trust.CONFIG_FILE, raw) is trust.Status.CHANGED


def _dot_mcp(ws: Path, servers: dict[str, object]) -> bytes:
    raw = json.dumps({"mcpServers": servers}).encode()
    (ws / ".mcp.json").write_bytes(raw)
    return raw


def test_dot_mcp_json_joins_the_configuration_once_trusted(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    home.mkdir()
    (home / "config.toml").write_text('[mcp.mine]\ncommand = "me"\n')
    raw = _dot_mcp(
        ws,
        {"srv": {"command": "s"}, "mine": {"command": "theirs"}, "x": {"type": "sse", "url": "u"}},
    )
    loaded = config.load(home=home, workspace=ws, env={})
    assert set(loaded.mcp) == {"mine"}
    assert [(w.file, w.key) for w in loaded.project.withheld] == [(".mcp.json", "mcp.srv")]
    assert any("MCP server x not loaded: the SSE transport" in n for n in loaded.hook_notices)
    trust.Store(home).trust(ws, {trust.MCP_JSON: trust.digest(raw)})
    loaded = config.load(home=home, workspace=ws, env={})
    assert loaded.mcp["srv"].command == "s"
    assert loaded.mcp["mine"].command == "me"  # yagent's own table wins
    assert any("[mcp.mine] in your configuration" in n for n in loaded.hook_notices)
    rows = {(r.name, r.scope): r.state for r in mcpfiles.servers(home, ws)}
    assert rows[("srv", ".mcp.json")] == "loaded"
    assert rows[("mine", ".mcp.json")].startswith("not loaded: [mcp.mine]")
    _dot_mcp(ws, {"srv": {"command": "changed"}})
    rows = {(r.name, r.scope): r.state for r in mcpfiles.servers(home, ws)}
    assert "changed since you trusted it" in rows[("srv", ".mcp.json")]


def test_import_of_dot_mcp_json_waits_for_its_trust(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    raw = _dot_mcp(ws, {"srv": {"command": "s"}})
    with pytest.raises(mcpimport.McpImportError, match="is not trusted"):
        mcpimport.read_source("claude", home, ws, {"HOME": str(ws)})
    with pytest.raises(mcpimport.McpImportError, match="is not trusted"):  # by its path too
        mcpimport.read_source(str(ws / ".mcp.json"), home, ws, {"HOME": str(ws)})
    trust.Store(home).trust(ws, {trust.MCP_JSON: trust.digest(raw)})
    found = mcpimport.read_source("claude", home, ws, {"HOME": str(ws)})
    target = mcpfiles.Target("project", home, ws)
    dry = mcpimport.run(found, target, replace=False, dry_run=True)
    assert dry == [mcpimport.Row("srv", "would import", "")]
    assert not target.path.exists()
    assert mcpimport.run(found, target, replace=False, dry_run=False)[0].action == "imported"
    assert mcpfiles.tables(target.path) == {"srv": {"command": "s"}}


def test_shown_table_masks_values() -> None:
    shown = mcpfiles.shown_table(
        {"url": "https://u:pw@h/mcp", "headers": {"A": "secret"}, "env": {"K": "secret"}}
    )
    assert shown == {"url": "https://h/mcp", "headers": {"A": "***"}, "env": {"K": "***"}}


def test_dot_mcp_names_of_a_missing_or_broken_file_are_none(dirs: tuple[Path, Path]) -> None:
    _, ws = dirs
    assert mcpfiles.dot_mcp_names(ws) == []
    (ws / ".mcp.json").write_text("{")
    assert mcpfiles.dot_mcp_names(ws) == []
    _dot_mcp(ws, {"a": {"command": "x"}, "b": {"type": "sse", "url": "u"}})
    assert mcpfiles.dot_mcp_names(ws) == ["a", "b"]
