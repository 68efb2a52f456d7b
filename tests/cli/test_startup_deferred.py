"""Start-up gate (issue 17): what a run does not use before its first model request, it does
not import.

A real `yagent run` process (these sources, started as the console script starts it) is held at
its first model request (the scripted server keeps the request open) and asked for its
`sys.modules` (SIGUSR1): none of the built-in executors' modules (`tools.registry` names them,
`LazyExecutor`), nor the program runner, nor the libraries loaded where they are used (Markdown
rendering, YAML, tree-sitter, json_repair) is among them. `sys.modules`, not an import-time
report: a lazy executor is imported with `importlib`, which `-X importtime` does not report.
The other side: a run whose model calls a tool has that tool's executor loaded, and still none
of the others (its modules read when it exits). `doctor` on a configured provider imports
neither YAML nor asyncio. Neither imports httpx's own command line (pygments and rich's syntax
highlighting with it), and neither loads a CA bundle for an `http://` provider (no TLS is
spoken); no collection runs during either's start-up. A module listed as `None` in `sys.modules`
(an import refused) is not counted as loaded.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.cli.test_startup import configure, env_for
from tests.llm.wire import Reply, WireServer, submitted_frames

# Each executor module, and what it would bring: none of it is needed to ask the model.
EXECUTORS = frozenset(
    {
        "yagent.tools.bash",
        "yagent.tools.browser",
        "yagent.tools.browser.session",
        "yagent.tools.codegraph",
        "yagent.tools.delegate",
        "yagent.tools.files.edit",  # the file executors (`files.journal` is the host's)
        "yagent.tools.files.listing",
        "yagent.tools.files.read",
        "yagent.tools.files.write",
        "yagent.tools.flow",
        "yagent.tools.program",
        "yagent.tools.search",
        "yagent.tools.searchkit.rg",
        "yagent.tools.sessionread",
        "yagent.tools.web",
        "yagent.kernel.ptc.runner",  # the program runner (the bindings are read for the prompt)
        "yagent.kernel.ptc.subproc",
    }
)
# Libraries loaded where they are used, not with the command: Markdown rendering (the result shown
# to a person, `cli.render`), YAML (agent files, skills: none in these workspaces) and tree-sitter
# (the first shell line judged: the built-in rules' examples are checked by their tests) and
# json_repair (the first report that needs repairing).
LIBRARIES = frozenset(
    {"rich.markdown", "markdown_it", "yaml", "tree_sitter", "tree_sitter_bash", "json_repair"}
)
# httpx's own command line (`httpx._main`: rich's progress bars and syntax highlighting, pygments'
# lexers) is not what yagent talks to a provider with; `yagent.cli` keeps httpx from importing it.
HTTPX_CLI = frozenset({"httpx._main", "pygments", "rich.syntax", "rich.progress"})
# Built or read where they are first used, not before the first request: the tool search's index
# and the readers of a query (the first `search_tools` call, or a refused call's suggestions), and
# the trajectory's projection (rows, spans, the OTel map: kept only for an exporter; a past
# session's trace is rendered when one is read).
FIRST_USE = frozenset(
    {
        "yagent.kernel.judge.tooldisclose.search",
        "yagent.kernel.judge.tooldisclose.phrasing",
        "yagent.kernel.judge.tooldisclose.vocab",
        "yagent.kernel.judge.tooldisclose.intent",
        "yagent.kernel.trace.trajectory.projector",
        "yagent.kernel.trace.trajectory.rows",
        "yagent.kernel.trace.trajectory.spans",
        "yagent.kernel.trace.trajectory.otelmap",
        "yagent.app.timeline",
    }
)
RUN = ["run", "--json", "-y", "say hi"]
# The console script (`yagent.cli:entry`), telling its modules into a file on SIGUSR1 and at exit.
SCRIPT = """
import atexit, gc, json, signal, ssl, sys
def tell(*_):  # the modules last: once they are told, everything is
    with open(OUT + ".ca", "w") as out:
        json.dump(LOADED, out)
    with open(OUT + ".gc", "w") as out:
        json.dump({"early": EARLY, "enabled": gc.isenabled()}, out)
    specs = getattr(sys.modules.get("yagent.toolspec.builtin"), "BUILTIN", ())
    with open(OUT + ".models", "w") as out:  # the built-in tools whose argument model was built
        json.dump([s.name for s in specs if s.model.__pydantic_complete__], out)
    with open(OUT, "w") as out:
        json.dump(sorted(k for k, v in sys.modules.items() if v is not None), out)
OUT = sys.argv.pop(1)
LOADED = []  # every CA bundle a TLS context loaded (httpx's default context loads certifi's)
def counted(self, *args, _load=ssl.SSLContext.load_verify_locations, **kwargs):
    LOADED.append(repr(args or kwargs))
    return _load(self, *args, **kwargs)
