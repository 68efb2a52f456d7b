"""Secrets and yagent's state are invisible to run_bash and the file tools (issue 13, item 2).

Real path: the Adapter, the judgement ring under -y (every question answered yes — the sandbox,
not a question, is what must hold), the command gate's bwrap sandbox. HOME points at a fake home
under /var/tmp holding fake secrets (never real ones; /tmp would be masked anyway and prove
nothing), YAGENT_HOME inside it; other homes are temp dirs too.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from yagent.kernel.judge.preset import BUILTIN as PRESETS
from yagent.tools import readmask, registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.commands import CommandGate
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.readmask import ReadMask
from yagent.tools.settings import Settings
from yagent.tools.shellrules import build_policy
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

pytestmark = pytest.mark.anyio
STORES = {
    ".ssh/id_rsa": "SECRET-SSH",
    ".aws/credentials": "SECRET-AWS",
    ".netrc": "SECRET-NETRC",
    ".git-credentials": "SECRET-GITCRED",
    ".docker/config.json": "SECRET-DOCKER",
    ".config/gh/hosts.yml": "SECRET-GH",
    ".kube/config": "SECRET-KUBE",
    ".bash_history": "SECRET-HISTORY",
    ".yagent/sessions.db": "SECRET-STATE",
}


@pytest.fixture
def base(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="yagent-secrets-", dir="/var/tmp"))
    home = root / "home"
    for rel, text in STORES.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")
    (home / "notes.txt").write_text("plain notes\n")
    (root / "ws").mkdir()
    (root / "ws" / "a.txt").write_text("a\n")
    homes = root / "homes"
    (homes / "bob").mkdir(parents=True)
    (homes / "bob" / "diary.txt").write_text("SECRET-BOB\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("YAGENT_HOME", str(home / ".yagent"))
    monkeypatch.setattr(readmask, "HOMES", homes)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def adapter(ws: Path, reads: ReadMask | None = None) -> Adapter:
    gate = CommandGate(build_policy([]), PRESETS.resolve("workspace-write"), ws, reads=reads)
    guard = WorkspaceGuard(ws, settings=Settings(ws.parent / "state"), yolo=Yolo.YOLO, reads=reads)
    options = SurfaceOptions(yolo=Yolo.YOLO, commands=gate)
    surface = Surface(BUILTIN, profile("coding"), guard, options=options)
    return Adapter(ToolContext(ws, surface, state_dir=ws.parent / "state"), registry.executors())


async def bash(a: Adapter, command: str) -> str:
    result = await a.call("run_bash", json.dumps({"command": command}))
    assert result.ok, result.content
    body: dict[str, Any] = json.loads(result.content)
    return str(body["text"])


ATTACKS = [
    "cat ../home/.ssh/id_rsa",
    "cat $'\\x2f'{base}/home/.ssh/id_rsa",
    "cat {{/{base}/home/.ssh/id_rsa,a.txt}}",
    "grep -r SECRET .. 2>/dev/null; echo end",
    "git diff --no-index ../home/.ssh/id_rsa a.txt",
    "cat ../home/.aws/credentials ../home/.netrc ../home/.git-credentials",
    "cat ../home/.docker/config.json ../home/.config/gh/hosts.yml ../home/.kube/config",
    "cat ../home/.bash_history ../home/.yagent/sessions.db",
    "cat ../homes/bob/diary.txt; ls -A ../homes/bob",
    "tar cf - ../home 2>/dev/null | strings",
]


@pytest.mark.parametrize("attack", ATTACKS)
async def test_every_read_of_a_secret_from_the_sandbox_reads_nothing(
    base: Path, attack: str
) -> None:
    text = await bash(adapter(base / "ws"), attack.format(base=str(base).lstrip("/")))
    assert "SECRET" not in text, text


async def test_the_rest_of_the_home_and_the_workspace_stay_usable(base: Path) -> None:
    a = adapter(base / "ws")
    text = await bash(a, "cat ../home/notes.txt a.txt && echo made > b.txt && cat b.txt")
    assert "plain notes" in text
    assert "made" in text
    assert (base / "ws" / "b.txt").read_text() == "made\n"


async def test_the_interpreter_runs_when_its_home_is_hidden(base: Path) -> None:
    # HOME is the fake home: the real /root is another user's home, hidden; the interpreter
    # installed there (a pyenv build) is bound back so `python` still runs.
    text = await bash(adapter(base / "ws"), f"{sys.executable} -c 'print(6 * 7)'")
    assert "42" in text


async def test_deny_read_adds_and_allow_read_reopens(base: Path) -> None:
    ws = base / "ws"
    (ws / "secrets").mkdir()
    (ws / "secrets" / "prod.env").write_text("SECRET-PROD\n")
    (base / "home" / ".ssh" / "known_hosts").write_text("host-key\n")
    reads = ReadMask(ws, deny=("secrets", "~/notes.txt"), allow=("~/.ssh/known_hosts",))
    a = adapter(ws, reads)
    text = await bash(a, "cat secrets/prod.env ../home/notes.txt ../home/.ssh/known_hosts")
    assert "SECRET" not in text
    assert "plain notes" not in text
    assert "host-key" in text
    assert "SECRET" not in await bash(a, "cat ../home/.ssh/id_rsa")


async def test_the_file_tools_refuse_what_the_sandbox_hides_even_under_y(base: Path) -> None:
    ws = base / "ws"
    a = adapter(ws, ReadMask(ws, deny=("secrets",)))
    (ws / "secrets").mkdir()
    (ws / "secrets" / "k").write_text("SECRET-K\n")
    for path in (
        str(base / "home" / ".ssh" / "id_rsa"),
        "../home/.yagent/sessions.db",
        "~/.aws/credentials",
        "secrets/k",
        str(base / "homes" / "bob" / "diary.txt"),
    ):
        result = await a.call("read_file", json.dumps({"path": path}))
        assert not result.ok, path
        assert "SECRET" not in result.content
        assert "hidden from every tool" in result.content, result.content
    wrote = await a.call(
        "write_file", json.dumps({"path": "~/.ssh/authorized_keys", "content": "evil\n"})
    )
    assert not wrote.ok
    assert not (base / "home" / ".ssh" / "authorized_keys").exists()
    ok = await a.call("read_file", json.dumps({"path": "a.txt"}))
    assert ok.ok
    assert "a" in ok.content


def test_the_default_mask_names_the_stores_the_state_and_other_homes(base: Path) -> None:
    hidden = set(ReadMask(base / "ws").hidden())
    home = base / "home"
    for rel in (".yagent", ".ssh", ".gnupg", ".aws", ".config/gcloud", ".npmrc", ".pypirc"):
        assert home / rel in hidden, rel
    assert base / "homes" / "bob" in hidden
    assert home not in hidden, "the user's own home stays readable apart from its stores"
    assert readmask.ROOT_HOME in hidden, "/root is another home when HOME is not /root"
    mine = ReadMask(base / "ws", env={"HOME": "/root"}).hidden()
    assert Path("/root") not in mine
    assert Path("/root/.ssh") in mine
