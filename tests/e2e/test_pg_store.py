"""`[store] url` on a real PostgreSQL (tests.pg), through real `yagent` subprocesses.

- A run's state lands in PostgreSQL, not in the home's files: its session and messages, its
  run, its checkpoints and its side effect are rows there.
- SIGKILL during a side-effecting call (a real `git push`), then `yagent resume` from ANOTHER
  yagent home (another "machine") with the same URL: the run continues there, the push is
  reported uncertain and never repeated — judged from the rows in PostgreSQL.
- Bad input: an unreachable database, a schema newer than this yagent, a URL that is not
  PostgreSQL — one line, exit 2, no traceback.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import psycopg
import pytest

from tests.e2e.test_durable_kill import EXIT, PUSH, git, pushes, recording, yagent
from tests.e2e.test_durable_kill import world as world  # the fixture, reused
from yagent.llm.scripted import call


@pytest.fixture
def pg_world(world: dict[str, Path], pg_url: str) -> dict[str, Path]:
    config = world["home"] / "config.toml"
    config.write_text(config.read_text() + f'\n[store]\nurl = "{pg_url}"\n')
    world["url"] = Path(pg_url)  # carried as a path-typed value in the same dict
    return world


def rows(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql))  # type: ignore[arg-type]


def one_line_refusal(proc_out: tuple[str, str], returncode: int | None) -> str:
    out, err = proc_out
    assert returncode == 2, (out, err)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.timeout(300)
def test_a_run_killed_on_one_machine_is_finished_on_another_and_its_push_never_repeated(
    pg_world: dict[str, Path],
) -> None:
    url = str(pg_world["url"]).replace("postgresql:/", "postgresql://", 1)
    first = recording(pg_world, "run.json", call("run_bash", PUSH, call_id="push1"))
    proc = yagent(["run", "--json", "-y", "--replay", str(first), "publish"], pg_world)
    deadline = time.monotonic() + 120
    while pushes(pg_world) == 0:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the push never happened"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert not (pg_world["home"] / "durable.db").exists()  # the state is in PostgreSQL
    [(run_id, agent)] = rows(url, "SELECT run_id, agent FROM runs_runs")
    assert agent == "coding"
    [(key, state, holder)] = rows(url, "SELECT key, state, holder FROM sideeffect_keys")
    assert state == "in_flight"  # the intent was recorded before the push ran
    assert rows(url, "SELECT component, version FROM schema_version ORDER BY component") == [
        ("checkpoint", 1),
        ("commitgate", 1),
        ("lease", 1),
        ("runs", 1),
        ("sessions", 3),
        ("sideeffect", 1),
        ("taskboard", 1),  # the Director's delegations: on the same database
    ]
    assert not (pg_world["home"] / "sessions.db").exists()  # so are the sessions
    [(sid,)] = rows(url, "SELECT id FROM sessions")
    assert rows(url, f"SELECT count(*) FROM messages WHERE session_id = '{sid}'") != [(0,)]
    assert rows(url, "SELECT session_id FROM lease_sessions") == [(sid,)]  # the dead one's

    # The dead worker's lease (effect_lease = 1 s) lapses by the server's clock before the other
    # machine starts: only a lapsed in-flight key is judged (and written) uncertain — a live-
    # looking one is only reported so — which is what the row's state below proves.
    deadline = time.monotonic() + 30
    while rows(
        url,
        "SELECT count(*) FROM sideeffect_keys WHERE expires_at > "
        "extract(epoch FROM clock_timestamp())",
    ) != [(0,)]:
        assert time.monotonic() < deadline, "the dead worker's effect lease never lapsed"
        time.sleep(0.1)

    # another machine: another yagent home, the same [store] url
    other = pg_world["tmp"] / "home2"
    other.mkdir()
    (other / "config.toml").write_text((pg_world["home"] / "config.toml").read_text())
    machine2 = {**pg_world, "home": other}

    again = recording(
        pg_world,
        "resume.json",
        call("run_bash", PUSH, call_id="push1"),
        call("agent_exit", EXIT, call_id="exit"),
    )
    resumed = yagent(["resume", sid[:12], "--json", "-y", "--replay", str(again)], machine2)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert "resume decision: continue the interrupted run" in err
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    settled = [e for e in events if e["type"] == "tool_settled"]
    assert [(e["call_id"], e["outcome"]) for e in settled] == [("push1", "uncertain")]
    assert pushes(pg_world) == 1  # never repeated
    assert git("rev-parse", "main", cwd=pg_world["remote"]) == git(
        "rev-parse", "HEAD", cwd=pg_world["ws"]
    )
    assert rows(url, "SELECT state FROM sideeffect_keys") == [("uncertain",)]
    assert rows(url, f"SELECT count(*) FROM checkpoint_snapshots WHERE run_id = '{run_id}'") == [
        (1,)
    ]
    assert rows(url, "SELECT state FROM commitgate_gates WHERE step_id = 'end'") == [("finished",)]
    assert rows(url, "SELECT count(*) FROM lease_sessions") == [(0,)]  # released at the end
    listed = yagent(["sessions", "--all"], machine2)  # the other machine lists it too
    out, err = listed.communicate(timeout=60)
    assert listed.returncode == 0, err
    assert sid[:12] in out
    assert key
    assert holder


def test_an_unreachable_database_is_one_line_and_exit_2(world: dict[str, Path]) -> None:
    config = world["home"] / "config.toml"
    url = "postgresql://nobody:s3cret@127.0.0.1:1/nowhere"
    config.write_text(config.read_text() + f'\n[store]\nurl = "{url}"\n')
    run = recording(world, "r.json", call("agent_exit", EXIT, call_id="exit"))
    proc = yagent(["run", "--json", "-y", "--replay", str(run), "hello"], world)
    line = one_line_refusal(proc.communicate(timeout=60), proc.returncode)
    assert "[store] url" in line
    assert "cannot reach the database at postgresql://127.0.0.1:1/nowhere: " in line
    assert "Connection refused" in line
    assert "s3cret" not in line


def test_a_database_from_a_newer_yagent_is_refused(pg_world: dict[str, Path]) -> None:
    url = str(pg_world["url"]).replace("postgresql:/", "postgresql://", 1)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
        )
        conn.execute("INSERT INTO schema_version VALUES ('sideeffect', 99)")
    run = recording(pg_world, "r.json", call("agent_exit", EXIT, call_id="exit"))
    proc = yagent(["run", "--json", "-y", "--replay", str(run), "hello"], pg_world)
    line = one_line_refusal(proc.communicate(timeout=60), proc.returncode)
    assert "schema version 99, newer than this yagent knows (1)" in line
    # the component refused is untouched (each component migrates in its own transaction)
    assert rows(url, "SELECT version FROM schema_version WHERE component = 'sideeffect'") == [(99,)]


def test_a_store_url_that_is_not_postgres_is_a_config_error(world: dict[str, Path]) -> None:
    config = world["home"] / "config.toml"
    config.write_text(config.read_text() + '\n[store]\nurl = "mysql://db/x"\n')
    run = recording(world, "r.json", call("agent_exit", EXIT, call_id="exit"))
    proc = yagent(["run", "--json", "-y", "--replay", str(run), "hello"], world)
    line = one_line_refusal(proc.communicate(timeout=60), proc.returncode)
    assert "store.url" in line
    assert "postgresql://" in line
