"""Fixture of tests/test_gate_services.py: executors whose only read of a service they did not
declare is inside a method they call — on `self`, on an object they made, on one they were
handed — never in their own body. The gate must follow those calls and flag each."""

from __future__ import annotations

from typing import Any

from yagent.tools.invocation import Slot, needs

DECLARED: Slot[str] = Slot("fixture: declared")
HIDDEN: Slot[str] = Slot("fixture: read through a method")


class Helper:
    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx

    def value(self) -> str:
        return self._hidden()  # a method calling a method on self

    def _hidden(self) -> str:
        return str(self.ctx.services.get(HIDDEN))


class Reader:
    def read_for(self, ctx: Any) -> str:
        return str(ctx.services.get(HIDDEN))


class Opener:
    def __init__(self, ctx: Any) -> None:
        self.found = ctx.services.get(HIDDEN)  # read when it is made


@needs(DECLARED)
async def through_a_method(ctx: Any, args: Any) -> Any:
    helper = Helper(ctx)
    return [ctx.services.get(DECLARED), helper.value()]


@needs(DECLARED)
async def through_an_object_handed_on(ctx: Any, args: Any, reader: Reader) -> Any:
    return reader.read_for(ctx)


@needs(DECLARED)
async def through_a_constructor(ctx: Any, args: Any) -> Any:
    return Opener(ctx).found


@needs(DECLARED, HIDDEN)
async def declared_both(ctx: Any, args: Any) -> Any:
    return [Helper(ctx).value(), Reader().read_for(ctx), Opener(ctx).found]
