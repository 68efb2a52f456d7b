"""toolspec.browser: the 14 `browser_*` tools — argument models and specs.

Facts declared here and nowhere else:
- Every browser tool has `Effect.BROWSER` (never read-only: even a snapshot or a screenshot acts
  on a live page whose scripts run) and is `serial`: they share one page and one CDP connection,
  so two of them in parallel would race on the current tab.
- Tiers: the core loop a browsing agent runs on nearly every task (navigate, back, snapshot,
  click, type, press_key, wait_for, screenshot) is WARM — shown, but demotable under a schema
  budget; the occasional ones (select, hover, eval, tabs, console, close) are COLD — listed in the
  deferred catalog and loaded on demand. None is HOT: flow control must never lose its place to
  them.
- `browser_eval` runs arbitrary JavaScript in the page; its risk cannot be judged from the text,
  so its spec carries `always_authorize` and the workspace guard asks on every call.
- Screenshot paths are not `path_args`: the executor always writes inside the session's browser
  directory, whatever path the model gives, so there is nothing for the boundary check to judge.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from yagent.toolspec.params import Args
from yagent.toolspec.spec import Effect, Spec, Tier, make_spec

REF_PATTERN = r"^(f\d+)?e\d+$"


class NoArgs(Args):
    pass


class TargetArgs(Args):
    """An element: a `ref` from the last snapshot, or a Playwright selector. Exactly one."""

    ref: str = Field(
        "",
        pattern=r"^$|" + REF_PATTERN,
        description="Element ref from the latest browser_snapshot, e.g. 'e12'.",
    )
    selector: str = Field(
        "",
        max_length=1000,
        description="Playwright selector when there is no ref: CSS ('#id', 'form button'), "
        "'text=Sign in' or 'role=button[name=\"Go\"]'. It must match exactly one element.",
    )

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if bool(self.ref) == bool(self.selector):
            raise ValueError("give exactly one of ref or selector")
        return self


class NavigateArgs(Args):
    url: str = Field(
        max_length=8000,
        description="Absolute http(s) URL. Other schemes, and addresses the network guard "
        "refuses (loopback, private networks, cloud metadata…), are refused.",
    )


class SnapshotArgs(Args):
    max_chars: int = Field(
        20_000,
        ge=1_000,
        le=100_000,
        description="Cap on the snapshot text; a longer page is cut and the result says so.",
    )


class ClickArgs(TargetArgs):
    button: Literal["left", "right", "middle"] = "left"
    double: bool = Field(False, description="Double-click instead of a single click.")


class TypeArgs(TargetArgs):
    text: str = Field(max_length=100_000, description="Text to type into the field.")
    clear: bool = Field(True, description="Replace the field's content (false: append).")
    submit: bool = Field(False, description="Press Enter afterwards.")


class SelectArgs(TargetArgs):
    values: list[str] = Field(
        min_length=1, description="Option values or labels to select in a <select>."
    )


class HoverArgs(TargetArgs):
    pass


class PressKeyArgs(Args):
    key: str = Field(
        min_length=1,
        max_length=60,
        description="Key or chord in Playwright notation: 'Enter', 'Escape', 'ArrowDown', "
        "'Control+A', 'a'.",
    )


class WaitForArgs(Args):
    text: str = Field("", max_length=1000, description="Wait until this text is visible.")
    selector: str = Field("", max_length=1000, description="Or until this selector matches.")
    gone: bool = Field(False, description="Wait for it to disappear instead.")
    timeout: float = Field(10.0, gt=0, le=60, description="Seconds before giving up.")

    @model_validator(mode="after")
    def _one_condition(self) -> Self:
        if bool(self.text) == bool(self.selector):
            raise ValueError("give exactly one of text or selector")
        return self


class ScreenshotArgs(Args):
    path: str = Field(
        "",
        max_length=1000,
        description="File name (.png or .jpg) inside the session's browser directory; any other "
        "location is rewritten into it and the result says where the file was saved.",
    )
    full_page: bool = Field(False, description="The whole scrollable page, not the viewport.")


class EvalArgs(Args):
    expression: str = Field(
        min_length=1,
        max_length=100_000,
        description="JavaScript expression or function ('() => document.title') evaluated in "
        "the current tab; its value must be JSON-serialisable. Every call asks the user.",
    )


class TabsArgs(Args):
    action: Literal["list", "new", "select", "close"] = "list"
    index: int | None = Field(None, ge=0, description="Tab index for select and close.")
    url: str = Field("", max_length=8000, description="For new: a URL to open in the new tab.")


class ConsoleArgs(Args):
    limit: int = Field(50, ge=1, le=200, description="Most recent messages to return.")
    clear: bool = Field(
        False, description="Afterwards forget every kept message and the dropped count."
    )


def _spec(
    name: str, description: str, model: type[Args], tier: Tier, brief: str, url_arg: str = ""
) -> Spec:
    return make_spec(
        name, description, model, Effect.BROWSER, tier, serial=True, brief=brief, url_arg=url_arg
    )


EVAL_AUTHORIZATION = (
    "runs arbitrary JavaScript in the page; its risk cannot be judged from the code"
)

BROWSER: tuple[Spec, ...] = (
    _spec(
        "browser_navigate",
        "Open an http(s) URL in the current tab and wait for it to load. Every request the "
        "page makes passes the network guard; refused requests are listed in the result.",
        NavigateArgs,
        Tier.WARM,
        "Open a URL in the browser.",
        url_arg="url",
    ),
    _spec(
        "browser_back",
        "Go back one page in the current tab's history.",
        NoArgs,
        Tier.WARM,
        "Go back one page.",
    ),
    _spec(
        "browser_snapshot",
        "The current tab's accessibility outline as text: roles, names, values, links, and a "
        "ref for each element to use with click, type, select and hover. Size-capped.",
        SnapshotArgs,
        Tier.WARM,
        "Read the page (outline with refs).",
    ),
    _spec(
        "browser_click",
        "Click an element (ref from the snapshot, or a selector).",
        ClickArgs,
        Tier.WARM,
        "Click an element.",
    ),
    _spec(
        "browser_type",
        "Type text into an input or textarea; optionally press Enter afterwards.",
        TypeArgs,
        Tier.WARM,
        "Type into a field.",
    ),
    _spec(
        "browser_select",
        "Select options in a <select> element by value or label.",
        SelectArgs,
        Tier.COLD,
        "Choose options in a select.",
    ),
    _spec(
        "browser_hover",
        "Move the mouse over an element (menus, tooltips).",
        HoverArgs,
        Tier.COLD,
        "Hover over an element.",
    ),
    _spec(
        "browser_press_key",
        "Press a key or chord in the current tab (to the focused element).",
        PressKeyArgs,
        Tier.WARM,
        "Press a key.",
    ),
    make_spec(
        "browser_wait_for",
        "Wait until a text or selector appears (or disappears), up to a timeout.",
        WaitForArgs,
        Effect.BROWSER,
        Tier.WARM,
        serial=True,
        brief="Wait for text or an element.",
        own_timeout=lambda args: float(
            args.get("timeout") or WaitForArgs.model_fields["timeout"].default
        ),
    ),
    _spec(
        "browser_screenshot",
        "Save a screenshot of the current tab as a file in the session's browser directory; "
        "the result gives the path it was saved to, and attaches the image when you can see "
        "images (seen_by_model says whether you did).",
        ScreenshotArgs,
        Tier.WARM,
        "Screenshot the page to a file.",
    ),
    make_spec(
        "browser_eval",
        "Evaluate JavaScript in the current tab and return its JSON value. The user is asked "
        "to authorize every call.",
        EvalArgs,
        Effect.BROWSER,
        Tier.COLD,
        serial=True,
        brief="Run JavaScript in the page.",
        always_authorize=EVAL_AUTHORIZATION,
    ),
    _spec(
        "browser_tabs",
        "List, open, select or close tabs. The selected tab is the one the other tools use.",
        TabsArgs,
        Tier.COLD,
        "Manage browser tabs.",
    ),
    _spec(
        "browser_console",
        "Recent console messages and page errors of all tabs, oldest first.",
        ConsoleArgs,
        Tier.COLD,
        "Read the browser console.",
    ),
    _spec(
        "browser_close",
        "Close the browser and every tab. The next browser tool starts a fresh one.",
        NoArgs,
        Tier.COLD,
        "Close the browser.",
    ),
)
