"""`yagent trace`: the terminal table, and the HTML timeline in a real headless Chromium."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from yagent.agents import catalog
from yagent.app import timeline
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.app.telemetry import project
from yagent.app.timeline import lines_of, render_html, render_text
from yagent.cli.demo import SCRIPT, TASK, prepare
from yagent.llm.scripted import ScriptedEngine
from yagent.memory import EventRecord
from yagent.tools.yolo import Yolo

from .trace_events import INJECTION, Recorder, troubled_session

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


# -- the terminal table -----------------------------------------------------------------------


def test_text_shows_every_row_with_its_state() -> None:
    text = render_text(troubled_session())
    assert text.startswith("2 turn(s) · 27 events")
    assert "missing_result" in text
    assert "unpaired_result · timing backfilled · watchdog" in text
    assert "paired · timed out" in text
    assert "paired · duplicate_result · failed (not_found)" in text
    assert "(4 paired, 1 missing result, 1 unpaired result, 1 duplicate result, 2 failed)" in text
    assert "declared, never executed · watchdog" in text
    assert "delegation · repo" in text
    assert "⚠ watchdog: call c5 was declared (step 2) but never executed" in text
    assert "a result for call zz arrived (step 1 of delegation d1)" in text
    assert "2 watchdog warning(s)" in text
    assert re.search(r"\+2\.600 s\s+3\.000 s\s+paired · timed out\s+run_bash", text)
    lines = text.splitlines()
    exit_row = next(line for line in lines if line.rstrip().endswith("agent_exit"))
    step_row = next(line for line in lines if "unpriced-model" in line)
    assert exit_row.index("agent_exit") > step_row.index("step 1")  # children are indented


def test_text_escapes_control_characters_from_untrusted_names() -> None:
    r = Recorder()
    r.step(0, 1, 1, [("c1", "evil\x1b[2J", {})])
    r.call(1, 1, "c1", "evil\x1b[2J\u202e", {})
    text = render_text(r.events)
    assert "\x1b" not in text
    assert "\u202e" not in text
    assert "evil\\x1b[2J\\u202e" in text
    assert "open (no turn end yet)" in text


def test_text_counts_unrecognised_events_and_accepts_a_projection() -> None:
    r = Recorder()
    r.add(0, "mystery_event")
    p = project(r.events)
    assert render_text(p) == render_text(r.events)
    assert "1 event(s) not drawn as rows (mystery_event: kept in the session" in render_text(p)
    assert "mystery_event: kept in the session" in render_html(p)
    assert render_text([]) == "0 turn(s) · 0 events\n"


def test_declared_only_calls_sit_under_their_step() -> None:
    p = project(troubled_session())
    lines = lines_of(p.turns[0], p.findings[0])
    ghost = next(i for i, ln in enumerate(lines) if ln.row is None)
    assert lines[ghost].label == "declared call c5"
    assert lines[ghost].depth == 1
    assert "unexecuted" in lines[ghost].classes
    owner = next(ln for ln in reversed(lines[:ghost]) if ln.depth == 0)
    assert owner.id == "step:/2"


# -- the HTML document, statically ------------------------------------------------------------


def test_html_is_self_contained_and_locked_down() -> None:
    page = render_html(troubled_session(), title="t")
    assert "<link" not in page
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert not re.search(r"https?://", page)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp is not None
    assert "default-src 'none'" in csp.group(1)
    script = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(script) == 1
    assert f"'sha256-{timeline._sha256(script[0])}'" in csp.group(1)


def test_untrusted_text_is_escaped_everywhere() -> None:
    page = render_html(troubled_session(), title="<script>alert(1)</script>")
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    data = re.search(r'<script id="trace-data" type="application/json">(.*?)</script>', page, re.S)
    assert data is not None
    raw = data.group(1)
    assert "<" not in raw
    assert ">" not in raw
    assert "&" not in raw
    decoded = json.loads(raw)
    results = [r["result"] for t in decoded["turns"] for r in t["rows"]]
    assert INJECTION in results
    assert page.count("<script") == 2  # the data block and the page's own script, nothing else


def test_long_arguments_and_results_are_clipped_and_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeline, "CLIP", 10)
    r = Recorder()
    r.step(0, 1, 1, [("c1", "read_file", {"path": "x" * 50})])
    r.call(1, 1, "c1", "read_file", {"path": "x" * 50})
    r.result(2, 1, "c1", "read_file", "y" * 100)
    page = render_html(r.events)
    assert "[clipped: 90 more characters]" in page
    assert "[clipped: 52 more characters]" in page


def test_an_empty_session_says_so() -> None:
    assert "This session recorded no events." in render_html([], "empty")


# -- in a real browser ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def open_page(browser: Browser, path: Path) -> tuple[Page, list[str], list[str]]:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True)
    page = context.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: errors.append(f"dialog: {d.message}"))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, requests, errors


def write(tmp_path: Path, name: str, events: Any, title: str) -> Path:
    path = tmp_path / name
    path.write_text(render_html(events, title), encoding="utf-8")
    return path


@pytest.fixture
def recorded(tmp_path: Path) -> list[EventRecord]:
    """A session recorded by the real app: scripted model, real tools, real session store."""
    workspace = prepare(ROOT / "demo" / "project", tmp_path / "ws")
    home = tmp_path / "home"
    engine = ScriptedEngine(
        {"coding": SCRIPT}, markers={"coding": catalog.builtin("coding", 0).marker}
    )

    async def run() -> list[EventRecord]:
        async with open_app(
            load(home=home, workspace=workspace),
            home=home,
            workspace=workspace,
            yolo=Yolo.YOLO,
            interactive=False,
            engine=engine,
        ) as app:
            session_id, _ = await app.run(TASK, agent_name="coding")
            return app.store.events(session_id)

    # Playwright's sync API keeps an event loop running in this thread: record in another one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, run).result()


@pytest.mark.slow
def test_browser_shows_the_rows_of_a_recorded_session_offline(
    browser: Browser, recorded: list[EventRecord], tmp_path: Path
) -> None:
    path = write(tmp_path, "recorded.html", recorded, TASK)
    page, requests, errors = open_page(browser, path)
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests
    rows = page.locator(".row[data-r]")
    labels = [rows.nth(i).get_attribute("title") for i in range(rows.count())]
    tools = [x for x in labels if x and not x.startswith("step ")]
    assert tools == [
        "list_dir",
        "read_file",
        "read_file",
        "run_bash",
        "search_replace_in_file",
        "run_bash",
        "agent_exit",
    ]
    assert len(labels) == 13  # six model calls and seven tool calls
    assert page.locator(".row.missing, .row.unpaired, .row.failed").count() == 0
    # the parallel batch: both reads start together, their bars overlap
    reads = page.locator('.row[title="read_file"] .bar')
    a, b = reads.nth(0).bounding_box(), reads.nth(1).bounding_box()
    assert a is not None
    assert b is not None
    assert a["x"] < b["x"] + b["width"]
    assert b["x"] < a["x"] + a["width"]
    page.locator('.row[title="run_bash"]').first.click()
    details = page.locator("#details").inner_text()
    assert "pytest" in details
    assert "Arguments" in details
    assert "Result" in details
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "timeline-recorded.png"), full_page=True)
    assert (ARTIFACTS / "timeline-recorded.png").stat().st_size > 10_000
    page.context.close()


@pytest.mark.slow
def test_browser_marks_unpaired_and_failed_calls_and_never_runs_injected_script(
    browser: Browser, tmp_path: Path
) -> None:
    path = write(tmp_path, "troubled.html", troubled_session(), '<img src=x onerror="alert(1)">')
    page, requests, errors = open_page(browser, path)
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests
    assert page.title() == '<img src=x onerror="alert(1)">'
    missing = page.locator(".row.missing")
    unpaired = page.locator(".row.unpaired")
    assert missing.count() == 1
    assert unpaired.count() == 1
    assert page.locator(".row.unexecuted").count() == 1
    assert page.locator(".row.timeout").count() == 1
    assert page.locator(".row.failed").count() == 1
    assert page.locator(".row.duplicate").count() == 1
    assert "missing_result" in missing.inner_text()
    assert "unpaired_result" in unpaired.inner_text()
    assert missing.locator(".bar").is_visible()
    for row in (missing, unpaired, page.locator(".row.unexecuted")):  # the state is not clipped
        label, badge = row.locator(".label").bounding_box(), row.locator(".badge").bounding_box()
        assert label is not None
        assert badge is not None
        assert badge["x"] + badge["width"] <= label["x"] + label["width"]
        assert badge["width"] > 40
    legend = page.locator(".legend").inner_text()
    for word in (
        "no result (missing_result)",
        "result without call (unpaired_result)",
        "timed out",
        "failed",
        "declared, never executed",
    ):
        assert word in legend
    style = page.evaluate(
        "() => getComputedStyle(document.querySelector('.row.missing .bar')).backgroundImage"
    )
    assert "repeating-linear-gradient" in style
    # the tool result that carries markup: shown as text on click, never executed
    injected = page.locator('#turn-0 .row[data-row="call:/c1"]')
    injected.click()
    details = page.locator("#details pre").all_inner_texts()
    assert INJECTION in details
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("#details img, #details script").count() == 0
    injected.hover()
    page.locator('.row[data-row="call:d1/k1"]').hover()  # pinned: hovering elsewhere keeps it
    assert page.locator("#details").get_attribute("data-row") == "call:/c1"
    page.keyboard.press("Enter")  # the focused row toggles its pin
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator('.row[data-row="call:d1/k1"]').click()
    assert "missing_result" in page.locator("#details").inner_text()
    page.screenshot(path=str(ARTIFACTS / "timeline-unpaired.png"), full_page=True)
    assert (ARTIFACTS / "timeline-unpaired.png").stat().st_size > 10_000
    assert html.escape("<script>") not in page.locator("#details").inner_text()
    page.context.close()
