"""`yagent doctor` on a fleet's configuration, through a real `yagent doctor` process: the
database of `[store] url` (a real PostgreSQL, tests.pg) — reachable, each component's schema
version against this yagent's — and the Temporal frontend of `YAGENT_TEMPORAL_ADDRESS` (a real dev
server) — reachable, its workers counted."""

from __future__ import annotations

import subprocess
import sys

import psycopg

from tests.scale.conftest import DevServer, World, free_port
from yagent.memory.pgstore import PgSessionStore


def _doctor(world: World, home_env: dict[str, str]) -> tuple[int, dict[str, str]]:
    env = world.env() | {"COLUMNS": "250"} | home_env
    done = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "doctor"],
        env=env,
        cwd=world.tmp,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    rows: dict[str, str] = {}
    for line in done.stdout.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) >= 4 and cells[1]:
            rows[cells[1]] = f"{cells[2]} {cells[3]}"
    return done.returncode, rows


def test_doctor_reads_the_database_schema_versions_and_refuses_a_newer_one(
    world: World, pg_url: str
) -> None:
    home = world.machine("m1", pg_url)
    PgSessionStore(pg_url).close()  # the sessions component exists; the others do not yet
    code, rows = _doctor(world, {"YAGENT_HOME": str(home)})
    assert rows["database"].startswith("ok "), rows
    assert "reachable" in rows["database"]
    assert rows["schema sessions"] == "ok version 3"
    assert rows["schema sideeffect"].startswith("ok not created yet")
    assert rows["temporal"].startswith("ok not configured")  # informational
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = 99 WHERE component = 'sessions'")
    code, rows = _doctor(world, {"YAGENT_HOME": str(home)})
    assert code == 1
    assert rows["schema sessions"].startswith("FAIL version 99, newer than this yagent knows (3)")
    with psycopg.connect(pg_url) as conn:  # doctor changed nothing
        assert conn.execute(
            "SELECT version FROM schema_version WHERE component = 'sessions'"
        ).fetchone() == (99,)


def test_doctor_fails_on_an_unreachable_database(world: World) -> None:
    nowhere = f"postgresql://u:secret@127.0.0.1:{free_port()}/db"
    home = world.machine("m1", nowhere)
    code, rows = _doctor(world, {"YAGENT_HOME": str(home)})
    assert code == 1
    assert rows["database"].startswith(f"FAIL postgresql://127.0.0.1:{nowhere.split(':')[3]}")
    assert "unreachable" in rows["database"]
    assert "secret" not in rows["database"]


def test_doctor_checks_the_temporal_frontend_and_counts_its_workers(
    temporal_server: DevServer, world: World
) -> None:
    env = {"YAGENT_TEMPORAL_ADDRESS": temporal_server.address}
    _, rows = _doctor(world, env)
    assert rows["temporal"] == f"ok {temporal_server.address}: reachable, no worker polls 'yagent'"
    nowhere = f"127.0.0.1:{free_port()}"
    code, rows = _doctor(world, {"YAGENT_TEMPORAL_ADDRESS": nowhere})
    assert code == 1
    assert rows["temporal"].startswith(f"FAIL cannot reach Temporal at {nowhere}")


def test_the_address_comes_from_the_environment_when_not_given(
    temporal_server: DevServer, world: World
) -> None:
    env = world.env() | {"YAGENT_TEMPORAL_ADDRESS": temporal_server.address}
    done = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "batch", "status", "b-none", "--engine", "temporal"],
        env=env,
        cwd=world.tmp,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "yagent batch: no batch 'b-none' on the Temporal server"
