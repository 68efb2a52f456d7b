"""Token prices and the usage/cost ledger.

Contract:
- A `PriceTable` maps a model name to a `Price` in USD per million tokens (input, output, cache
  read, cache write). A key is an exact model name, or a prefix when it ends in `*` (the longest
  matching prefix wins; an exact name beats every prefix). Matching ignores case.
- `cost(model, usage)` is `None` for a model the table does not know: the ledger never invents a
  price. A price without cache rates charges cache tokens at the input rate, and says so by its
  fields (`cache_read`/`cache_write` stay `None`).
- `Usage.input_tokens` is the *uncached* input (the engines normalise to that), so the four counts
  are charged once each, at their own rate.
- `DEFAULT_PRICES` holds public list prices as of `PRICES_AS_OF` for a few well-known models, keyed
  narrowly so that an unknown newer model is unpriced rather than priced like its predecessor.
  Hosts extend or override it from configuration (`PriceTable.from_config`).
- `Ledger` accounts usage and cost per step, per agent, per model and per session; it is
  thread-safe and `snapshot()` returns frozen values. A session total over a step whose model is
  unpriced is `cost=None` (with `priced_cost` and `unpriced_steps` beside it) — a partial sum is
  never passed off as the total. A step with no usage reported at all is counted in
  `unreported_steps` (a real request always has input tokens).
- A table is immutable: it resolves a model name against its keys once and remembers the answer
  (`RESOLVED_LIMIT` names; a name beyond them is resolved each time). A ledger step costs the same
  whether its model is an exact key, a prefix's or unpriced (issue 17: an unpriced name walked
  every prefix at every step).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from yagent.llm.types import AssistantTurn, Usage

RESOLVED_LIMIT = 256  # model names a table remembers the price of (a host uses a handful)

PRICES_AS_OF = "2025-10"
_MILLION = 1_000_000


class PricingError(ValueError):
    """A price or a price-table configuration is invalid."""


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cache_read", "cache_write"):
            value = getattr(self, name)
            if value is None and name.startswith("cache"):
                continue
            if (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not math.isfinite(value)
                or value < 0
            ):
                raise PricingError(f"price {name} must be a finite number >= 0, got {value!r}")

    def cost(self, usage: Usage) -> float:
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * read
            + usage.cache_write_tokens * write
        )
        return total / _MILLION


_PRICE_FIELDS = frozenset({"input", "output", "cache_read", "cache_write"})


class PriceTable:
    """Model name or `prefix*` → `Price`."""

    def __init__(self, entries: Mapping[str, Price]) -> None:
        exact: dict[str, Price] = {}
        prefixes: dict[str, Price] = {}
        for key, price in entries.items():
            if not isinstance(price, Price):
                raise PricingError(f"price table entry {key!r} is not a Price")
            name = key.strip().lower()
            if not name or name == "*":
                raise PricingError(f"price table key {key!r} names no model")
            if name.endswith("*"):
                prefixes[name[:-1]] = price
            else:
                exact[name] = price
        self._entries = MappingProxyType(dict(entries))
        self._exact = exact
        self._prefixes = sorted(prefixes.items(), key=lambda kv: len(kv[0]), reverse=True)
        self._resolved: dict[str, Price | None] = {}  # model name as asked -> its price

    @property
    def entries(self) -> Mapping[str, Price]:
        return self._entries

    def lookup(self, model: str) -> Price | None:
        try:
            return self._resolved[model]
        except KeyError:
            price = self._resolve(model)
        if len(self._resolved) < RESOLVED_LIMIT:
            self._resolved[model] = price
        return price

    def _resolve(self, model: str) -> Price | None:
        name = model.strip().lower()
        if name in self._exact:
            return self._exact[name]
        for prefix, price in self._prefixes:
            if name.startswith(prefix):
                return price
        return None

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.lookup(model)
        return None if price is None else price.cost(usage)

    def with_entries(self, entries: Mapping[str, Price]) -> PriceTable:
        """A new table: these entries added to (or replacing) this table's."""
        return PriceTable({**self._entries, **entries})

    @classmethod
    def from_config(
        cls, data: Mapping[str, Mapping[str, object]], *, base: PriceTable | None = None
    ) -> PriceTable:
        """From `{model: {"input": …, "output": …, "cache_read": …, "cache_write": …}}` (e.g. a
        TOML `[llm.prices]` table); unknown fields or missing input/output are refused."""
        entries: dict[str, Price] = {}
        for key, spec in data.items():
            if not isinstance(spec, Mapping):
                raise PricingError(f"price for {key!r} must be a table of rates")
            unknown = set(spec) - _PRICE_FIELDS
            if unknown:
                raise PricingError(f"price for {key!r} has unknown fields {sorted(unknown)}")
            missing = {"input", "output"} - set(spec)
            if missing:
                raise PricingError(f"price for {key!r} lacks {sorted(missing)}")
            entries[key] = Price(**spec)  # type: ignore[arg-type]  # validated in Price
        return (base or PriceTable({})).with_entries(entries)


def _p(inp: float, out: float, read: float, write: float | None = None) -> Price:
    return Price(inp, out, read, write)


