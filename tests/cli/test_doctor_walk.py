"""`yagent doctor` as a first-time user meets it, through real `yagent doctor` processes: it
names this home's config.toml (`YAGENT_HOME`), says when the home cannot be written (a
read-only bind mount, bubblewrap, so it holds for root too) without calling healthy stores
damaged, checks the repository's root from a subfolder (as `run` does), and a provider that
refuses the key, has no such model or path, or does not answer gets the same advice a run gets
(`app.provideradvice`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import yagent as yagent_package
from tests.llm.wire import Reply, WireServer, refused_url, submitted_frames

SRC = str(Path(yagent_package.__file__).resolve().parents[1])
ENV_DROP = ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL", "OPENAI_API_KEY", "WALK_KEY")
BWRAP = shutil.which("bwrap")


def doctor(
    home: Path,
    cwd: Path,
    *,
    read_only: tuple[Path, ...] = (),
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = ("doctor",),
) -> subprocess.CompletedProcess[str]:
    """`yagent doctor` (a wide table: one line per row), `read_only` paths mounted read-only."""
    environ = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
    environ.update(YAGENT_HOME=str(home), COLUMNS="1000", **(env or {}))
    environ["PYTHONPATH"] = os.pathsep.join([SRC, environ.get("PYTHONPATH", "")])
    prefix: list[str] = []
    if read_only:
        assert BWRAP is not None, "bwrap is installed (scripts/setup-system.sh)"
        prefix = [BWRAP, "--dev-bind", "/", "/"]
        prefix += [arg for path in read_only for arg in ("--ro-bind", str(path), str(path))]
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "yagent.cli", *args],
        input="",
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ,
        timeout=90,
    )
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return done


def row(done: subprocess.CompletedProcess[str], check: str) -> str:
    """The table row of `check`, its cells joined by single spaces."""
    for line in done.stdout.splitlines():
        cells = [cell.strip() for cell in line.strip("│┃ ").split("│")]
        if cells and cells[0] == check:
            return " ".join(cells)
    raise AssertionError(f"no {check!r} row in:\n{done.stdout}")


def configured(home: Path, url: str, extra: str = "") -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{url}/v1"\n{extra}'
    )
    return home


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


class ModelsServer:
    """An OpenAI-compatible server's `GET /v1/models` on loopback: `status` and `body`, and the
    requests' paths and Authorization headers."""

    def __init__(self, status: int, body: Any) -> None:
        self.seen: list[tuple[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                outer.seen.append((self.path, self.headers.get("authorization", "")))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ModelsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=10)


@pytest.fixture
def listing() -> Iterator[ModelsServer]:
    with ModelsServer(200, {"object": "list", "data": [{"id": "m"}, {"id": "other"}]}) as srv:
        yield srv


# -- 1. this home's config.toml ------------------------------------------------------------------


def test_no_key_names_the_config_file_of_this_home(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[llm]\nprovider = "openai"\nmodel = "gpt-4.1"\n')
    done = doctor(home, ws)
    assert done.returncode == 1
    said = row(done, "provider")
    assert "FAIL" in said
    assert "OPENAI_API_KEY is not set" in said
    assert f"api_key_env or api_key_file in {home / 'config.toml'}" in said
    assert "~/.yagent" not in done.stdout


def test_no_provider_names_the_config_file_of_this_home(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    done = doctor(home, ws)  # nothing listens on Ollama's default address here
    assert done.returncode == 1
    assert "no model provider is configured" in row(done, "provider")
    assert f"Configure one in {home / 'config.toml'}" in done.stdout
    assert "~/.yagent" not in done.stdout


# -- 2. a home that cannot be written ------------------------------------------------------------


def test_a_read_only_home_fails_its_own_row_and_its_stores_are_not_called_damaged(
    tmp_path: Path, ws: Path
) -> None:
    with WireServer([Reply(events=submitted_frames("all done"))]) as server:
        home = configured(tmp_path / "home", server.url, "step_retries = 0\n")
        env = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
        env.update(YAGENT_HOME=str(home), PYTHONPATH=SRC)
        ran = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "run", "-C", str(ws), "hi"],
            input="",
            capture_output=True,
            text=True,
            env=env,
            timeout=90,
        )
        assert ran.returncode == 0, ran.stderr
    assert (home / "sessions.db").exists()
    with ModelsServer(200, {"data": [{"id": "m"}]}) as models:
        configured(home, models.url)
        done = doctor(home, ws, read_only=(home,))  # first: no -shm beside the stores yet
        writable = doctor(home, ws)
    assert "FAIL" not in writable.stdout, writable.stdout
    assert "ok" in row(writable, "home")
    assert done.returncode == 1
    said = row(done, "home")
    assert f"FAIL cannot write in {home} (read-only file system)" in said, said
    assert "set YAGENT_HOME to a writable directory" in said
    assert "salvage" not in done.stdout
    assert "damaged" not in done.stdout
    for store in ("sessions.db", "durable.db"):
        assert f"not checked: {home} cannot be written" in row(done, store)


def test_a_home_to_be_created_in_a_read_only_directory_fails_its_row(
    tmp_path: Path, ws: Path, listing: ModelsServer
) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    configured(tmp_path / "elsewhere", listing.url)
    done = doctor(parent / "home", ws, read_only=(parent,))
    assert done.returncode == 1
    said = row(done, "home")
    assert f"FAIL cannot write in {parent} (read-only file system)" in said, said
    assert "YAGENT_HOME" in said


# -- 3. from a subfolder: the repository's root --------------------------------------------------


def test_from_a_subfolder_the_trust_and_config_rows_are_the_repositorys(
    tmp_path: Path, listing: ModelsServer
) -> None:
    root = tmp_path / "repo"
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".yagent").mkdir()
    (root / ".yagent" / "config.toml").write_text('[agent]\npreset = "full-auto"\n')
    home = configured(tmp_path / "home", listing.url)
    at_root = doctor(home, root)
    below = doctor(home, deep)
    trust = row(below, "project trust")
    assert "no project files" not in trust, trust
    assert "config.toml" in trust
    assert trust == row(at_root, "project trust")
    assert row(below, "config") == row(at_root, "config")


