"""What the host sets for the built-in executors: their service slots, settings and requests.

The built-in executors load at their first call (`tools.registry`); what the host hands them
before that — when it builds a run's tool context — lives here, so building a run imports none
of them.

Contract:
- One typed `Slot` (`tools.invocation`) per service a built-in executor reads: the running
  adapter and the program observer (`run_program`), the delegation runner (`delegate`), the
  session reader (`list_sessions`, `read_session`), the blueprint view (`load_tool`), the
  settings of `web_fetch` and of the browser, and the browser session the browser tools fill
  themselves. The registry declares each executor's needs with these slots; the executors read
  them; the host puts them.
- `configure_web` / `configure_browser` put the host's `Allow` (netguard; strict when never
  configured) and, for the browser, the executable and timeouts. They apply to what is fetched or
  started after the call.
- `close_browser(ctx)` closes the context's browser if a browser tool started one, and is a
  no-op (False) otherwise: the host calls it when the run owning the context ends, whether or
  not the browser tools were ever loaded.
- `Request` / `Delegator`: one `delegate` call as the host's runner receives it, and that runner.
  `SessionReader`: the read-only window on recorded sessions the host gives the Meta agent.
Leaves to the host: which of these it sets (`Adapter.require_services` refuses a run whose
granted tools need one that is not set) and the objects themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from yagent.kernel.confine import netguard
from yagent.kernel.ptc.result import Observer
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.invocation import Slot, needs


@dataclass(frozen=True, slots=True)
class Request:
    """One delegate call as the runner receives it."""

    call_id: str
    agent: str
    task: str
    write: tuple[str, ...]
    read: tuple[str, ...]


class Delegator(Protocol):
    async def delegate(self, request: Request) -> str: ...


class SessionReader(Protocol):
    """Read-only access to the recorded sessions. Lookups that fail raise `LookupError`."""

    def list_sessions(self, limit: int, all_workspaces: bool) -> dict[str, Any]: ...

    def read_session(self, session: str, part: str, offset: int, limit: int) -> dict[str, Any]: ...


class BrowserHandle(Protocol):
    """What the host needs of a browser session: closing it (True when one was running)."""

    async def close(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class WebConfig:
    """What the host opens for web_fetch: netguard's `Allow` and the resolver (None: system)."""

    allow: netguard.Allow = netguard.STRICT
    resolver: netguard.Resolver | None = None


DEFAULT_EXECUTABLE = "/usr/bin/chromium"


@dataclass(frozen=True, slots=True)
class BrowserConfig:
    executable: str = DEFAULT_EXECUTABLE
    allow: netguard.Allow = netguard.STRICT
    resolver: netguard.Resolver | None = None  # None: the system resolver
    timeout: float = 15.0  # seconds for one action (click, type…)
    navigation_timeout: float = 30.0
    launch_timeout: float = 60.0
    console_limit: int = 200


ADAPTER_KEY: Slot[Adapter] = Slot("adapter")
"""The running adapter: a program's host calls reach the same executors, MCP ones included."""
OBSERVER_KEY: Slot[Observer] = Slot("ptc_observer")
"""Called per host call of a program, for the trajectory."""
RUNNER_KEY: Slot[Delegator] = Slot("delegator")
READER_KEY: Slot[SessionReader] = Slot("session_reader")
BLUEPRINT_KEY: Slot[Callable[[], str]] = Slot("blueprint_view")
"""A callable read on every `load_tool` call; a non-empty view comes with its result."""
WEB_CONFIG_KEY: Slot[WebConfig] = Slot("web_fetch.config")
BROWSER_CONFIG_KEY: Slot[BrowserConfig] = Slot("yagent.browser.config")
BROWSER_SESSION_KEY: Slot[BrowserHandle] = Slot("yagent.browser.session")
USES_BROWSER = needs(BROWSER_CONFIG_KEY, optional=(BROWSER_SESSION_KEY,))
"""What every browser executor declares: the host's settings, and the session it fills itself."""


def configure_web(ctx: ToolContext, config: WebConfig) -> None:
    ctx.services.put(WEB_CONFIG_KEY, config)


def configure_browser(ctx: ToolContext, config: BrowserConfig) -> None:
    """The host's browser settings (Allow, executable) for sessions created after this call."""
    ctx.services.put(BROWSER_CONFIG_KEY, config)


async def close_browser(ctx: ToolContext) -> bool:
    """Close the context's browser, if any (the host calls this when the run ends)."""
    session = ctx.services.get(BROWSER_SESSION_KEY)
    return await session.close() if session is not None else False
