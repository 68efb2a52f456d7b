"""judge: may this call run?

The judgement ring (`invoke`) and the stages that plug into it — the failure table, the audit
gate, approval × sandbox, presets, hooks, tool and skill disclosure, guard sets, delegation
topology and contracts, isolation areas, program identifiers. Every judgement here is pure or
fails closed; none runs the call. This package only groups; import the modules by their own
names (`from yagent.kernel.judge import invoke`), it re-exports nothing.
"""
