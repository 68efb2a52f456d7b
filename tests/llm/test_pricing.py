"""Price table and ledger."""

from __future__ import annotations

import sys
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.llm.pricing import (
    DEFAULT_PRICES,
    Ledger,
    Price,
    PriceTable,
    PricingError,
    cost,
)
from yagent.llm.types import AssistantTurn, Usage


def test_cost_charges_each_count_at_its_own_rate_per_million() -> None:
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = Usage(1_000_000, 100_000, 2_000_000, 400_000)
    assert price.cost(usage) == pytest.approx(3.0 + 1.5 + 0.6 + 1.5)


def test_missing_cache_rates_charge_the_input_rate() -> None:
    price = Price(2.0, 8.0)
    assert price.cost(Usage(0, 0, 500_000, 500_000)) == pytest.approx(2.0)


def test_unknown_models_have_no_price_never_a_made_up_one() -> None:
    assert cost("my-local-llama", Usage(1000, 1000)) is None
    assert DEFAULT_PRICES.lookup("claude-opus-4-9") is None  # a newer model is not guessed
    assert cost("gpt-4o-mini-2024-07-18", Usage(1_000_000, 0)) == pytest.approx(0.15)


def test_exact_names_beat_prefixes_and_the_longest_prefix_wins() -> None:
    table = PriceTable(
        {
            "m*": Price(1.0, 1.0),
            "m-large*": Price(5.0, 5.0),
            "m-large-v2": Price(9.0, 9.0),
        }
    )
    assert table.lookup("m-small") == Price(1.0, 1.0)
    assert table.lookup("m-large-2025") == Price(5.0, 5.0)
    assert table.lookup("M-Large-V2") == Price(9.0, 9.0)
    assert table.lookup("x") is None
    assert table.cost("x", Usage(1, 1)) is None


def test_config_extends_and_overrides_the_base_table() -> None:
    table = PriceTable.from_config(
        {
            "llama3*": {"input": 0, "output": 0},
            "gpt-4o": {"input": 1.0, "output": 2.0, "cache_read": 0.5, "cache_write": 0.0},
        },
        base=DEFAULT_PRICES,
    )
    assert table.cost("llama3:8b", Usage(10**6, 10**6)) == 0.0
    assert table.lookup("gpt-4o") == Price(1.0, 2.0, 0.5, 0.0)
    assert table.lookup("claude-sonnet-4-5-20250929") == DEFAULT_PRICES.lookup("claude-sonnet-4-5")
    assert "gpt-4o" in table.entries
    assert (
        PriceTable.from_config({"a": {"input": 1, "output": 1}}).lookup("claude-3-5-haiku") is None
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"input": 1}, "lacks"),
        ({"input": 1, "output": 1, "cache": 1}, "unknown fields"),
        ({"input": -1, "output": 1}, ">= 0"),
        ({"input": float("nan"), "output": 1}, ">= 0"),
        ({"input": "1", "output": 1}, ">= 0"),
        ({"input": True, "output": 1}, ">= 0"),
        ({"input": 1, "output": 1, "cache_read": -0.1}, ">= 0"),
    ],
)
def test_invalid_price_configuration_is_refused(spec: dict[str, object], message: str) -> None:
    with pytest.raises(PricingError, match=message):
        PriceTable.from_config({"m": spec})


def test_invalid_table_keys_and_values_are_refused() -> None:
    with pytest.raises(PricingError, match="must be a table"):
        PriceTable.from_config({"m": 3})  # type: ignore[dict-item]
    with pytest.raises(PricingError, match="names no model"):
        PriceTable({"*": Price(1, 1)})
    with pytest.raises(PricingError, match="not a Price"):
        PriceTable({"m": (1, 1)})  # type: ignore[dict-item]


def test_ledger_accounts_per_step_agent_model_and_session() -> None:
    table = PriceTable({"paid": Price(1.0, 2.0)})
    ledger = Ledger(table)
    a = ledger.record(AssistantTurn(usage=Usage(1_000_000, 0), model="paid"), agent="coding")
    b = ledger.record(AssistantTurn(usage=Usage(0, 1_000_000), model="paid"), agent="coding")
    c = ledger.record(AssistantTurn(usage=Usage(5, 5), model="paid"), agent="repo", step=7)
    assert (a.step, b.step, c.step) == (1, 2, 7)
    assert a.cost == pytest.approx(1.0)
    assert b.cost == pytest.approx(2.0)
    snap = ledger.snapshot()
    assert snap.session.steps == 3
    assert snap.session.usage == Usage(1_000_005, 1_000_005)
    assert snap.session.cost == pytest.approx(3.0 + 15 / 1_000_000)
    assert snap.session.unpriced_steps == 0
    assert snap.by_agent["coding"].cost == pytest.approx(3.0)
    assert snap.by_agent["repo"].steps == 1
    assert snap.by_model["paid"].steps == 3
    assert snap.steps == (a, b, c)


