"""A built-in tool's schema and argument model are built when first read, and read the same as
when they were built with the spec (toolspec.spec's contract).

Each test imports the registry in a fresh interpreter where it needs a process no test has
touched yet (what is built is process state); the rest compare against pydantic directly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

import yagent as yagent_package
from yagent.toolspec.browser import BROWSER
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.params import ReadFileArgs
from yagent.toolspec.spec import Effect, ModelSchema, Spec, Tier, make_spec

SRC = str(Path(yagent_package.__file__).resolve().parents[1])


def eager(spec: Spec) -> dict[str, object]:
    assert spec.model is not None
    schema = spec.model.model_json_schema()
    schema.pop("title", None)
    return schema


@pytest.mark.parametrize("spec", BUILTIN, ids=lambda s: s.name)
def test_every_builtin_schema_reads_as_the_model_s_json_schema(spec: Spec) -> None:
    assert isinstance(spec.parameters, ModelSchema)
    assert dict(spec.parameters) == eager(spec)
    assert spec.parameters == eager(spec)  # a Spec compares equal to one made with the dict
    assert json.dumps(spec.tool_def()["parameters"], sort_keys=True) == json.dumps(
        eager(spec), sort_keys=True
    )


def test_importing_the_registry_builds_no_model_until_one_is_read_or_used() -> None:
    probe = """
import json
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.params import ReadFileArgs
before = [s.name for s in BUILTIN if s.model.__pydantic_complete__]
spec = next(s for s in BUILTIN if s.name == "list_dir")
spec.parameters["properties"]
ReadFileArgs.model_validate({"path": "a"})
after = sorted(s.name for s in BUILTIN if s.model.__pydantic_complete__)
print(json.dumps([before, after]))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": SRC},
        timeout=60,
        check=True,
    )
    before, after = json.loads(done.stdout)
    assert before == []
    assert after == ["list_dir", "read_file"]


def test_a_model_built_at_its_first_validation_refuses_as_before() -> None:
    with pytest.raises(ValidationError) as caught:
        ReadFileArgs.model_validate({"path": "a", "offset": 0, "colour": "red"})
    kinds = sorted(error["type"] for error in caught.value.errors())
    assert kinds == ["extra_forbidden", "greater_than_equal"]


def test_make_spec_keeps_the_model_and_reads_its_schema_once() -> None:
    spec = make_spec("x_tool", "An example.", ReadFileArgs, Effect.READ, Tier.WARM)
    assert spec.model is ReadFileArgs
    first = spec.parameters["properties"]
    assert spec.parameters["properties"] is first  # generated once, then the same mapping
    assert "title" not in spec.parameters
    assert set(spec.parameters) == set(eager(spec))
    assert len(spec.parameters) == len(eager(spec))
    assert repr(spec.parameters) == repr(eager(spec))


def test_the_browser_tools_are_built_lazily_too() -> None:
    assert all(isinstance(spec.parameters, ModelSchema) for spec in BROWSER)