ssl.SSLContext.load_verify_locations = counted
EARLY = []  # every collection after `entry` began and before start-up's objects were frozen
gc.callbacks.append(
    lambda phase, info: phase == "start" and not gc.get_freeze_count()
    and "yagent.app.gcpolicy" in sys.modules and EARLY.append(info["generation"])
)
signal.signal(signal.SIGUSR1, tell)
atexit.register(tell)
from yagent.cli import entry
entry()
"""


def start(tmp_path: Path, url: str, args: list[str] = RUN) -> tuple[subprocess.Popen[bytes], Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    configure(home, f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{url}/v1"\n')
    told = tmp_path / "modules.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(told), *args],
        cwd=ws,
        env=env_for(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return proc, told


def until(predicate: Callable[[], bool], proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 90
    while not predicate() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert predicate(), f"{what} (exit {proc.poll()})"


def held_at_first_request(tmp_path: Path, srv: WireServer | None = None) -> set[str]:
    """The modules a `yagent run` holds once its first model request reached the server (`srv`,
    or a server of its own), the rest of what it told beside them (`tell`)."""
    if srv is None:
        with WireServer([Reply(hang_after=0)]) as own:
            return held_at_first_request(tmp_path, own)
    proc, told = start(tmp_path, srv.url)
    try:
        until(lambda: bool(srv.received), proc, "no model request")
        proc.send_signal(signal.SIGUSR1)
        until(lambda: told.exists() and told.read_text().endswith("]"), proc, "no modules told")
    finally:
        proc.kill()
        proc.wait()
    return set(json.loads(told.read_text()))


def test_the_first_model_request_loads_no_tool_executor(tmp_path: Path) -> None:
    loaded = held_at_first_request(tmp_path)
    assert "yagent.tools.registry" in loaded  # the run did build its adapter
    assert "yagent.kernel.ptc.bindings" in loaded  # the prompt's section on programs
    assert loaded & (EXECUTORS | LIBRARIES | HTTPX_CLI) == set()
    assert "httpx" in loaded  # the engine's client: httpx is there, its command line is not


def test_the_first_request_builds_no_search_index_and_no_trajectory_rows(tmp_path: Path) -> None:
    """The deferred catalog is listed (its entries built), not indexed; the telemetry turn reads
    the first events with the vocabulary alone (no exporter: no rows kept)."""
    loaded = held_at_first_request(tmp_path)
    assert "yagent.kernel.judge.tooldisclose.catalog" in loaded  # the catalog's entries
    assert "yagent.kernel.trace.trajectory.vocabulary" in loaded  # the watchdog's signals
    assert "yagent.app.telemetry" in loaded
    assert loaded & FIRST_USE == set()


def test_the_first_request_built_the_argument_models_of_the_tools_it_offers_only(
    tmp_path: Path,
) -> None:
    """A tool's argument model (its validator and its JSON schema) is built when the tool is
    offered, not when the registry is imported: a coding run's first request built none of the
    browser's 14, nor the session readers' or delegation's its agent is not given."""
    with WireServer([Reply(hang_after=0)]) as srv:
        held_at_first_request(tmp_path, srv)
    offered = {tool["function"]["name"] for tool in srv.received[0].body["tools"]}
    built = set(json.loads((tmp_path / "modules.json.models").read_text()))
    assert "read_file" in offered
    assert not any(name.startswith("browser_") for name in built)
    # Offered or in the deferred catalog (searched by parameter names): built. Nothing else.
    assert offered <= built
    assert "delegate" not in built


def test_start_up_runs_no_collection_and_the_collector_runs_once_the_app_is_open(
    tmp_path: Path,
) -> None:
    """Start-up allocates hundreds of thousands of objects that all stay alive (modules, classes,
    the configuration, the tool specs): the collector is held until the app is open, then what
    start-up built is frozen and collection resumes (`app.gcpolicy`)."""
    held_at_first_request(tmp_path)
    told = json.loads((tmp_path / "modules.json.gc").read_text())
    assert told == {"early": [], "enabled": True}


def test_a_plain_http_provider_is_asked_without_loading_a_ca_bundle(tmp_path: Path) -> None:
    """The provider is `http://` (loopback): no TLS handshake happens before the first request,
    so no context has loaded a CA bundle (httpx's default loads certifi's at client build)."""
    held_at_first_request(tmp_path)
    assert json.loads((tmp_path / "modules.json.ca").read_text()) == []


def test_a_tool_the_model_calls_has_its_executor_loaded_and_no_other(tmp_path: Path) -> None:
    with WireServer([Reply(events=submitted_frames("all done"))]) as srv:
        proc, told = start(tmp_path, srv.url)
        _, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err.decode()[-3000:]
    loaded = set(json.loads(told.read_text()))
    assert "yagent.tools.flow" in loaded  # agent_exit ran: its executor was imported to run it
    assert loaded & EXECUTORS == {"yagent.tools.flow"}
    assert loaded & LIBRARIES == set()  # --json shows no Markdown


def test_doctor_of_a_configured_provider_loads_no_yaml_and_runs_no_event_loop(
    tmp_path: Path,
) -> None:
    """No agent files: no YAML parser. A configured provider is checked without an event loop
    (its engine is checked, not built; reaching the server is one plain request), so asyncio —
    which nothing else `doctor` does needs — is never imported."""
    with WireServer([]) as srv:
        proc, told = start(tmp_path, srv.url, ["doctor"])
        out, err = proc.communicate(timeout=90)
    assert b"Traceback" not in err, err.decode()[-3000:]
    assert b"m at" in out  # the provider row: the model and where it is served
    loaded = set(json.loads(told.read_text()))
    assert {"yaml", "asyncio"} & loaded == set()
    assert "httpx" in loaded  # the provider row's request
    assert loaded & HTTPX_CLI == set()
    assert json.loads(Path(f"{told}.ca").read_text()) == []  # an http:// provider: no CA bundle
    # No app here: the collector resumed once the command was imported, start-up frozen first.
    assert json.loads(Path(f"{told}.gc").read_text()) == {"early": [], "enabled": True}
