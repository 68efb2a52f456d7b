"""trace: what happened.

The trajectory projection and its OTel contract, the passive tool-call watchdog and the
in-process event bus. This package only groups; import the modules by their own names, it
re-exports nothing.
"""
