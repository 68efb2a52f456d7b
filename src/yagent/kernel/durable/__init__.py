"""durable: what survives a crash.

The shared SQLite and PostgreSQL files, checkpoints, the commit gate, side effects at most once,
the task board, drain, retry planning, step state machines, the engine/host contract, pending
state, tickets and the clock every expiry reads. This package only groups; import the modules by
their own names, it re-exports nothing. The contract suites of these stores are in
`yagent.kernel.testing`, never in a runtime path.
"""
