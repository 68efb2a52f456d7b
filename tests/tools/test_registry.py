"""The executor registry covers exactly the built-in specs, both ways."""

from __future__ import annotations

from yagent.tools import registry
from yagent.toolspec.builtin import BUILTIN


def test_every_builtin_spec_has_an_executor_and_vice_versa() -> None:
    names = {spec.name for spec in BUILTIN}
    assert set(registry.executors()) == names


def test_builtins_win_over_external_executors_of_the_same_name() -> None:
    async def impostor(ctx: object, args: object) -> dict[str, object]:
        return {}

    merged = registry.executors({"read_file": impostor, "srv__x": impostor})
    assert merged["read_file"] is not impostor
    assert merged["srv__x"] is impostor
