"""`[sandbox] allow_hosts` from configuration to a sandboxed command (real bwrap, real proxy)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from yagent.agents import catalog
from yagent.app import safety
from yagent.app.assemble import open_app
from yagent.app.config import ConfigError, load
from yagent.cli.doctor import _egress
from yagent.kernel.confine.sandbox import EgressMode
from yagent.llm.scripted import ScriptedEngine, call, say
from yagent.tools.egress.proxyserver import LOOPBACK_BYPASS
from yagent.tools.yolo import Yolo

from .files import write

MARKER = catalog.builtin("coding", 0).marker


def test_no_allow_list_keeps_the_network_cut(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    built = safety.build(load(home=home, workspace=ws, env={}), ws)
    assert built.egress_proxy is None
    assert built.preset.egress.mode is EgressMode.DENIED
    assert "no network" in _egress(load(home=home, workspace=ws, env={}))[2]


def test_an_allow_list_turns_sandboxed_presets_to_proxy(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home / "config.toml", '[sandbox]\nallow_hosts = ["pypi.org", ".pythonhosted.org"]\n')
    config = load(home=home, workspace=ws, env={})
    built = safety.build(config, ws)
    assert built.preset.name == "workspace-write"
    assert built.preset.egress.mode is EgressMode.PROXY
    assert built.preset.egress.allow == ("pypi.org", ".pythonhosted.org")
    assert built.preset.egress.bypass == LOOPBACK_BYPASS
    assert built.egress_proxy is not None
    assert built.commands.egress_proxy is built.egress_proxy
    assert "reach only pypi.org, .pythonhosted.org" in _egress(config)[2]


def test_yolo_is_left_alone(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home / "config.toml", '[agent]\npreset = "yolo"\n[sandbox]\nallow_hosts = ["pypi.org"]\n')
    config = load(home=home, workspace=ws, env={})
    built = safety.build(config, ws)
    assert built.egress_proxy is None
    assert built.preset.egress.mode is EgressMode.UNRESTRICTED
    assert "whole network" in _egress(config)[2]


@pytest.mark.parametrize(
    ("hosts", "named"),
    [('["*.example.org"]', r"\*\.example\.org"), ('["pypi.org/simple"]', "pypi.org/simple")],
)
def test_an_unreadable_entry_is_a_config_error_naming_it(
    dirs: tuple[Path, Path], hosts: str, named: str
) -> None:
    home, ws = dirs
    write(ws / ".yagent" / "config.toml", f"[sandbox]\nallow_hosts = {hosts}\n")
    with pytest.raises(ConfigError, match=named):
        load(home=home, workspace=ws, env={})


def test_a_listed_loopback_name_contradicts_the_bypass(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home / "config.toml", '[sandbox]\nallow_hosts = ["localhost"]\n')
    with pytest.raises(ConfigError, match="allow_hosts"):
        safety.build(load(home=home, workspace=ws, env={}), ws)


FETCH = (
    "import urllib.request as u\n"
    "try:\n"
    "    u.urlopen('http://not-listed.example/')\n"
    "except Exception as e:\n"
    "    print('refused', getattr(e, 'code', e), e.read().decode().strip())\n"
)


@pytest.mark.anyio
async def test_a_sandboxed_command_meets_the_apps_proxy(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home / "config.toml", '[sandbox]\nallow_hosts = ["pypi.org"]\n')
    (ws / "fetch.py").write_text(FETCH)
    command = f"{sys.executable} fetch.py"
    script = [call("run_bash", json.dumps({"command": command}), call_id="c1"), say("done")]
    engine = ScriptedEngine({"coding": script}, markers={"coding": MARKER})
    config = load(home=home, workspace=ws, env={})
    async with open_app(
        config, home=home, workspace=ws, yolo=Yolo.YOLO, interactive=False, engine=engine
    ) as app:
        proxy = app.safety.egress_proxy
        assert proxy is not None
        assert proxy.running
        session_id, _ = await app.run("fetch it", agent_name="coding")
        [record] = app.store.tool_calls(session_id)
        [event] = app.store.events(session_id, types="egress")
        decisions = proxy.decisions
    assert not proxy.running
    content = json.loads(record.content or "{}")
    assert "refused 403 not-listed.example:80 is not on the egress allow-list" in content["text"]
    note = "[egress: 1 refused: not-listed.example:80 — not on [sandbox] allow_hosts]"
    assert content["text"].endswith(note)
    assert event.payload["call_id"] == "c1"
    assert event.payload["requests"] == content["egress"]["requests"]
    assert event.payload["requests"][0]["host"] == "not-listed.example"
    assert [(d.host, d.allowed) for d in decisions] == [("not-listed.example", False)]
