"""yagent.messaging: the event dispatcher between the agents and whoever shows them (UI, CI).

Two queues with opposite loss rules: ordinary events drop the *newest* when the queue is full (a
slow display loses progress noise, never blocks an agent); the critical types — the authorization
loop's `user_help_needed` / `user_help_response` — travel on a FIFO side queue that drops the
*oldest* when full and is always read first. Every drop is counted (per type, for the display to
say what it did not show) and logged. A lossless consumer (`--json`) is handed every event at
`send`, in publish order, by `Dispatcher.write_through` instead of reading a queue.
"""

from yagent.messaging.dispatcher import (
    CRITICAL_TYPES,
    LINGER,
    USER_HELP_NEEDED,
    USER_HELP_RESPONSE,
    Dispatcher,
    DispatcherClosedError,
    Event,
)

__all__ = [
    "CRITICAL_TYPES",
    "LINGER",
    "USER_HELP_NEEDED",
    "USER_HELP_RESPONSE",
    "Dispatcher",
    "DispatcherClosedError",
    "Event",
]
