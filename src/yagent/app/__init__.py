"""yagent.app: assembly — the only place that wires everything — configuration and settings."""
