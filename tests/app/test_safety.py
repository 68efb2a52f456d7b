"""The safety configuration and its wiring into the assembled app (real parts, scripted model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.projecttrust import trust_project
from yagent.agents import catalog
from yagent.app import safety
from yagent.app.assemble import open_app
from yagent.app.config import ConfigError, load
from yagent.kernel.confine import pii
from yagent.kernel.confine.cmdpolicy import Permission, decide_command
from yagent.kernel.confine.sandbox import Level
from yagent.llm.scripted import ScriptedEngine, call, say
from yagent.tools.shellrules import RuleFile, remembered_rule
from yagent.tools.yolo import Yolo

from .files import write

MARKER = catalog.builtin("coding", 0).marker
MOBILE = "13912345678"


def test_defaults(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    config = load(home=home, workspace=ws, env={})
    built = safety.build(config, ws)
    assert built.preset.name == "workspace-write"
    assert built.preset.level is Level.NAMESPACES
    policy = built.pii.snapshot().policy
    assert (policy.model, policy.log, policy.display) == (
        pii.Action.MASK,
        pii.Action.MASK,
        pii.Action.OFF,
    )
    assert decide_command(built.commands.policy, "git status").decision is Permission.ALLOW


def test_an_unknown_preset_is_a_config_error(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home / "config.toml", '[agent]\npreset = "workspace_write"\n')
    with pytest.raises(ConfigError, match=r"unknown preset 'workspace_write'.*workspace-write"):
        load(home=home, workspace=ws, env={})


@pytest.mark.parametrize("name", ["read-only", "workspace-write", "full-auto", "yolo"])
def test_every_builtin_preset_can_be_chosen(dirs: tuple[Path, Path], name: str) -> None:
    home, ws = dirs
    write(ws / ".yagent" / "config.toml", f'[agent]\npreset = "{name}"\n')
    trust_project(home, ws)  # a looser preset from the repository needs the person's trust
    assert safety.build(load(home=home, workspace=ws, env={}), ws).preset.name == name


def test_user_and_project_rules_add_up(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    rule = '[[shell.rules]]\nname = "{n}"\nprefix = "{p}"\nverdict = "{v}"\nmatch = ["{p}"]\n'
    write(home / "config.toml", rule.format(n="user-make", p="make", v="allow"))
    write(
        ws / ".yagent" / "config.toml",
        '[shell]\ndefault = "prompt"\n' + rule.format(n="proj-push", p="git push", v="forbidden"),
    )
    RuleFile(ws).append([remembered_rule(["npm", "test"], "remembered-npm", "today")])
    trust_project(home, ws)  # allow rules from the workspace's files apply once trusted
    config = load(home=home, workspace=ws, env={})
    assert [r["name"] for r in config.shell.rules] == ["user-make", "proj-push"]
    policy = safety.build(config, ws).commands.policy
    assert decide_command(policy, "make all").decision is Permission.ALLOW
    assert decide_command(policy, "git push").decision is Permission.FORBIDDEN
    assert decide_command(policy, "npm test").decision is Permission.ALLOW


def test_a_rule_whose_example_disagrees_stops_the_app(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(
        ws / ".yagent" / "config.toml",
        '[[shell.rules]]\nname = "liar"\nprefix = "ls"\nverdict = "allow"\nmatch = ["rm x"]\n',
    )
    trust_project(home, ws)  # an untrusted allow rule is withheld, not checked
    config = load(home=home, workspace=ws, env={})
    with pytest.raises(ConfigError, match=r"liar.*rm x"):
        safety.build(config, ws)


def test_a_broken_rules_file_stops_the_app(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(ws / ".yagent" / "shell-rules.toml", "[[rules]\n")
    with pytest.raises(ConfigError, match=r"shell-rules\.toml"):
        safety.build(load(home=home, workspace=ws, env={}), ws)


@pytest.mark.parametrize(
    "text",
    ['[pii]\nmodel = "hide"\n', '[shell]\ndefault = "allow"\n', "[shell]\nrulez = []\n"],
)
def test_bad_safety_settings_are_config_errors(dirs: tuple[Path, Path], text: str) -> None:
    home, ws = dirs
    write(home / "config.toml", text)
    with pytest.raises(ConfigError):
        load(home=home, workspace=ws, env={})


@pytest.mark.anyio
async def test_pii_on_every_surface_of_a_run(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    (ws / "people.txt").write_text(f"王五 {MOBILE}\n")
    script = [
        call("read_file", json.dumps({"path": "people.txt"}), call_id="c1"),
        say(f"The number is {MOBILE}."),
    ]
    engine = ScriptedEngine({"coding": script}, markers={"coding": MARKER})
    shown: list[str] = []
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        app.observers.append(lambda event: shown.append(json.dumps(event.payload)))
        session_id, _ = await app.run("who is in people.txt?", agent_name="coding")
        # The model: the tool result reached it masked.
        sent = engine.requests[1][1].messages
        tool_message = next(m for m in sent if m.role == "tool")
        assert MOBILE not in str(tool_message.content)
        assert "[MOBILE]" in str(tool_message.content)
        # The logs: events, tool records and observers (traces) keep no number — not even the
        # model's own reply, which echoed one.
        events = json.dumps([e.payload for e in app.store.events(session_id)], ensure_ascii=False)
        assert MOBILE not in events
        assert "[MOBILE]" in events
        assert all(MOBILE not in (c.content or "") for c in app.store.tool_calls(session_id))
        assert shown
        assert all(MOBILE not in line for line in shown)


@pytest.mark.anyio
async def test_display_and_log_policies_apply_separately(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home / "config.toml", '[pii]\nmodel = "off"\nlog = "block"\ndisplay = "mask"\n')
    engine = ScriptedEngine({"coding": [say("x")]}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        session_id = app.store.create_session(workspace=str(ws), title="t").id
        app.sessions.open(session_id).publish("note", {"text": f"call {MOBILE}", "n": 1})
        shown = []
        while (event := app.dispatcher.receive_nowait()) is not None:
            shown.append(event)
        [event] = [e for e in shown if e.type == "note"]
        assert event.payload == {"text": "call [MOBILE]", "n": 1}
        [stored] = [e for e in app.store.events(session_id) if e.type == "note"]
        assert stored.payload["text"].startswith("[withheld: contains personal data (mobile)")
        assert stored.payload["n"] == 1


@pytest.mark.parametrize(
    ("log", "display", "logged", "shown"),
    [
        ("off", "mask", f"call {MOBILE}", "call [MOBILE]"),  # a log judgement reused would leak
        ("mask", "off", "call [MOBILE]", f"call {MOBILE}"),
        ("mask", "mask", "call [MOBILE]", "call [MOBILE]"),  # judged once, both masked
    ],
)
@pytest.mark.anyio
async def test_an_event_is_judged_for_each_surface_by_its_own_policy(
    dirs: tuple[Path, Path], log: str, display: str, logged: str, shown: str
) -> None:
    home, ws = dirs
    write(home / "config.toml", f'[pii]\nlog = "{log}"\ndisplay = "{display}"\n')
    engine = ScriptedEngine({"coding": [say("x")]}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        session_id = app.store.create_session(workspace=str(ws), title="t").id
        traced: list[Any] = []
        app.observers.append(traced.append)
        app.sessions.open(session_id).publish("note", {"text": f"call {MOBILE}", "n": 1})
        shown_events = []
        while (event := app.dispatcher.receive_nowait()) is not None:
            shown_events.append(event)
        [event] = [e for e in shown_events if e.type == "note"]
        assert event.payload == {"text": shown, "n": 1}
        [stored] = [e for e in app.store.events(session_id) if e.type == "note"]
        assert stored.payload == {"text": logged, "n": 1}
        assert [e.payload for e in traced if e.type == "note"] == [{"text": logged, "n": 1}]


@pytest.mark.anyio
async def test_the_app_judges_shell_lines(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    script = [
        call("run_bash", json.dumps({"command": "git status; rm -rf /"}), call_id="c1"),
        call("run_bash", json.dumps({"command": "echo ok > f.txt"}), call_id="c2"),
        call("agent_exit", json.dumps({"reason": "r"}), call_id="c3"),
    ]
    engine = ScriptedEngine({"coding": script}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=engine,
    ) as app:
        session_id, _ = await app.run("t", agent_name="coding")
        first, second, _ = app.store.tool_calls(session_id)
    assert not first.ok
    assert "forbidden" in (first.content or "")
    assert second.ok
    assert (ws / "f.txt").read_text() == "ok\n"
