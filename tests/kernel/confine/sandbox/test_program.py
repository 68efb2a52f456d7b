"""Programs are checked when built; results say when they are not the whole story."""

from __future__ import annotations

import math

import pytest

from yagent.kernel.confine.sandbox import EgressMode, Program, ProgramError, Result


def test_a_program_copies_and_freezes_its_inputs() -> None:
    argv = ["echo", "hi"]
    env = {"A": "1"}
    program = Program(argv, env=env, timeout=1.5, cwd="sub")
    argv.append("more")
    env["B"] = "2"
    assert program.argv == ("echo", "hi")
    assert dict(program.env) == {"A": "1"}
    with pytest.raises(TypeError):
        program.env["C"] = "3"  # type: ignore[index]


def test_a_program_needs_no_network_unless_it_says_so() -> None:
    assert Program(["true"]).egress is EgressMode.DENIED
    opened = Program(["true"]).with_egress(EgressMode.UNRESTRICTED)
    assert opened.egress is EgressMode.UNRESTRICTED
    assert opened.argv == ("true",)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"argv": []}, "non-empty argv"),
        ({"argv": [""]}, "non-empty argv"),
        ({"argv": ["a\0b"]}, "NUL"),
        ({"argv": ["ok", 3]}, "NUL"),
        ({"argv": ["ok"], "env": {"A=B": "x"}}, "environment"),
        ({"argv": ["ok"], "env": {"": "x"}}, "environment"),
        ({"argv": ["ok"], "env": {"A": "x\0"}}, "environment"),
        ({"argv": ["ok"], "timeout": 0}, "positive"),
        ({"argv": ["ok"], "timeout": -1}, "positive"),
        ({"argv": ["ok"], "timeout": math.nan}, "positive"),
        ({"argv": ["ok"], "timeout": math.inf}, "positive"),
        ({"argv": ["ok"], "cwd": ""}, "working directory"),
        ({"argv": ["ok"], "cwd": "a\0"}, "working directory"),
    ],
)
def test_bad_programs_are_refused(kwargs: dict[str, object], message: str) -> None:
    argv = kwargs.pop("argv")
    with pytest.raises(ProgramError, match=message):
        Program(argv, **kwargs)  # type: ignore[arg-type]


def test_result_properties() -> None:
    assert Result(0, b"caf\xc3\xa9 \xff").text == "café \ufffd"
    assert Result(0).ok
    assert not Result(1).ok
    assert not Result(0, timed_out=True).ok