DEFAULT_PRICES = PriceTable(
    {
        # Anthropic (cache write = 5-minute ephemeral rate)
        "claude-opus-4-5*": _p(5.0, 25.0, 0.50, 6.25),
        "claude-opus-4-1*": _p(15.0, 75.0, 1.50, 18.75),
        "claude-opus-4-0": _p(15.0, 75.0, 1.50, 18.75),
        "claude-opus-4-2025*": _p(15.0, 75.0, 1.50, 18.75),
        "claude-sonnet-4-5*": _p(3.0, 15.0, 0.30, 3.75),
        "claude-sonnet-4-0": _p(3.0, 15.0, 0.30, 3.75),
        "claude-sonnet-4-2025*": _p(3.0, 15.0, 0.30, 3.75),
        "claude-3-7-sonnet*": _p(3.0, 15.0, 0.30, 3.75),
        "claude-haiku-4-5*": _p(1.0, 5.0, 0.10, 1.25),
        "claude-3-5-haiku*": _p(0.80, 4.0, 0.08, 1.0),
        # OpenAI (cached input is read at the cache_read rate; there is no write charge)
        "gpt-4o": _p(2.50, 10.0, 1.25, 0.0),
        "gpt-4o-2024-08-06": _p(2.50, 10.0, 1.25, 0.0),
        "gpt-4o-2024-11-20": _p(2.50, 10.0, 1.25, 0.0),
        "gpt-4o-mini*": _p(0.15, 0.60, 0.075, 0.0),
        "gpt-4.1": _p(2.0, 8.0, 0.50, 0.0),
        "gpt-4.1-2025*": _p(2.0, 8.0, 0.50, 0.0),
        "gpt-4.1-mini*": _p(0.40, 1.60, 0.10, 0.0),
        "gpt-4.1-nano*": _p(0.10, 0.40, 0.025, 0.0),
        "o3": _p(2.0, 8.0, 0.50, 0.0),
        "o3-2025*": _p(2.0, 8.0, 0.50, 0.0),
        "o4-mini*": _p(1.10, 4.40, 0.275, 0.0),
        "gpt-5": _p(1.25, 10.0, 0.125, 0.0),
        "gpt-5-2025*": _p(1.25, 10.0, 0.125, 0.0),
        "gpt-5-mini*": _p(0.25, 2.0, 0.025, 0.0),
        "gpt-5-nano*": _p(0.05, 0.40, 0.005, 0.0),
    }
)


def cost(model: str, usage: Usage, table: PriceTable = DEFAULT_PRICES) -> float | None:
    """USD for `usage` on `model`, or None when the table does not price the model."""
    return table.cost(model, usage)


@dataclass(frozen=True, slots=True)
class StepCost:
    agent: str
    step: int
    model: str
    usage: Usage
    cost: float | None  # None: the model is not in the price table


@dataclass(frozen=True, slots=True)
class Totals:
    usage: Usage
    cost: float | None  # None when any step is unpriced
    priced_cost: float  # the sum over the priced steps
    steps: int
    unpriced_steps: int
    unreported_steps: int  # steps whose engine reported no usage at all


class _Acc:
    """One total being summed: plain counts, a `Usage` only when asked (`totals`)."""

    __slots__ = (
        "cache_read",
        "cache_write",
        "input",
        "output",
        "priced_cost",
        "steps",
        "unpriced",
        "unreported",
    )

    def __init__(self) -> None:
        self.input = self.output = self.cache_read = self.cache_write = 0
        self.priced_cost = 0.0
        self.steps = self.unpriced = self.unreported = 0

    def add(self, usage: Usage, price: float | None) -> None:
        self.input += usage.input_tokens
        self.output += usage.output_tokens
        self.cache_read += usage.cache_read_tokens
        self.cache_write += usage.cache_write_tokens
        self.steps += 1
        if price is None:
            self.unpriced += 1
        else:
            self.priced_cost += price
        if not (
            usage.input_tokens
            or usage.output_tokens
            or usage.cache_read_tokens
            or usage.cache_write_tokens
        ):
            self.unreported += 1

    def totals(self) -> Totals:
        total = None if self.unpriced else self.priced_cost
        usage = Usage(self.input, self.output, self.cache_read, self.cache_write)
        return Totals(usage, total, self.priced_cost, self.steps, self.unpriced, self.unreported)


@dataclass(frozen=True, slots=True)
class LedgerSnapshot:
    session: Totals
    by_agent: Mapping[str, Totals]
    by_model: Mapping[str, Totals]
    steps: tuple[StepCost, ...]


class Ledger:
    """Usage and cost per step, per agent, per model and per session (thread-safe)."""

    def __init__(self, prices: PriceTable = DEFAULT_PRICES) -> None:
        self._prices = prices
        self._lock = threading.Lock()
        self._steps: list[StepCost] = []
        self._session = _Acc()
        self._agents: dict[str, _Acc] = {}
        self._models: dict[str, _Acc] = {}

    def record(self, turn: AssistantTurn, *, agent: str = "", step: int | None = None) -> StepCost:
        """Account one model call; `step` defaults to the agent's next step number (1-based)."""
        return self.record_usage(turn.model, turn.usage, agent=agent, step=step)

    def record_usage(
        self, model: str, usage: Usage, *, agent: str = "", step: int | None = None
    ) -> StepCost:
        price = self._prices.cost(model, usage)
        with self._lock:
            acc = self._agents.get(agent)
            if acc is None:
                acc = self._agents[agent] = _Acc()
            item = StepCost(agent, acc.steps + 1 if step is None else step, model, usage, price)
            self._steps.append(item)
            by_model = self._models.get(model)
            if by_model is None:
                by_model = self._models[model] = _Acc()
            for target in (self._session, acc, by_model):
                target.add(usage, price)
        return item

    def snapshot(self) -> LedgerSnapshot:
        with self._lock:
            return LedgerSnapshot(
                self._session.totals(),
                MappingProxyType({k: v.totals() for k, v in self._agents.items()}),
                MappingProxyType({k: v.totals() for k, v in self._models.items()}),
                tuple(self._steps),
            )
