"""Shared parts for the ptc tests: real tool entries, real chains, recording executors."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call, Chain, FuncStage, Verdict
from yagent.kernel.judge.tooldisclose import Param, ToolEntry
from yagent.kernel.ptc.bindings import Bindings
from yagent.kernel.ptc.dispatch import ChainDispatcher

FETCH = ToolEntry(
    "fetch-data",
    "Fetch a record by key.",
    params=(Param("key", True), Param("max-items"), Param("verbose")),
)
DROP = ToolEntry("drop_table", "Drop a table.", params=(Param("table", True),))
ASK = ToolEntry("deploy", "Deploy a service.", params=(Param("service", True),))
FLAKY = ToolEntry("flaky", "Fails transiently.")
ENTRIES = (FETCH, DROP, ASK, FLAKY)


def allow_stage(name: str = "allow") -> FuncStage:
    async def judge(call: Call) -> Verdict:
        return Verdict.allow()

    return FuncStage(name, judge)


def deny_stage(tools: Iterable[str], name: str = "policy") -> FuncStage:
    denied = frozenset(tools)

    async def judge(call: Call) -> Verdict:
        if call.tool in denied:
            return Verdict.deny(f"{call.tool} is forbidden by policy")
        return Verdict.allow()

    return FuncStage(name, judge)


def prompt_stage(tools: Iterable[str], name: str = "approval") -> FuncStage:
    asked = frozenset(tools)

    async def judge(call: Call) -> Verdict:
        if call.tool in asked:
            return Verdict.prompt(f"{call.tool} changes production")
        return Verdict.allow()

    return FuncStage(name, judge)


def crash_stage(tools: Iterable[str], name: str = "buggy") -> FuncStage:
    broken = frozenset(tools)

    async def judge(call: Call) -> Verdict:
        if call.tool in broken:
            raise RuntimeError("guard bug")
        return Verdict.allow()

    return FuncStage(name, judge)


class Tools:
    """Executors that record every call they actually run."""

    def __init__(self) -> None:
        self.ran: list[Call] = []

    async def fetch(self, call: Call) -> Any:
        self.ran.append(call)
        key = call.args.get("key")
        return {"key": key, "args": dict(call.args), "data": f"value-of-{key}"}

    async def drop(self, call: Call) -> Any:
        self.ran.append(call)
        return {"dropped": call.args.get("table")}

    async def deploy(self, call: Call) -> Any:
        self.ran.append(call)
        return {"deployed": call.args.get("service")}

    async def flaky(self, call: Call) -> Any:
        self.ran.append(call)
        raise toolfail.ToolFailure(toolfail.Kind.TRANSIENT, "connection reset")

    def executors(self) -> dict[str, Any]:
        return {
            "fetch-data": self.fetch,
            "drop_table": self.drop,
            "deploy": self.deploy,
            "flaky": self.flaky,
        }

    def ran_tools(self) -> list[str]:
        return [c.tool for c in self.ran]


@pytest.fixture
def tools() -> Tools:
    return Tools()


@pytest.fixture
def bindings() -> Bindings:
    return Bindings.assemble(ENTRIES)


@pytest.fixture
def gated_chain() -> Chain:
    return Chain([deny_stage(["drop_table"]), prompt_stage(["deploy"]), crash_stage(["flaky"])])


@pytest.fixture
def dispatcher(tools: Tools) -> ChainDispatcher:
    return ChainDispatcher(Chain([allow_stage()]), tools.executors())
