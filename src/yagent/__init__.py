"""yagent: a multi-agent coding agent for the terminal, on the domain-free `yagent.kernel`."""

__version__ = "0.1.0"
