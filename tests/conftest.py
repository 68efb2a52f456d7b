"""Shared test configuration: async tests run on anyio's asyncio backend; no test leaves a
session sandbox (`tools.jobs`) running for the next one."""

from collections.abc import Iterator

import pytest

from yagent.tools import jobs

pytest_plugins = ["tests.pg"]  # the real PostgreSQL fixtures (pg_cluster, pg_url)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_session_sandbox_outlives_its_test() -> Iterator[None]:
    yield
    jobs.close_all_now()
