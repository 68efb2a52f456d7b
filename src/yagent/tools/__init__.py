"""yagent.tools: the tool execution layer.

The Surface, Adapter.call, the workspace guard, the authorization loop, and the executors (files,
shell, search, code graph, flow control, skills, external MCP tools, command hooks).
"""
