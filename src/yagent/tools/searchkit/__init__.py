"""searchkit: the two engines behind the `search` tool (ripgrep and its pure-Python fallback)
and the one result shape they share. The executor itself is `yagent.tools.search`."""
