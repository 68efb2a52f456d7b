"""The OTel mapping contract: every attribute declared, labels only where the policy allows."""

from __future__ import annotations

import dataclasses

import pytest

from yagent.kernel.trace.trajectory import (
    ATTR_SPECS,
    FORBIDDEN_LABELS,
    TRACE_GRANULARITY,
    AttrSpec,
    Cardinality,
    DomainKind,
    LabelPolicyError,
    TraceGranularity,
    UnknownAttributeError,
    attr_spec_of,
    label_violations,
    metric_labels,
    otelmap,
)
from yagent.kernel.trace.trajectory.otelmap import (
    CATALOG,
    COUNT,
    FLAG,
    TEXT,
    USD,
    Convention,
    enum_of,
    list_of,
)

SOURCES = ("row.", "attrs.", "turn.", "host.", "plan.", "metric.")


def test_every_attribute_declares_source_domain_cardinality_and_label() -> None:
    assert len({s.name for s in ATTR_SPECS}) == len(ATTR_SPECS)
    for spec in ATTR_SPECS:
        assert spec.source.startswith(SOURCES), spec.name
        assert isinstance(spec.domain.python_type, type), spec.name
        assert isinstance(spec.cardinality, Cardinality)
        assert spec.cardinality.why
        assert spec.doc
        if spec.label:
            assert spec.cardinality.bounded, spec.name
            assert spec.domain.kind in (DomainKind.ENUM, DomainKind.CATALOG, DomainKind.BOOL)
            assert spec.name not in FORBIDDEN_LABELS


def test_genai_convention_names_are_used_where_they_exist() -> None:
    names = {s.name for s in ATTR_SPECS}
    assert {
        "gen_ai.operation.name",
        "gen_ai.request.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.tool.name",
        "gen_ai.tool.call.id",
        "gen_ai.agent.name",
        "gen_ai.conversation.id",
        "error.type",
    } <= names
    for spec in ATTR_SPECS:
        if spec.convention is Convention.YAGENT:
            assert spec.name.startswith("yagent.")
        elif spec.convention is Convention.GEN_AI:
            assert spec.name.startswith("gen_ai.")
        else:
            assert not spec.name.startswith(("yagent.", "gen_ai."))


def test_unbounded_dimension_like_fields_are_forbidden_labels() -> None:
    for name in ("gen_ai.conversation.id", "gen_ai.agent.name", "gen_ai.tool.call.id"):
        assert name in FORBIDDEN_LABELS
        spec = attr_spec_of(name)
        assert not spec.label
        assert not spec.cardinality.bounded
    assert {"yagent.delegation.id", "yagent.row.id", "session.id"} <= FORBIDDEN_LABELS


def test_the_trace_boundary_is_the_turn() -> None:
    assert TRACE_GRANULARITY is TraceGranularity.TURN
    assert [g.value for g in TraceGranularity] == ["turn"]


def test_attr_spec_of_refuses_undeclared_names() -> None:
    assert attr_spec_of("gen_ai.tool.name").label
    with pytest.raises(UnknownAttributeError):
        attr_spec_of("gen_ai.made.up")


def _spec(**changes: object) -> AttrSpec:
    base = attr_spec_of("gen_ai.tool.name")
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_label_policy_is_enforced_when_a_spec_is_built() -> None:
    with pytest.raises(LabelPolicyError, match="forbidden"):
        _spec(name="gen_ai.agent.name")
    with pytest.raises(LabelPolicyError, match="bounded enumerations"):
        _spec(cardinality=Cardinality(None, "x"))
    with pytest.raises(LabelPolicyError, match="bounded enumerations"):
        _spec(domain=TEXT)
    with pytest.raises(LabelPolicyError, match="bounded enumerations"):
        _spec(domain=COUNT)
    with pytest.raises(LabelPolicyError, match="more values"):
        _spec(domain=enum_of("a", "b", "c"), cardinality=Cardinality(2, "too small"))
    with pytest.raises(LabelPolicyError, match="gen_ai"):
        _spec(name="tool.name")
    with pytest.raises(LabelPolicyError, match="yagent"):
        dataclasses.replace(attr_spec_of("yagent.pairing"), name="pairing")
    with pytest.raises(LabelPolicyError, match="unknown source"):
        _spec(source="somewhere.else")
    with pytest.raises(LabelPolicyError, match="metric-only"):
        _spec(source="metric.token_type")
    assert not _spec(label=False, domain=TEXT, cardinality=Cardinality(None, "x")).label


def test_the_table_self_check_refuses_duplicates_and_bounded_forbidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(otelmap, "ATTR_SPECS", (*ATTR_SPECS, ATTR_SPECS[0]))
    with pytest.raises(LabelPolicyError, match="twice"):
        otelmap._self_check()
    monkeypatch.setattr(otelmap, "ATTR_SPECS", ATTR_SPECS)
    bounded = dataclasses.replace(
        attr_spec_of("gen_ai.tool.call.id"), cardinality=Cardinality(3, "x")
    )
    table = {**otelmap._BY_NAME, "gen_ai.tool.call.id": bounded}
    monkeypatch.setattr(otelmap, "_BY_NAME", table)
    with pytest.raises(LabelPolicyError, match="forbidden as a label"):
        otelmap._self_check()


@pytest.mark.parametrize(
    ("domain", "good", "bad"),
    [
        (enum_of("a"), ["a"], ["b", "", 1, None]),
        (CATALOG, ["anything"], ["", 3, True]),
        (COUNT, [0, 12], [-1, 1.5, True, float("nan"), "3"]),
        (USD, [0.0, 2, 0.5], [-0.1, float("inf"), False]),
        (FLAG, [True, False], [0, 1, "true"]),
        (list_of("x", "y"), [(), ("x",), ("x", "y")], [("z",), ["x"], "x"]),
    ],
)
def test_domains_accept_their_values_only(
    domain: object, good: list[object], bad: list[object]
) -> None:
    for value in good:
        assert domain.accepts(value), value  # type: ignore[attr-defined]
    for value in bad:
        assert not domain.accepts(value), value  # type: ignore[attr-defined]


def test_label_violations_and_metric_labels_keep_only_allowed_labels() -> None:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.agent.name": "coder",
        "gen_ai.conversation.id": "s1",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.usage.input_tokens": 10,
        "yagent.pairing": "not-a-state",
        "made.up": "x",
    }
    bad = label_violations(attrs)
    assert bad == tuple(sorted(bad))
    assert set(bad) == set(attrs) - {"gen_ai.operation.name", "gen_ai.request.model"}
    labels = metric_labels(attrs)  # type: ignore[arg-type]
    assert labels == {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    assert not set(labels) & FORBIDDEN_LABELS
    assert label_violations({"session.id": "x"}) == ("session.id",)
