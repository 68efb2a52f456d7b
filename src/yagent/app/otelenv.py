"""What the standard `OTEL_*` variables ask of telemetry, read without the OpenTelemetry SDK.

Contract: `wants_export(env)` says whether the variables ask for trace export (the SDK is loaded
only then, by `telemetry.exporter_from_env`); `otel_choice` is the one way a variable is read
(trimmed, lower-case, "" when unset); `TelemetryUnavailableError` is raised when export is asked
for but cannot be done as asked (the extra is missing, or a protocol it does not ship).
"""

from __future__ import annotations

from collections.abc import Mapping


class TelemetryUnavailableError(RuntimeError):
    """Export was asked for but cannot be done as asked (extra missing, unsupported protocol)."""


def otel_choice(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip().lower()


def wants_export(env: Mapping[str, str]) -> bool:
    """Whether the standard `OTEL_*` variables ask for trace export."""
    if otel_choice(env, "OTEL_SDK_DISABLED") == "true":
        return False
    traces = otel_choice(env, "OTEL_TRACES_EXPORTER")
    if traces == "none":
        return False
    endpoint = any(
        env.get(name, "").strip()
        for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )
    return endpoint or traces in ("otlp", "console")