# -- 4. the provider's failures say what to do ----------------------------------------------------


def test_a_refused_key_says_which_key_and_where_another_is_named(tmp_path: Path, ws: Path) -> None:
    refusal = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
    with ModelsServer(401, refusal) as server:
        home = configured(tmp_path / "home", server.url, 'api_key_env = "WALK_KEY"\n')
        done = doctor(home, ws, env={"WALK_KEY": "sk-wrong-but-long"})
    assert done.returncode == 1
    said = row(done, "provider")
    assert "FAIL" in said, said
    assert "HTTP 401" in said, said
    assert "the server refused the API key in WALK_KEY" in said
    assert str(home / "config.toml") in said
    assert server.seen == [("/v1/models", "Bearer sk-wrong-but-long")]
    assert "sk-wrong-but-long" not in done.stdout + done.stderr


def test_an_unknown_model_names_the_model_and_the_address_to_check(
    tmp_path: Path, ws: Path, listing: ModelsServer
) -> None:
    home = configured(tmp_path / "home", listing.url)
    (home / "config.toml").write_text(
        (home / "config.toml").read_text().replace('model = "m"', 'model = "gpt-9"')
    )
    done = doctor(home, ws)
    assert done.returncode == 1
    said = row(done, "provider")
    assert "FAIL" in said, said
    assert "does not list model 'gpt-9'" in said, said
    assert f"check [llm] model (or the agent's own `model`) and base_url ({listing.url}/v1)" in said


def test_a_wrong_api_path_says_to_check_base_url(tmp_path: Path, ws: Path) -> None:
    with ModelsServer(404, {"error": "not found"}) as server:
        home = configured(tmp_path / "home", server.url)
        done = doctor(home, ws)
    said = row(done, "provider")
    assert done.returncode == 1
    assert "FAIL" in said, said
    assert "HTTP 404" in said, said
    assert f"base_url ({server.url}/v1)" in said


def test_an_unreachable_server_says_what_to_check(tmp_path: Path, ws: Path) -> None:
    url = refused_url()
    home = configured(tmp_path / "home", url)
    done = doctor(home, ws)
    said = row(done, "provider")
    assert done.returncode == 1
    assert f"at {url}/v1: unreachable" in said, said
    assert f"is the server running at {url}/v1? check [llm] base_url in {home / 'config.toml'}" in (
        said
    )


def test_a_listed_model_with_its_key_is_ok_and_keyless_says_so(
    tmp_path: Path, ws: Path, listing: ModelsServer
) -> None:
    home = configured(tmp_path / "home", listing.url)
    done = doctor(home, ws)
    said = row(done, "provider")
    assert said.startswith(f"provider ok m at {listing.url}/v1"), said
    assert "running keyless" in said
    assert listing.seen == [("/v1/models", "")]  # keyless: no Authorization header at all
