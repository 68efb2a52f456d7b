"""yagent.kernel: domain-free orchestration mechanisms.

Contract: every module here imports only the standard library, other `yagent.kernel` modules and
the field libraries listed in README's package table. Nothing here knows about coding, repositories
or agent names; `yagent.kernel.archcheck` enforces that on every `make check`.
"""
