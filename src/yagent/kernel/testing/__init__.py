"""testing: the contract suites other hosts run against their own stores.

`sidetest` (side-effect stores), `boardtest` (task boards), `checkpointsuite` (checkpoint
stores), `commitgatesuite` (commit gates) and `contractsuite`, the runner they share. Imported by
tests, not by the runtime. This package only groups; import the modules by their own names, it
re-exports nothing.
"""
