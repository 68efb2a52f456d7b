"""budget.meter: the window clamped to the model's real limit, and metering by named segment.

Guarantees:
- `clamp_window` never yields a window above the model's real input limit: a configured window
  above it is clamped and the `Window` says so (`clamped`, `note`); an output reserve is taken off
  the input side and reported; a limit that leaves no input room is refused (`BudgetError`).
- `Meter.measure` counts every named segment separately (system, tool definitions, history, tool
  results, attachments, or any name the host uses), so `Usage.growth` can tell "the tool surface
  grew" from "the history grew": the two need different remedies.
- The default counter is `approx_tokens`: ceil(characters / `CHARS_PER_TOKEN`), 4 by default —
  a documented estimate, not a tokenizer. A pluggable counter that returns anything but a
  non-negative int is refused (`BudgetError`), never trusted.
Refuses: non-positive limits, negative reserves, empty segment names.
Leaves to the host: which messages belong to which segment, the real tokenizer if it has one,
and when a compaction is due (`Usage.due` is a helper, the ratio is the host's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from yagent.kernel.context.budget.errors import BudgetError

CHARS_PER_TOKEN = 4

SYSTEM = "system"
TOOL_DEFINITIONS = "tool_definitions"
HISTORY = "history"
TOOL_RESULTS = "tool_results"
ATTACHMENTS = "attachments"

TokenCounter = Callable[[str], int]


def approx_tokens(text: str) -> int:
    """About one token per `CHARS_PER_TOKEN` characters, rounded up (empty text is 0)."""
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Window:
    """The input window actually available: `limit` tokens, and how it was arrived at."""

    limit: int
    model_limit: int
    configured: int | None
    reserved_output: int
    clamped: bool
    note: str


def clamp_window(
    model_limit: int, configured: int | None = None, *, reserve_output: int = 0
) -> Window:
    """The usable input window: min(configured, model limit) minus the output reserve."""
    if model_limit <= 0:
        raise BudgetError(f"budget: the model limit must be positive, got {model_limit}")
    if configured is not None and configured <= 0:
        raise BudgetError(f"budget: a configured window must be positive, got {configured}")
    if reserve_output < 0:
        raise BudgetError(f"budget: the output reserve cannot be negative, got {reserve_output}")
    notes: list[str] = []
    base = model_limit
    clamped = False
    if configured is not None:
        if configured > model_limit:
            clamped = True
            notes.append(
                f"configured window {configured} is above the model's limit {model_limit}: "
                f"clamped to {model_limit}"
            )
        else:
            base = configured
    limit = base - reserve_output
    if limit <= 0:
        raise BudgetError(
            f"budget: reserving {reserve_output} output tokens leaves no input room in {base}"
        )
    if reserve_output:
        notes.append(f"{reserve_output} tokens reserved for the reply")
    return Window(limit, model_limit, configured, reserve_output, clamped, "; ".join(notes))


@dataclass(frozen=True, slots=True)
class Growth:
    """How one segment changed between two measurements."""

    segment: str
    before: int
    after: int

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens per segment (in the order measured) against one window."""

    segments: tuple[tuple[str, int], ...]
    window: Window

    @property
    def total(self) -> int:
        return sum(tokens for _, tokens in self.segments)

    @property
    def remaining(self) -> int:
        """Tokens left in the window; negative when over."""
        return self.window.limit - self.total

    @property
    def over(self) -> bool:
        return self.total > self.window.limit

    @property
    def fraction(self) -> float:
        return self.total / self.window.limit

    def tokens(self, segment: str) -> int:
        """Tokens of one segment (0 for a segment not measured)."""
        return next((tokens for name, tokens in self.segments if name == segment), 0)

    def due(self, ratio: float) -> bool:
        """True when the total reached `ratio` of the window (the ratio is the host's policy)."""
        if not 0.0 < ratio <= 1.0:
            raise BudgetError(f"budget: a due ratio must be in (0, 1], got {ratio}")
        return self.total >= ratio * self.window.limit

    def growth(self, earlier: Usage) -> tuple[Growth, ...]:
        """Per-segment change since `earlier`, largest growth first (ties by name)."""
        names = dict.fromkeys([n for n, _ in earlier.segments] + [n for n, _ in self.segments])
        changes = [Growth(n, earlier.tokens(n), self.tokens(n)) for n in names]
        return tuple(sorted(changes, key=lambda g: (-g.delta, g.segment)))

    def largest_growth(self, earlier: Usage) -> Growth | None:
        """The segment that grew most since `earlier`, or None when nothing grew: the first of
        `growth(earlier)`, found without ranking the rest (asked at every request)."""
        before, after = _first_counts(earlier.segments), _first_counts(self.segments)
        top: tuple[int, str] | None = None
        for name in dict.fromkeys([*before, *after]):
            key = (before.get(name, 0) - after.get(name, 0), name)  # (-delta, name): growth's order
            if top is None or key < top:
                top = key
        if top is None or top[0] >= 0:
            return None
        name = top[1]
        return Growth(name, before.get(name, 0), after.get(name, 0))


def _first_counts(segments: tuple[tuple[str, int], ...]) -> dict[str, int]:
    """Each segment's tokens as `Usage.tokens` reads them (the first of a repeated name)."""
    return dict(reversed(segments))


class Meter:
    """Counts named segments with one token counter."""

    def __init__(self, counter: TokenCounter = approx_tokens) -> None:
        self._counter = counter

    def count(self, text: str) -> int:
        tokens = self._counter(text)
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise BudgetError(f"budget: the token counter returned {tokens!r}, not a count")
        return tokens

    def measure(self, segments: Mapping[str, str | Iterable[str]], window: Window) -> Usage:
        """Tokens of every segment; a segment is one text or several (summed)."""
        counted: list[tuple[str, int]] = []
        for name, content in segments.items():
            if not name:
                raise BudgetError("budget: a segment needs a name")
            texts = (content,) if isinstance(content, str) else tuple(content)
            counted.append((name, sum(self.count(text) for text in texts)))
        return Usage(tuple(counted), window)
