"""context: what the model sees.

Input budget and compaction, output spill, offloading large inline objects, streamed deltas,
memory injection, references to other sessions, the anti-forgery reminder band and the agent
report protocol. This package only groups; import the modules by their own names, it re-exports
nothing.
"""
