"""Start-up of the interactive prompt, in a real pty: the prompt is drawn and the session quit
without loading a provider SDK, MCP, Playwright, mini-racer or OpenTelemetry — the engine is built
at the first model request (`app.engines.Deferred`). The time it takes is a benchmark
(`bench/bench_interactive_start.py`), never asserted here."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.ptyterm import CTRL_D, Term, configure
from tests.llm.wire import Reply, WireServer, text_frames

_IMPORTED = re.compile(r"import time:\s+\d+ \|\s+\d+ \| *([\w.]+)")
# tree-sitter is not among them: the shell rules' examples are judged when the app opens (the
# cmdpolicy contract: a rule whose example contradicts it is refused at start); it costs ~9 ms.
NOT_BEFORE_A_TASK = {"openai", "anthropic", "mcp", "playwright", "py_mini_racer", "opentelemetry"}


def modules(raw: str) -> set[str]:
    return {m.group(1) for m in _IMPORTED.finditer(raw)}


def loaded(raw: str) -> set[str]:
    return {name.split(".")[0] for name in modules(raw)}


def test_the_prompt_loads_no_provider_sdk_until_the_first_task(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with WireServer([Reply(events=text_frames("hello")) for _ in range(4)]) as server:
        configure(tmp_path / "home", server.url)
        term = Term(tmp_path / "home", ws, env={"PYTHONPROFILEIMPORTTIME": "1"})
        try:
            term.ready()
            before = loaded(term.raw)
            assert "prompt_toolkit" in before  # the import log is read
            assert before & NOT_BEFORE_A_TASK == set()
            term.line("hi")
            term.wait_for("hello")
            term.wait_for("yagent>")
            # the engine is built at the first model request; it speaks its protocol on httpx
            assert "yagent.llm.openai_engine" in modules(term.raw)
            assert "openai" not in loaded(term.raw)
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
