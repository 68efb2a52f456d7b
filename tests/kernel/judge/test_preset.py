"""preset: load-time checks, no synonyms, no fallback, and the four shipped presets."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.confine import egress
from yagent.kernel.confine.sandbox import EgressMode, HostProvider, Level, Registry
from yagent.kernel.judge import invoke, preset
from yagent.kernel.judge.gatecheck import Action, ApprovalMode, Requirement
from yagent.kernel.judge.preset import (
    BUILTIN,
    InvalidPresetError,
    Preset,
    Presets,
    UnknownPresetError,
)

DENIED = egress.Spec(EgressMode.DENIED)
OPEN = egress.Spec()


def loose(name: str = "open", **kwargs: Any) -> Preset:
    return Preset(name, Level.IN_PROCESS, ApprovalMode.NEVER_ASK, OPEN, **kwargs)


def test_the_four_builtin_presets_ship() -> None:
    assert BUILTIN.names == ("full-auto", "read-only", "workspace-write", "yolo")
    assert len(BUILTIN) == 4
    read_only = BUILTIN.resolve("read-only")
    assert (read_only.level, read_only.mode, read_only.egress.mode) == (
        Level.NAMESPACES,
        ApprovalMode.ALLOWLIST,
        EgressMode.DENIED,
    )
    assert BUILTIN.resolve("workspace-write").mode is ApprovalMode.ASK
    assert BUILTIN.resolve("full-auto").mode is ApprovalMode.AUTO
    yolo = BUILTIN.resolve("yolo")
    assert yolo.unsafe
    assert yolo.all_loose
    assert "full rights" in yolo.justification
    assert [p.name for p in BUILTIN] == list(BUILTIN.names)
    assert "yolo" in BUILTIN
    assert "YOLO" not in BUILTIN


def test_only_yolo_is_unsafe_and_every_other_builtin_is_sandboxed() -> None:
    for item in BUILTIN:
        assert item.unsafe is (item.name == "yolo")
        if not item.unsafe:
            assert item.level >= Level.NAMESPACES
            assert item.egress.mode is EgressMode.DENIED


@pytest.mark.parametrize("name", ["Read-only", "readonly", "read_only", " read-only", "", "yolo!"])
def test_an_unknown_name_is_an_error_never_a_fallback(name: str) -> None:
    with pytest.raises(UnknownPresetError) as caught:
        BUILTIN.resolve(name)
    assert caught.value.known == BUILTIN.names
    assert "known presets: full-auto, read-only" in str(caught.value)


def test_a_non_string_name_is_unknown() -> None:
    with pytest.raises(UnknownPresetError):
        BUILTIN.resolve(None)  # type: ignore[arg-type]


def test_all_loose_needs_unsafe_and_a_justification() -> None:
    with pytest.raises(InvalidPresetError, match="must say unsafe"):
        Presets([loose()])
    with pytest.raises(InvalidPresetError, match="needs a justification"):
        Presets([loose(unsafe=True)])
    with pytest.raises(InvalidPresetError, match="needs a justification"):
        Presets([loose(unsafe=True, justification="   ")])
    assert Presets([loose(unsafe=True, justification="throw-away VM")]).resolve("open").unsafe


@pytest.mark.parametrize(
    "tighter",
    [
        Preset("t", Level.NAMESPACES, ApprovalMode.NEVER_ASK, OPEN),
        Preset("t", Level.IN_PROCESS, ApprovalMode.AUTO, OPEN),
        Preset("t", Level.IN_PROCESS, ApprovalMode.NEVER_ASK, DENIED),
        Preset("t", Level.IN_PROCESS, ApprovalMode.NEVER_ASK, egress.Spec(EgressMode.PROXY)),
    ],
)
def test_one_tight_axis_is_enough_and_then_unsafe_is_refused(tighter: Preset) -> None:
    assert not tighter.all_loose
    Presets([tighter])
    flagged = Preset(
        "t", tighter.level, tighter.mode, tighter.egress, unsafe=True, justification="why"
    )
    with pytest.raises(InvalidPresetError, match="not loose on every axis"):
        Presets([flagged])


def test_two_names_with_the_same_meaning_are_an_error() -> None:
    a = Preset(
        "a", Level.NAMESPACES, ApprovalMode.ASK, egress.Spec(EgressMode.PROXY, ("X.com", "y.org"))
    )
    b = Preset(
        "b", Level.NAMESPACES, ApprovalMode.ASK, egress.Spec(EgressMode.PROXY, ("y.org", "x.com "))
    )
    with pytest.raises(InvalidPresetError, match="'a' and 'b' mean the same thing"):
        Presets([a, b])
    c = Preset("c", Level.NAMESPACES, ApprovalMode.ASK, egress.Spec(EgressMode.PROXY, ("y.org",)))
    assert len(Presets([a, c])) == 2


def test_a_synonym_of_a_builtin_is_refused_when_added() -> None:
    copy = Preset("sandboxed", Level.NAMESPACES, ApprovalMode.ASK, DENIED)
    with pytest.raises(InvalidPresetError, match="'workspace-write' and 'sandboxed'"):
        BUILTIN.with_presets([copy])
    grown = BUILTIN.with_presets([Preset("hw", Level.HARDWARE, ApprovalMode.ASK, DENIED)])
    assert "hw" in grown
    assert "hw" not in BUILTIN


def test_duplicate_names_are_an_error() -> None:
    with pytest.raises(InvalidPresetError, match="two presets are named 'x'"):
        Presets(
            [
                Preset("x", Level.NAMESPACES, ApprovalMode.ASK, DENIED),
                Preset("x", Level.HARDWARE, ApprovalMode.ASK, DENIED),
            ]
        )


@pytest.mark.parametrize("name", ["", "Upper", "has space", "-lead", "x" * 65, 3])
def test_names_are_plain(name: object) -> None:
    with pytest.raises(InvalidPresetError, match="preset name"):
        Preset(name, Level.NAMESPACES, ApprovalMode.ASK, DENIED).check()  # type: ignore[arg-type]


def test_invalid_egress_and_non_enum_axes_are_refused() -> None:
    with pytest.raises(InvalidPresetError, match="no proxy"):
        Preset(
            "x", Level.NAMESPACES, ApprovalMode.ASK, egress.Spec(EgressMode.DENIED, ("a",))
        ).check()
    with pytest.raises(InvalidPresetError, match="enum members"):
        Preset("x", 1, ApprovalMode.ASK, DENIED).check()  # type: ignore[arg-type]
    with pytest.raises(InvalidPresetError, match="not a Preset"):
        Presets([object()])  # type: ignore[list-item]


def test_presets_are_read_only() -> None:
    item = BUILTIN.resolve("read-only")
    with pytest.raises(AttributeError, match="level"):
        item.level = Level.IN_PROCESS  # type: ignore[misc]
    with pytest.raises(AttributeError, match="read-only"):
        BUILTIN._by_name = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        BUILTIN._by_name["mine"] = item  # type: ignore[index]


def test_from_mapping_reads_configuration() -> None:
    read = Preset.from_mapping(
        {
            "name": "proxied",
            "level": "namespaces",
            "mode": "ask",
            "egress": {"mode": "proxy", "allow": ["pypi.org"], "bypass": ["localhost"]},
        }
    )
    assert read.egress == egress.Spec(EgressMode.PROXY, ("pypi.org",), ("localhost",))
    short = Preset.from_mapping({"name": "s", "level": 2, "mode": "auto", "egress": "denied"})
    assert short.level is Level.HARDWARE
    assert short.egress.mode is EgressMode.DENIED
    unsafe = Preset.from_mapping(
        {
            "name": "u",
            "level": "in-process",
            "mode": "never-ask",
            "unsafe": True,
            "justification": "vm",
        }
    )
    assert unsafe.unsafe
    catalogue = Presets.from_mappings([{"name": "a", "level": "namespaces", "mode": "ask"}])
    assert catalogue.resolve("a").egress.mode is EgressMode.UNRESTRICTED


BASE = {"name": "a", "level": "namespaces", "mode": "ask"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"extra": 1}, "unknown preset keys"),
        ({"mode": None}, "missing"),
        ({"level": "vm"}, "unknown sandbox level"),
        ({"mode": "sometimes"}, "sometimes"),
        ({"egress": {"mode": "proxy", "x": 1}}, "unknown egress keys"),
        ({"egress": 3}, "egress must be"),
        ({"egress": {"mode": "proxy", "allow": "a.com"}}, "list of host patterns"),
        ({"unsafe": "yes"}, "true or false"),
        ({"level": "in-process", "mode": "never-ask"}, "must say unsafe"),
    ],
)
def test_from_mapping_refuses_bad_documents(changes: dict[str, Any], message: str) -> None:
    document = {k: v for k, v in (BASE | changes).items() if v is not None}
    with pytest.raises(InvalidPresetError, match=message):
        Preset.from_mapping(document)


def test_from_mapping_refuses_a_non_mapping() -> None:
    with pytest.raises(InvalidPresetError, match="must be a mapping"):
        Preset.from_mapping(["name"])  # type: ignore[arg-type]


def test_a_preset_drives_the_gate() -> None:
    workspace_write = BUILTIN.resolve("workspace-write")
    assert workspace_write.requirement == Requirement(Level.NAMESPACES, EgressMode.DENIED)
    registry = Registry([HostProvider("/")])
    # The host provider is too weak for a sandboxed preset: refused, not downgraded.
    assert (
        workspace_write.gate(registry)
        .judge(invoke.Decision.ALLOW, workspace_write.requirement)
        .action
        is Action.DENY
    )
    yolo = BUILTIN.resolve("yolo")
    assert (
        yolo.gate(registry).judge(invoke.Verdict.prompt("review"), yolo.requirement).action
        is Action.RUN
    )
    assert (
        yolo.gate(registry, plan=True).judge(invoke.Decision.ALLOW, yolo.requirement).action
        is Action.PLAN
    )


@given(st.permutations(list(BUILTIN)))
def test_catalogue_order_does_not_matter(order: list[Preset]) -> None:
    catalogue = Presets(order)
    assert catalogue.names == BUILTIN.names
    assert [p.meaning for p in catalogue] == [p.meaning for p in BUILTIN]


def test_module_exports_the_justification() -> None:
    assert BUILTIN.resolve("yolo").justification == preset.YOLO_JUSTIFICATION
