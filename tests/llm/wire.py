"""Local HTTP servers that speak the providers' wire protocols, for the engine tests.

A `WireServer` listens on 127.0.0.1 (an ephemeral port), answers each request with the next scripted
`Reply` (a stream of SSE events, an error status, a hang or a dropped connection) and records every
request it received (path, headers, JSON body) so tests can inspect exactly what the SDK sent.
Everything is bounded: a hanging reply waits at most `HANG_LIMIT` seconds or until the server stops.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG_LIMIT = 10.0


@dataclass
class Reply:
    status: int = 200
    events: Sequence[str] = ()  # SSE frames, already formatted
    body: Any = None  # JSON body for a non-streaming (error) reply
    raw: str | None = None  # a non-JSON body (sent as text/plain unless `headers` say otherwise)
    headers: Mapping[str, str] = field(default_factory=dict)
    hang_after: int | None = None  # send this many events, then hang
    drop_after: int | None = None  # send this many events, then break the connection
    end_after: int | None = None  # send this many events, then end the body cleanly
    keep_alive: bool = False  # leave the connection open for the client's next request


@dataclass(frozen=True)
class Received:
    path: str
    headers: Mapping[str, str]
    body: Any
    peer: tuple[str, int] = ("", 0)  # the client's address and port: which connection it used


class WireServer:
    def __init__(self, replies: Sequence[Reply]) -> None:
        self.replies = list(replies)
        self.received: list[Received] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def next_reply(self, received: Received) -> Reply:
        with self._lock:
            self.received.append(received)
            if not self.replies:
                return Reply(500, body={"error": {"message": "test server: no reply scripted"}})
            return self.replies.pop(0)

    def __enter__(self) -> WireServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=HANG_LIMIT)


def _handler_for(server: WireServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            peer = self.client_address[:2]
            reply = server.next_reply(Received(self.path, headers, body, peer))
            if reply.events or reply.hang_after is not None:
                self._stream(reply)
            else:
                self._plain(reply)

        def _plain(self, reply: Reply) -> None:
            data = json.dumps(reply.body).encode() if reply.raw is None else reply.raw.encode()
            self.send_response(reply.status)
            if "content-type" not in {key.lower() for key in reply.headers}:
                plain = reply.raw is not None
                self.send_header("content-type", "text/plain" if plain else "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("connection", "close")
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, reply: Reply) -> None:
            if reply.hang_after == 0:  # hang before the status line
                server.release.wait(HANG_LIMIT)
                return
            self.send_response(reply.status)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            if not reply.keep_alive:
                self.send_header("connection", "close")
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            for i, frame in enumerate(reply.events):
                if reply.hang_after == i:
                    server.release.wait(HANG_LIMIT)
                    return
                if reply.drop_after == i:
                    self._drop()
                    return
                if reply.end_after == i:
                    break
                data = frame.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            if reply.hang_after is not None:
                server.release.wait(HANG_LIMIT)
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _drop(self) -> None:
            # An abrupt close in the middle of a chunked body: the client sees a broken stream.
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)

    return Handler


def refused_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# --- OpenAI chat-completions frames -------------------------------------------------------------


def openai_frames(chunks: Sequence[Mapping[str, Any]], *, done: bool = True) -> list[str]:
    frames = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    if done:
        frames.append("data: [DONE]\n\n")
    return frames


def oa_chunk(
    delta: Mapping[str, Any] | None = None,
    *,
    finish: str | None = None,
    usage: Mapping[str, Any] | None = None,
    model: str = "m",
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": dict(delta), "finish_reason": finish}]
    chunk: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": choices,
    }
    if usage is not None:
        chunk["usage"] = dict(usage)
    return chunk


def usage_chunk(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return oa_chunk(None, usage=usage)


def text_frames(text: str, *, size: int = 3) -> list[str]:
    chunks = [oa_chunk({"role": "assistant", "content": ""})]
    chunks += [oa_chunk({"content": part}) for part in pieces(text, size)]
    chunks += [oa_chunk({}, finish="stop"), usage_chunk(12, 4, cached=5)]
    return openai_frames(chunks)


# --- Anthropic messages frames -------------------------------------------------------------------


def anthropic_frames(events: Sequence[Mapping[str, Any]]) -> list[str]:
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]


def an_start(usage: Mapping[str, Any] | None = None, model: str = "claude-test") -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": dict(usage or {"input_tokens": 1, "output_tokens": 1}),
        },
    }


def an_block(index: int, block: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": dict(block)}


def an_delta(index: int, delta: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": dict(delta)}


def an_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def an_end(stop_reason: str, usage: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": dict(usage),
        },
        {"type": "message_stop"},
    ]


def pieces(text: str, size: int) -> Iterator[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


def submitted_frames(text: str, summary: str = "ok") -> list[str]:
    """A reply streaming `text` and submitting the work (`agent_exit`) in the same turn."""
    call = {
        "index": 0,
        "id": "exit-1",
        "type": "function",
        "function": {
            "name": "agent_exit",
            "arguments": json.dumps({"reason": "done", "summary": summary}),
        },
    }
    chunks = [oa_chunk({"role": "assistant", "content": ""})]
    chunks += [oa_chunk({"content": part}) for part in pieces(text, 3)]
    chunks += [oa_chunk({"tool_calls": [call]}), oa_chunk({}, finish="tool_calls")]
    chunks.append(usage_chunk(12, 4, cached=5))
    return openai_frames(chunks)
