"""A real PostgreSQL for the tests: Debian's server binaries, one cluster per test session.

`pg_cluster` (session-scoped) runs `initdb` + `pg_ctl start` in a temp dir (as the unprivileged
`postgres` user when run as root, since initdb refuses root; as the current user otherwise),
listening on a unix socket in that dir only, waits with `pg_isready`, and stops the server
(`pg_ctl stop -m immediate`) and removes the dir on teardown.
Each test gets its own database, cloned from an empty template (`CREATE DATABASE … TEMPLATE`),
through `pg_url` or, for suite factories that only see a scratch dir, `database()`.
Registered for every test by `pytest_plugins` in tests/conftest.py.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

VERSION_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
BIN = VERSION_DIRS[0] if VERSION_DIRS else Path("/usr/lib/postgresql/15/bin")
USER = "postgres"
TEMPLATE = "yagent_template"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    """One PostgreSQL server in a temp dir, owned by the `postgres` user."""

    def __init__(self, *, durable: bool = False) -> None:
        # fsync off for the tests (a crashed test cluster is thrown away); on for benchmarks
        self.durable = durable
        self.root = Path(tempfile.mkdtemp(prefix="yagent-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._names = itertools.count(1)
        self.running = False

    def _as_postgres(self, *argv: str, timeout: float = 60) -> None:
        # initdb refuses root: as root, run the server binaries as the `postgres` user
        prefix = ["setpriv", *self._ids(), "--init-groups"] if os.geteuid() == 0 else []
        subprocess.run(
            [*prefix, *argv],
            check=True,
            capture_output=True,
            timeout=timeout,
            env={**os.environ, "LC_ALL": "C.UTF-8"},
        )

    def _ids(self) -> list[str]:
        entry = pwd.getpwnam(USER)
        return [f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}"]

    def start(self) -> None:
        os.chmod(self.root, 0o755)
        if os.geteuid() == 0:
            entry = pwd.getpwnam(USER)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._as_postgres(
            str(BIN / "initdb"), "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8"
        )
        fsync = "on" if self.durable else "off"
        options = f"-k {self.root} -p {self.port} -c listen_addresses='' -c fsync={fsync}"
        self._as_postgres(
            str(BIN / "pg_ctl"), "-D", str(self.data), "-o", options, "-w", "-t", "60",
            "-l", str(self.root / "log"), "start",
        )  # fmt: skip
        self.running = True
        self._as_postgres(
            str(BIN / "pg_isready"), "-h", str(self.root), "-p", str(self.port), "-t", "30"
        )
        self.admin(f"CREATE DATABASE {TEMPLATE}")

    def url(self, dbname: str) -> str:
        return f"postgresql://{USER}@/{dbname}?host={self.root}&port={self.port}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self.admin(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def stop(self) -> None:
        if self.running:
            self.running = False
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                self._as_postgres(
                    str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"
                )
        shutil.rmtree(self.root, ignore_errors=True)


_running: list[Cluster] = []


def database() -> str:
    """A fresh database on the session's cluster (the `pg_cluster` fixture must be active)."""
    if not _running:
        raise RuntimeError("tests.pg.database() needs the pg_cluster fixture")
    return _running[0].database()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    cluster = Cluster()
    atexit.register(cluster.stop)  # also when the session is interrupted
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    _running.append(cluster)
    try:
        yield cluster
    finally:
        _running.remove(cluster)
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    return pg_cluster.database()
