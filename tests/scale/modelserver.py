"""A scripted OpenAI-compatible model server for batch tests: each task carries its own script.

The task text holds directives, one a line: `@write PATH CONTENT` (a whole-file write),
`@bash COMMAND`, and `@delegate AGENT:TASK || AGENT:TASK …` (one answer with a delegate call per
part, ids `cN_i`; `\\n` in a TASK is a new line, so a child's task carries its own
directives). The server answers request N of a run (N = the assistant messages already in it)
with the run's N-th directive as a tool call (call id `cN`), and after the last one with the
exit call. It keeps no state between requests — any run, resumed or not, on any worker, gets the
step its history says is next. `delay` seconds pass before each answer (an I/O-bound model).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import Received, Reply, WireServer
from yagent.llm.scripted import call, calls

_DIRECTIVE = re.compile(r"^@(write|bash|delegate) (.+)$", re.MULTILINE)


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


class ModelServer(WireServer):
    def __init__(self, delay: float = 0.0) -> None:
        super().__init__([])
        self.delay = delay
        self.requests = 0

    def next_reply(self, received: Received) -> Reply:
        with self._lock:
            self.requests += 1
        if self.delay:
            time.sleep(self.delay)
        messages = received.body.get("messages", []) if isinstance(received.body, dict) else []
        script: list[tuple[str, str]] = []
        for message in messages:
            if message.get("role") == "user":
                script = _DIRECTIVE.findall(_content(message))
                if script:
                    break
        step = sum(1 for m in messages if m.get("role") == "assistant")
        if step < len(script):
            kind, rest = script[step]
            if kind == "delegate":
                parts = [p.strip().partition(":") for p in rest.split("||")]
                items = [
                    (
                        "delegate",
                        json.dumps({"agent": a, "task": t.replace("\\n", "\n")}),
                        f"c{step}_{i}",
                    )
                    for i, (a, _, t) in enumerate(parts)
                ]
                return openai_reply(calls(items))
            if kind == "write":
                path, _, content = rest.partition(" ")
                args = {"path": path, "content": content + "\n"}
                return openai_reply(call("write_file", json.dumps(args), call_id=f"c{step}"))
            args = {"command": rest, "timeout": 600}
            return openai_reply(call("run_bash", json.dumps(args), call_id=f"c{step}"))
        done = {"reason": "done", "summary": f"did {len(script)} step(s)"}
        return openai_reply(call("agent_exit", json.dumps(done), call_id=f"c{step}"))


def home_config(url: str, extra: str = "") -> str:
    """A yagent home's config.toml for runs against `url` (unattended, commands on the host)."""
    return (
        f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{url}/v1"\n'
        f'step_retries = 0\n[agent]\npreset = "yolo"\neffect_lease = 1\n{extra}'
    )
