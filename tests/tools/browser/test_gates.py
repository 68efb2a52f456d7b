"""The browser gates: the specs and the executor
registry agree both ways, browser tools are never read-only and always serial, and browser_eval
asks for authorization on every call — benign JavaScript included — while browser_snapshot does
not. None of these needs a browser: the guard refuses before any executor runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.browser.conftest import adapter_for, make_context
from yagent.kernel.judge.invoke import Call, Decision
from yagent.tools import browser
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.hostservices import BROWSER_SESSION_KEY
from yagent.tools.registry import LazyExecutor, executors
from yagent.tools.settings import Settings
from yagent.tools.stages import AuthorizationStage
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec import Effect, Spec, Tier
from yagent.toolspec.browser import BROWSER, NoArgs
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

BROWSER_NAMES = {spec.name for spec in BROWSER}

# Typical arguments for every browser tool: none of them but eval may need a person's word.
BENIGN_ARGS: dict[str, dict[str, object]] = {
    "browser_navigate": {"url": "https://example.com/"},
    "browser_back": {},
    "browser_snapshot": {},
    "browser_click": {"ref": "e3"},
    "browser_type": {"selector": "#name", "text": "hello"},
    "browser_select": {"selector": "#color", "values": ["g"]},
    "browser_hover": {"ref": "e4"},
    "browser_press_key": {"key": "Enter"},
    "browser_wait_for": {"text": "done"},
    "browser_screenshot": {"path": "../../etc/x.png"},
    "browser_eval": {"expression": "1+1"},
    "browser_tabs": {"action": "list"},
    "browser_console": {},
    "browser_close": {},
}


def _surface(tmp_path: Path, yolo: Yolo = Yolo.OFF) -> Surface:
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    guard = WorkspaceGuard(tmp_path / "ws", settings=Settings(tmp_path / "home"), yolo=yolo)
    return Surface(BUILTIN, profile("browser"), guard, options=SurfaceOptions(deferred=False))


def test_browser_specs_match_registry() -> None:
    registry = executors()
    assert len(BROWSER) == 14
    assert all(spec in BUILTIN for spec in BROWSER)
    # every browser spec has an executor, and every browser executor has a spec
    assert set(registry) >= BROWSER_NAMES
    browser_executors = {
        n
        for n, f in registry.items()
        if isinstance(f, LazyExecutor) and f.module.startswith(browser.__name__)
    }
    assert browser_executors == BROWSER_NAMES
    # and the whole registry agrees with the whole built-in spec list
    assert set(registry) == {spec.name for spec in BUILTIN}
    # the fixtures above name every browser tool once, so nothing is left unjudged below
    assert set(BENIGN_ARGS) == BROWSER_NAMES


def test_every_browser_spec_validates_its_typical_arguments() -> None:
    for spec in BROWSER:
        assert spec.model is not None
        spec.model.model_validate(BENIGN_ARGS[spec.name])
        assert spec.parameters["type"] == "object"


def test_browser_tools_are_never_read_only(tmp_path: Path) -> None:
    surface = _surface(tmp_path)
    for spec in BROWSER:
        assert spec.effect is Effect.BROWSER, spec.name
        assert not spec.read_only, spec.name
        assert spec.serial, spec.name
        assert spec.tier in (Tier.WARM, Tier.COLD), spec.name
        assert surface.spec(spec.name) == spec, "the browser profile grants every browser tool"
        assert not surface.is_parallelizable(spec.name), spec.name


def test_browser_tools_are_granted_only_by_the_browser_effect(tmp_path: Path) -> None:
    for name in ("coding", "repo", "chat", "devops", "director", "meta"):
        assert not any(profile(name).grants(spec) for spec in BROWSER), name


@pytest.mark.anyio
async def test_workspace_guard_browser_eval_auth_by_risk(tmp_path: Path) -> None:
    stage = AuthorizationStage(_surface(tmp_path))
    for name, args in BENIGN_ARGS.items():
        verdict = await stage.judge(Call(name, args))
        expected = Decision.PROMPT if name == "browser_eval" else Decision.ALLOW
        assert verdict.decision is expected, name
    # benign or not, the text of the JavaScript never decides
    for code in ("1+1", "document.title", "() => 42", "fetch('/x')"):
        verdict = await stage.judge(Call("browser_eval", {"expression": code}))
        assert verdict.decision is Decision.PROMPT
        assert "browser_eval" in verdict.reason
        assert "JavaScript" in verdict.reason


@pytest.mark.anyio
async def test_eval_authorization_yields_to_standing_permissions(tmp_path: Path) -> None:
    surface = _surface(tmp_path)
    call = Call("browser_eval", {"expression": "1+1"})
    surface.guard.allow_tool_for_session("browser_eval")
    assert (await AuthorizationStage(surface).judge(call)).decision is Decision.ALLOW
    yolo = _surface(tmp_path / "y", yolo=Yolo.YOLO)
    assert (await AuthorizationStage(yolo).judge(call)).decision is Decision.ALLOW


@pytest.mark.anyio
async def test_unapproved_eval_never_reaches_the_browser(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)  # no confirm loop: a prompt is a refusal
    result = await adapter_for(ctx).call("browser_eval", {"expression": "1+1"}, "c1")
    assert not result.ok
    assert result.judgement is not None
    assert BROWSER_SESSION_KEY not in ctx.services, "the executor ran (a browser session was made)"


def test_always_authorize_is_a_general_spec_fact(tmp_path: Path) -> None:
    surface = _surface(tmp_path)
    plain = Spec("tool_x", "A tool.", {"type": "object"}, Effect.NETWORK, Tier.COLD)
    marked = Spec(
        "tool_x", "A tool.", {"type": "object"}, Effect.NETWORK, Tier.COLD, always_authorize="why"
    )
    assert surface.guard.danger(plain, {}) is None
    assert surface.guard.danger(marked, {}) == "tool_x why"
    assert NoArgs.model_json_schema()["properties"] == {}


def test_element_and_wait_arguments_need_exactly_one_target() -> None:
    from pydantic import ValidationError

    from yagent.toolspec.browser import ClickArgs, WaitForArgs

    for bad in ({}, {"ref": "e1", "selector": "#x"}):
        with pytest.raises(ValidationError, match="exactly one of ref or selector"):
            ClickArgs.model_validate(bad)
    with pytest.raises(ValidationError):
        ClickArgs.model_validate({"ref": "#not-a-ref"})
    assert ClickArgs.model_validate({"ref": "f2e13"}).ref == "f2e13"
    for bad in ({}, {"text": "a", "selector": "#x"}):
        with pytest.raises(ValidationError, match="exactly one of text or selector"):
            WaitForArgs.model_validate(bad)
