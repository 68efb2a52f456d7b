"""ptc: programmatic tool calling — the model writes a JavaScript program, a V8 isolate
(mini-racer) runs it, and its `host.*()` calls pass the same judgement ring as ordinary calls.
N ReAct round trips collapse into one; raw data stays in the program, only a small merged result
returns.

Contract (details in each module):
- `bindings`: tools bound as `host.<ident>` with `toolname.normalize`; object form
  (`host.t({a})`) and positional form following the `tooldisclose` call form (optionals marked
  `?`, omitted ones absent from the JSON); two tools that normalise to one identifier are refused
  at assembly (`BindingCollisionError`, naming both).
- `dispatch`: every host call goes through an `invoke.Chain` (`ChainDispatcher`, or a host
  dispatcher that returns the chain's judgement as evidence). Bindings without a chain are refused
  (`UnmanagedError`, kind `unmanaged`) unless the caller sets `allow_unmanaged` (a true literal
  is forbidden outside tests by the archcheck policy). Denials reach the program as rejected
  promises (`HostError`) carrying reason, kind, stage and `denied`, so a program — and its
  caller — can tell "the guard said no" from "the guard crashed" from "transient".
- `budget`: wall clock (the earlier of the budget and the caller's anyio deadline), host calls,
  bytes returned to the program, V8's hard heap limit. Crossing one raises `AbortedError`
  (kind `budget`, `cause` naming it); an infinite loop and a memory bomb are both stopped.
- `result`: the final value (JSON) capped with visible truncation, console output captured and
  capped, one record per host call.
- `runner.run`: the in-process form. `subproc.run_subprocess`: the same protocol with the isolate
  in a worker process — cgroup v2 `memory.max` where available, a declared `Capability`, required
  capabilities enforced (fail closed), an optional launcher (sandbox provider), an egress check
  before spawning, a kill at the deadline, redacted stderr, classified abnormal ends.
Leaves to the host: which tools are bound, the chain's stages, the executors, and how results are
shown to the model (`Result.render()` is the default text).

The package imports nothing: each name is imported from the module that defines it, so a host
that only describes its bindings (`bindings`) does not load the runner, the worker process form,
cgroups or the sandbox registry.
"""
