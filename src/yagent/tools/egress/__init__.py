"""The egress proxy a sandboxed command reaches the network through, in one package.

- `proxyserver`: the proxy on the host (allow-list × netguard, judged per request), routing a
  command through it, and the per-command watch (`EgressProxy`, `route`, `watch`).
- `sandboxbridge`: the in-sandbox bridge from 127.0.0.1 to the proxy's socket (standard library
  only: it runs as `python -I -m yagent.tools.egress.sandboxbridge` inside the sandbox).
- `wire`: reading a request head and answering a refusal on the wire.
- `allowlist`: the `[sandbox] allow_hosts` grammar.
- `attribution`: what the proxy decided, filed per command (tags, ledger, reports).
This file imports nothing: the bridge must start without loading the proxy.
"""
