"""ptc prelude: the JavaScript installed in every isolate before a program runs.

It gives the program `host` (one async function per bound identifier, object or positional
form), a capturing `console`, and gives the driver `__ptc` (start / drain / deliver), frozen and
non-configurable. Host calls only queue a request and return a promise; nothing leaves the
isolate until the driver drains the queue. Timers, `Atomics.waitAsync`, `FinalizationRegistry`
and `WebAssembly` are removed: each can schedule JavaScript outside the driver's steps, where no
deadline could stop it. The program is compiled with the AsyncFunction constructor from a string,
so its text can never break out of the function it becomes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

# Lines the AsyncFunction constructor puts before the body ("async function anonymous(host,
# console\n) {\n"): subtracted so an error's line number is the program's own.
BODY_OFFSET = 2

_TEMPLATE = r"""
(() => {
  "use strict";
  const IDENTS = __IDENTS__;
  const LOG_CAP = __LOG_CAP__;
  const RESULT_CAP = __RESULT_CAP__;
  const BODY_OFFSET = __BODY_OFFSET__;
  const outbox = [];
  const pending = new Map();
  const logs = [];
  let logChars = 0;
  let logsDropped = 0;
  let seq = 0;
  const state = { done: false, ok: false, value: "null", size: 4, error: "", kind: null };

  class HostError extends Error {
    constructor(a) {
      super(a.error);
      this.name = "HostError";
      this.tool = a.tool;
      this.kind = a.kind;
      this.retryable = a.retryable;
      this.stage = a.stage;
      this.denied = a.denied;
    }
  }

  const show = (x) => {
    if (typeof x === "string") return x;
    try {
      const s = JSON.stringify(x);
      return s === undefined ? String(x) : s;
    } catch (e) {
      return String(x);
    }
  };
  const logger = (prefix) => (...a) => {
    const line = prefix + a.map(show).join(" ");
    if (logChars + line.length > LOG_CAP) {
      logsDropped++;
      return;
    }
    logChars += line.length;
    logs.push(line);
  };
  const console = Object.freeze({
    log: logger(""), info: logger(""), debug: logger(""),
    warn: logger("warn: "), error: logger("error: "),
  });

  const host = Object.create(null);
  for (const ident of IDENTS) {
    const fn = (...a) => {
      const object = a.length === 1 && a[0] !== null && typeof a[0] === "object"
        && !Array.isArray(a[0]);
      let args;
      try {
        args = JSON.stringify(object ? a[0] : a);
      } catch (e) {
        return Promise.reject(
          new TypeError(`host.${ident}: arguments are not JSON-serialisable (${e.message})`));
      }
      const id = ++seq;
      outbox.push({ id, ident, form: object ? "object" : "positional", args });
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    };
    Object.defineProperty(host, ident, { value: fn, enumerable: true });
  }
  Object.freeze(host);

  const describe = (e) => {
    if (e instanceof HostError) return `${e.name} (${e.kind}) from host.${e.tool}: ${e.message}`;
    if (e instanceof Error) {
      const m = /eval at [^)]*\), <anonymous>:(\d+):(\d+)/.exec(String(e.stack || ""));
      const at = m ? ` (line ${Number(m[1]) - BODY_OFFSET})` : "";
      return `${e.name}: ${e.message}${at}`;
    }
    return "uncaught value: " + show(e);
  };
  const fail = (e) => {
    state.done = true;
    state.ok = false;
    state.error = describe(e);
    state.kind = (e instanceof HostError && typeof e.kind === "string") ? e.kind : "runtime";
  };
  const finish = (v) => {
    let s;
    try {
      s = JSON.stringify(v === undefined ? null : v);
    } catch (e) {
      fail(new TypeError("the program's result is not JSON-serialisable: " + e.message));
      return;
    }
    if (s === undefined) s = "null";
    state.size = s.length;
    state.value = s.length > RESULT_CAP ? s.slice(0, RESULT_CAP) : s;
    state.ok = true;
    state.done = true;
  };
  const AsyncFunction = (async function () {}).constructor;

  const ptc = {
    start(source) {
      let fn;
      try {
        fn = new AsyncFunction("host", "console", source);
      } catch (e) {
        fail(e);
        state.kind = "invalid_args"; // it never ran: the program text itself is wrong
        return;
      }
      fn(host, console).then(finish, fail);
    },
    drain() {
      const calls = outbox.splice(0);
      const lines = logs.splice(0);
      const dropped = logsDropped;
      logsDropped = 0;
      return JSON.stringify({
        calls, logs: lines, dropped, done: state.done, ok: state.ok, value: state.value,
        size: state.size, error: state.error, kind: state.kind, pending: pending.size,
      });
    },
    deliver(text) {
      for (const a of JSON.parse(text)) {
        const p = pending.get(a.id);
        if (p === undefined) continue;
        pending.delete(a.id);
        if (a.ok) p.resolve(a.value);
        else p.reject(new HostError(a));
      }
    },
  };
  Object.defineProperty(globalThis, "__ptc", { value: Object.freeze(ptc) });

  const noTimers = () => { throw new Error("timers are not available in programs"); };
  globalThis.setTimeout = noTimers;
  globalThis.clearTimeout = noTimers;
  globalThis.setInterval = noTimers;
  delete globalThis.WebAssembly;
  delete globalThis.FinalizationRegistry;
  delete Atomics.waitAsync;
})();
"""


def prelude(idents: Sequence[str], *, log_cap: int, result_cap: int) -> str:
    """The prelude for these identifiers and caps."""
    return (
        _TEMPLATE.replace("__IDENTS__", json.dumps(list(idents)))
        .replace("__LOG_CAP__", str(int(log_cap)))
        .replace("__RESULT_CAP__", str(int(result_cap)))
        .replace("__BODY_OFFSET__", str(BODY_OFFSET))
    )


def start(program: str) -> str:
    """The driver step that compiles and starts `program` (its text as a string literal)."""
    return f"__ptc.start({json.dumps(program)})"


def deliver(answers: object) -> str:
    """The driver step that settles the program's pending promises with `answers`."""
    return f"__ptc.deliver({json.dumps(json.dumps(answers, ensure_ascii=False))})"


DRAIN = "__ptc.drain()"
