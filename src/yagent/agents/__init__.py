"""yagent.agents: the shared LLM–tool loop and the sub-agents.

`loop.run_agent_loop` is the one loop; `toolbatch` schedules a step's calls; `exitpolicy` decides
termination and the deliverable; `activity` watches idle/total time; `pause` is the step-boundary
gate; `catalog` defines the agents; `context` assembles their system context.
"""
