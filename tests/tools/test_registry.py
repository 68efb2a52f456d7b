"""The executor registry covers exactly the built-in specs, both ways; its executors load at
their first call, and one that cannot load fails that call visibly."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.tools.conftest import make_surface
from yagent.tools import registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.invocation import declared
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import BUILTIN

pytestmark = pytest.mark.anyio


def test_every_builtin_spec_has_an_executor_and_vice_versa() -> None:
    names = {spec.name for spec in BUILTIN}
    assert set(registry.executors()) == names


def test_builtins_win_over_external_executors_of_the_same_name() -> None:
    async def impostor(ctx: object, args: object) -> dict[str, object]:
        return {}

    merged = registry.executors({"read_file": impostor, "srv__x": impostor})
    assert merged["read_file"] is not impostor
    assert merged["srv__x"] is impostor


async def test_an_executor_loads_when_first_resolved_and_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Naming an executor imports nothing; resolving it imports its module, once."""
    monkeypatch.delitem(sys.modules, "yagent.tools.webtext", raising=False)
    lazy = registry.LazyExecutor("yagent.tools.webtext", "html_to_text")
    assert "yagent.tools.webtext" not in sys.modules
    assert lazy.resolve() is lazy.resolve() is sys.modules["yagent.tools.webtext"].html_to_text


async def test_an_executor_whose_module_cannot_load_fails_its_call_visibly(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = registry.LazyExecutor("yagent.tools.no_such_module", "read_file")
    monkeypatch.setitem(registry._BUILTIN, "read_file", broken)  # type: ignore[index]
    adapter = Adapter(ToolContext(workspace, make_surface(workspace, home)), registry.executors())
    result = await adapter.call("read_file", {"path": "a.txt"}, "c1")
    assert not result.ok
    assert "yagent.tools.no_such_module" in result.content
    assert repr(broken) == "LazyExecutor(yagent.tools.no_such_module.read_file)"


def test_every_built_in_executor_declares_what_the_registry_says() -> None:
    """Resolving checks the executor's own declaration against the registry's: all agree."""
    for name, executor in registry.executors().items():
        if isinstance(executor, registry.LazyExecutor):
            assert declared(executor.resolve()) == declared(executor), name


async def test_an_executor_declaring_other_services_than_the_registry_is_not_run(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    undeclared = registry.LazyExecutor("yagent.tools.web", "web_fetch")  # reads its config
    monkeypatch.setitem(registry._BUILTIN, "web_fetch", undeclared)  # type: ignore[index]
    with pytest.raises(registry.DeclarationMismatchError, match=r"web_fetch\.config"):
        undeclared.resolve()
    surface = make_surface(workspace, home, profile_name="devops", yolo=Yolo.FULL)
    adapter = Adapter(ToolContext(workspace, surface), registry.executors())
    result = await adapter.call("web_fetch", {"url": "http://example.invalid/"}, "c1")
    assert not result.ok
    assert "the registry declares required [], optional []" in result.content
