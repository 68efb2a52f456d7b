"""A verifying TLS client context whose CA bundle loads at its first handshake.

httpx builds a client's verifying context when the client is created — loading a CA bundle,
≈ 15–20 ms CPU — even for a client that only ever speaks plain `http://` (a local Ollama, vLLM or
llama.cpp server, a loopback test server). `deferred()` is that context without the up-front
load, for such clients.

Guarantees:
- The same verification as httpx's default (`httpx.create_ssl_context(verify=True)`):
  `PROTOCOL_TLS_CLIENT` (the certificate is required, the host name checked), the CA bundle named
  by `SSL_CERT_FILE`, else the directory `SSL_CERT_DIR`, else certifi's; `SSLKEYLOGFILE` honoured
  as the standard library's default context honours it.
- The bundle is loaded, once (under a lock: anyio may call from a worker thread), before the
  context takes part in any handshake: every TLS connection httpx's transports open goes through
  `wrap_bio` (anyio) or `wrap_socket` (the synchronous client), and both load it first. A context
  that never sees a handshake never loads it — a redirect to `https://` does see one and is
  verified as any other.
Left to the caller: choosing it only where TLS is unlikely (an `http://` base URL); for an
`https://` provider the first request needs the bundle anyway, so httpx's own context is kept.
"""

from __future__ import annotations

import os
import ssl
import sys
import threading
from typing import Any


class DeferredContext(ssl.SSLContext):
    """`PROTOCOL_TLS_CLIENT` with the CA bundle loaded at the first `wrap_bio`/`wrap_socket`."""

    _lock = threading.Lock()
    _loaded = False

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            if file := os.environ.get("SSL_CERT_FILE"):
                self.load_verify_locations(cafile=file)
            elif directory := os.environ.get("SSL_CERT_DIR"):
                self.load_verify_locations(capath=directory)
            else:
                import certifi  # httpx's own choice when the environment names no bundle

                self.load_verify_locations(cafile=certifi.where())
            self._loaded = True

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self._load()
        return super().wrap_bio(*args, **kwargs)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self._load()
        return super().wrap_socket(*args, **kwargs)


def deferred() -> DeferredContext:
    """A new verifying client context, its CA bundle not loaded yet (see the module docstring)."""
    context = DeferredContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, check_hostname
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog and not sys.flags.ignore_environment:
        context.keylog_filename = keylog
    return context


def for_url(url: str) -> ssl.SSLContext | bool:
    """What to pass as httpx's `verify` for a client whose requests go to `url`: a deferred
    context for `http://`, httpx's default (`True`) for anything else."""
    return deferred() if url[:7].lower() == "http://" else True
