"""Fixtures for the file tools: a real workspace and a ToolContext on the real surface assembly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tools.conftest import make_surface
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext


@pytest.fixture
def ctx(workspace: Path, home: Path) -> ToolContext:
    return ToolContext(workspace, make_surface(workspace, home))


def page_texts(result: dict[str, Any]) -> list[str]:
    """The line texts of a read_file page, numbering removed (asserting the numbering format)."""
    if not result["content"]:
        return []
    texts = []
    for i, line in enumerate(result["content"].split("\n")):
        number, text = line.split("\t", 1)
        assert number == f"{result['offset'] + i:>6}"
        texts.append(text)
    return texts


def failure(excinfo: pytest.ExceptionInfo[ToolFailure], kind: Kind) -> str:
    assert excinfo.value.kind is kind, str(excinfo.value)
    return str(excinfo.value)


def dumps(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False)