def test_a_session_with_an_unpriced_step_has_no_total_but_says_what_it_knows() -> None:
    ledger = Ledger(PriceTable({"paid": Price(1.0, 1.0)}))
    ledger.record_usage("paid", Usage(1_000_000, 0), agent="a")
    item = ledger.record_usage("mystery", Usage(10, 10), agent="a")
    ledger.record_usage("paid", Usage(), agent="b")  # the engine reported no usage
    assert item.cost is None
    snap = ledger.snapshot()
    assert snap.session.cost is None
    assert snap.session.priced_cost == pytest.approx(1.0)
    assert snap.session.unpriced_steps == 1
    assert snap.session.unreported_steps == 1
    assert snap.by_model["paid"].cost == pytest.approx(1.0)
    assert snap.by_model["mystery"].cost is None
    assert snap.by_agent["b"].unreported_steps == 1


def test_ledger_is_thread_safe() -> None:
    ledger = Ledger(PriceTable({"m": Price(1.0, 1.0)}))
    threads = 8
    per_thread = 250

    def work(agent: str) -> None:
        for _ in range(per_thread):
            ledger.record_usage("m", Usage(1, 1), agent=agent)

    pool = [threading.Thread(target=work, args=(f"a{i % 2}",)) for i in range(threads)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible to expose races
    try:
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    finally:
        sys.setswitchinterval(old)
    snap = ledger.snapshot()
    total = threads * per_thread
    assert snap.session.steps == total
    assert snap.session.usage == Usage(total, total)
    assert len(snap.steps) == total
    assert sorted(s.step for s in snap.steps if s.agent == "a0") == list(range(1, total // 2 + 1))


counts = st.integers(min_value=0, max_value=10**9)


@given(counts, counts, counts, counts, counts, counts, counts, counts)
def test_cost_is_additive_over_usage(
    a: int, b: int, c: int, d: int, e: int, f: int, g: int, h: int
) -> None:
    price = Price(3.0, 15.0, 0.3, 3.75)
    u1, u2 = Usage(a, b, c, d), Usage(e, f, g, h)
    assert price.cost(u1 + u2) == pytest.approx(price.cost(u1) + price.cost(u2))
    assert price.cost(u1) >= 0


def test_a_table_resolves_each_model_name_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17: a ledger step asked the table to walk its prefixes again for every step (every
    prefix, for a model the table does not name). Counted, not timed."""
    resolved: list[str] = []
    resolve = PriceTable._resolve

    def counting(self: PriceTable, model: str) -> Price | None:
        resolved.append(model)
        return resolve(self, model)

    monkeypatch.setattr(PriceTable, "_resolve", counting)
    table = DEFAULT_PRICES.with_entries({})
    ledger = Ledger(table)
    for _ in range(50):
        ledger.record_usage("my-local-llama", Usage(10, 5), agent="a")
        ledger.record_usage("gpt-4o-mini-2024-07-18", Usage(1_000_000, 0), agent="a")
    assert sorted(resolved) == ["gpt-4o-mini-2024-07-18", "my-local-llama"]
    snap = ledger.snapshot()
    assert snap.by_model["my-local-llama"].cost is None
    assert snap.by_model["gpt-4o-mini-2024-07-18"].cost == pytest.approx(50 * 0.15)
    # each table answers for itself: a table that prices the name is not told "unpriced"
    priced = table.with_entries({"my-local-llama": Price(1.0, 1.0)})
    assert priced.cost("my-local-llama", Usage(1_000_000, 0)) == pytest.approx(1.0)
    assert table.cost("my-local-llama", Usage(1_000_000, 0)) is None


def test_names_beyond_the_remembered_ones_are_still_priced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("yagent.llm.pricing.RESOLVED_LIMIT", 2)
    table = PriceTable({"m*": Price(2.0, 0.0), "x": Price(1.0, 0.0)})
    for name in ("a", "b", "m-1", "m-2", "x", "X "):
        price = table.lookup(name)
        expected = 2.0 if name.startswith("m") else 1.0 if name.strip().lower() == "x" else None
        assert (price.input if price else None) == expected
        assert table.lookup(name) is price


def test_a_step_without_usage_is_unreported_and_one_with_any_count_is_not() -> None:
    ledger = Ledger(PriceTable({"m": Price(1.0, 1.0)}))
    for usage in (Usage(), Usage(0, 0, 0, 1), Usage(0, 0, 1, 0), Usage(0, 1), Usage(1)):
        ledger.record_usage("m", usage)
    totals = ledger.snapshot().session
    assert (totals.steps, totals.unreported_steps) == (5, 1)
    assert totals.usage == Usage(1, 1, 1, 1)
