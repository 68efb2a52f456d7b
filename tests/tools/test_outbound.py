"""PII on the way out: tool results before the model, event payloads before logs and display."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tools.conftest import make_surface
from yagent.kernel.confine import pii
from yagent.tools import outbound, registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.toolresult import ToolResult

MOBILE = "13812345678"
CARD = "4111111111111111"  # passes Luhn


def store(model: str = "mask", log: str = "mask", display: str = "off") -> pii.PolicyStore:
    return pii.PolicyStore(outbound.policy_of(model, log, display))


def adapter(workspace: Path, home: Path, piis: pii.PolicyStore | None) -> Adapter:
    ctx = ToolContext(workspace, make_surface(workspace, home), pii=piis)
    return Adapter(ctx, registry.executors())


@pytest.mark.anyio
async def test_a_chinese_mobile_number_in_a_tool_result_is_masked_before_the_model(
    workspace: Path, home: Path
) -> None:
    (workspace / "contacts.txt").write_text(f"联系人：张三，手机 {MOBILE}，邮箱 zhang@example.cn\n")
    result = await adapter(workspace, home, store()).call(
        "read_file", json.dumps({"path": "contacts.txt"})
    )
    assert result.ok
    assert MOBILE not in result.content
    assert "zhang@example.cn" not in result.content
    assert "[MOBILE]" in result.content
    assert "联系人：张三" in result.content
    assert MOBILE in json.dumps(result.data, ensure_ascii=False), "the executor's data is raw"


@pytest.mark.anyio
async def test_an_invalid_number_is_left_alone(workspace: Path, home: Path) -> None:
    (workspace / "n.txt").write_text("order 12812345678 and card 4111111111111112\n")
    result = await adapter(workspace, home, store()).call(
        "read_file", json.dumps({"path": "n.txt"})
    )
    assert "12812345678" in result.content, "12x is not a mainland mobile prefix"
    assert "4111111111111112" in result.content, "fails Luhn: not a card"


@pytest.mark.anyio
async def test_block_withholds_the_result_visibly(workspace: Path, home: Path) -> None:
    (workspace / "c.txt").write_text(f"card {CARD}\n")
    result = await adapter(workspace, home, store(model="block")).call(
        "read_file", json.dumps({"path": "c.txt"})
    )
    assert not result.ok
    body = json.loads(result.content)
    assert "withheld" in body["error"]
    assert body["pii_blocked"] == ["bank_card"]
    assert CARD not in result.content
    clean = await adapter(workspace, home, store(model="block")).call(
        "read_file", json.dumps({"path": "a.txt"})
    )
    assert clean.ok, "nothing found: nothing blocked"


@pytest.mark.anyio
async def test_refusals_pass_the_model_surface_too(workspace: Path, home: Path) -> None:
    result = await adapter(workspace, home, store()).call(
        "read_file", json.dumps({"path": f"/nonexistent/{MOBILE}"})
    )
    assert not result.ok  # outside the workspace, and nobody to ask
    assert MOBILE not in result.content


@pytest.mark.anyio
async def test_off_and_no_store_leave_results_unchanged(workspace: Path, home: Path) -> None:
    (workspace / "m.txt").write_text(MOBILE)
    for piis in (None, store(model="off")):
        result = await adapter(workspace, home, piis).call(
            "read_file", json.dumps({"path": "m.txt"})
        )
        assert MOBILE in result.content


def test_for_model_keeps_an_unchanged_result_identical() -> None:
    result = ToolResult("c", "t", True, "nothing personal")
    assert outbound.for_model(result, store()) is result


def test_for_surface_per_field() -> None:
    payload: dict[str, Any] = {
        "call_id": "c1",
        "ok": True,
        "content": f"call {MOBILE}",
        "nested": {"who": ["x", f"{MOBILE}"]},
    }
    logged = outbound.for_surface(payload, pii.Surface.LOG, store())
    assert logged["call_id"] == "c1"
    assert logged["ok"] is True
    assert logged["content"] == "call [MOBILE]"
    assert logged["nested"] == {"who": ["x", "[MOBILE]"]}
    shown = outbound.for_surface(payload, pii.Surface.DISPLAY, store())
    assert shown == payload
    blocked = outbound.for_surface(payload, pii.Surface.LOG, store(log="block"))
    assert blocked["call_id"] == "c1"
    assert blocked["content"] == "[withheld: contains personal data (mobile); log policy is block]"
    assert payload["content"] == f"call {MOBILE}", "the input is not modified"


def test_a_field_pii_cannot_walk_is_withheld() -> None:
    deep: Any = "x"
    for _ in range(pii.MAX_DEPTH + 2):
        deep = [deep]
    out = outbound.for_surface({"deep": deep, "fine": "ok"}, pii.Surface.LOG, store())
    assert out["deep"].startswith("[withheld: personal-data screening failed")
    assert out["fine"] == "ok"


def test_policy_of_refuses_unknown_actions() -> None:
    with pytest.raises(ValueError, match="maybe"):
        outbound.policy_of("maybe", "mask", "off")
