"""Batch files: what is accepted, what is refused and where (`yagent.scale.tasks`), the batch
id, and the local engine's records as `kernel.durable.contract` stores (`yagent.scale.records`)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from yagent.kernel.durable import contract
from yagent.scale.records import BatchRecords, RecordExists, StaleRecord
from yagent.scale.tasks import BatchFileError, load


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_jsonl_batch_with_defaults_and_its_id_from_the_content(tmp_path: Path) -> None:
    rows = [
        {"repo": "r", "task": "a"},
        {
            "id": "x",
            "repo": "git@h:o/r.git",
            "task": "b",
            "ref": "v1",
            "agent": "coding",
            "write": ["src"],
        },
    ]
    path = write(tmp_path, "b.jsonl", "".join(json.dumps(r) + "\n\n" for r in rows))
    batch = load(path)
    first, second = batch.tasks
    assert (first.id, first.repo, first.ref, first.agent) == ("t1", str(tmp_path / "r"), "HEAD", "")
    assert (second.id, second.repo, second.ref, second.write) == (
        "x",
        "git@h:o/r.git",
        "v1",
        ("src",),
    )
    assert batch.id.startswith("b-")
    assert load(path).id == batch.id  # same bytes, same batch
    path.write_text(path.read_text() + " ")
    assert load(path).id != batch.id
    assert load(path, batch_id="nightly").id == "nightly"
    assert batch.key("x") == f"{batch.id}/x"


def test_a_toml_batch(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "b.toml",
        '[[task]]\nrepo = "/r"\ntask = "a"\n'
        '[[task]]\nid = "two"\nrepo = "https://h/r.git"\ntask = "b"\n',
    )
    assert [t.id for t in load(path).tasks] == ["t1", "two"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("b.jsonl", '{"repo": "r", "task": "a"}\n{"repo": "r", "task": }\n', "line 2: not JSON"),
        (
            "b.jsonl",
            '{"repo": "r", "taks": "a"}\n',
            "line 1: unknown key 'taks' (did you mean 'task'?)",
        ),
        ("b.jsonl", '\n\n{"task": "a"}\n', "line 3: `repo` is missing"),
        ("b.jsonl", "[1, 2]\n", "line 1: a task is an object, not list"),
        ("b.jsonl", '{"repo": "r", "task": ""}\n', "`task` must be a non-empty string"),
        ("b.jsonl", '{"repo": "r", "task": "a", "write": "src"}\n', "`write` must be a list"),
        ("b.jsonl", '{"repo": "r", "task": "a", "agent": 3}\n', "`agent` must be a string"),
        ("b.jsonl", '{"id": "a b", "repo": "r", "task": "a"}\n', "task id 'a b' is not"),
        (
            "b.jsonl",
            '{"id": "a", "repo": "r", "task": "a"}\n{"id": "a", "repo": "r", "task": "b"}\n',
            "line 2: task id 'a' is used twice",
        ),
        ("b.jsonl", "\n", "no task in the file"),
        (
            "b.toml",
            '[[task]]\nrepo = "r"\ntask = "a"\nrefs = "x"\n',
            "task 1: unknown key 'refs' (did you mean 'ref'?)",
        ),
        ("b.toml", '[[tasks]]\nrepo = "r"\n', "unknown table 'tasks' (did you mean 'task'?)"),
        ("b.toml", "[[task]\n", "not TOML"),
        ("b.yaml", "x", "ends in .jsonl or .toml"),
    ],
)
def test_a_bad_batch_file_is_refused_naming_where(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(BatchFileError) as caught:
        load(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_missing_file_and_a_bad_batch_id(tmp_path: Path) -> None:
    with pytest.raises(BatchFileError, match="cannot read"):
        load(tmp_path / "none.jsonl")
    path = write(tmp_path, "b.jsonl", '{"repo": "r", "task": "a"}\n')
    with pytest.raises(BatchFileError, match="batch id"):
        load(path, batch_id="../x")


def test_the_local_records_keep_the_run_and_step_contracts(tmp_path: Path) -> None:
    async def go() -> None:
        records = BatchRecords(tmp_path, "b")
        assert isinstance(records, contract.RunStore)
        assert isinstance(records, contract.StepStore)
        made = await records.create("b/t", ["prepare", "run"], "pending")
        assert made == contract.RunRecord("b/t", "pending", 1, ("prepare", "run"))
        with pytest.raises(RecordExists):  # a resubmission never starts a recorded task again
            await records.create("b/t", ["prepare"], "pending")
        moved = await records.set_status("b/t", "running", expected_version=1)
        assert moved.version == 2
        with pytest.raises(StaleRecord):  # compare-and-set: a stale writer changes nothing
            await records.set_status("b/t", "completed", expected_version=1)
        assert (await records.load("b/t")) == moved
        await records.put(contract.StepOutcome("b/t", "prepare", "done", "abc"))
        await records.put(contract.StepOutcome("b/t", "run", "error"))
        await records.put(contract.StepOutcome("b/t", "prepare", "done", "def"))
        assert [(o.step_id, o.digest) for o in await records.outcomes("b/t")] == [
            ("prepare", "def"),
            ("run", ""),
        ]
        assert (await records.get("b/t", "run")) == contract.StepOutcome("b/t", "run", "error")
        assert await records.load("b/none") is None

    anyio.run(go)
