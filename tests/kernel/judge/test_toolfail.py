"""toolfail: the table is complete, orthogonal, fail-closed; classify() maps exceptions."""

from __future__ import annotations

import asyncio

import pytest

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.toolfail import Backoff, Kind, ToolFailure, classify, classify_status


def test_every_kind_has_a_row_with_guidance() -> None:
    assert set(toolfail.TABLE) == set(Kind)
    for kind in Kind:
        assert toolfail.guidance(kind).strip(), kind


def test_unknown_is_not_retryable() -> None:
    assert not toolfail.retryable(Kind.UNKNOWN)
    assert toolfail.parse_kind("no-such-kind") is Kind.UNKNOWN
    assert toolfail.parse_kind(42) is Kind.UNKNOWN
    assert toolfail.parse_kind("timeout") is Kind.TIMEOUT
    assert toolfail.parse_kind(Kind.BUDGET) is Kind.BUDGET


def test_retry_value_and_resend_safety_are_orthogonal() -> None:
    # worth retrying but not safe to resend: the server may already have acted
    assert toolfail.retryable(Kind.TIMEOUT)
    assert not toolfail.resend_safe(Kind.TIMEOUT)
    # refused before running: retry and resend are both fine
    assert toolfail.retryable(Kind.RATE_LIMITED)
    assert toolfail.resend_safe(Kind.RATE_LIMITED)
    # not worth retrying, yet resending would do no harm
    assert not toolfail.retryable(Kind.INVALID_ARGS)
    assert toolfail.resend_safe(Kind.INVALID_ARGS)
    combos = {(r.retryable, r.resend_safe) for r in toolfail.TABLE.values()}
    assert len(combos) >= 3


def test_gate_kinds() -> None:
    assert toolfail.retryable(Kind.NOT_LOADED)
    assert not toolfail.retryable(Kind.FORBIDDEN)
    assert not toolfail.retryable(Kind.INTERNAL)
    assert toolfail.rule(Kind.UNAUTHORIZED).needs_human


def test_backoff() -> None:
    b = Backoff(0.5, 2.0, 3.0)
    assert [b.delay(n) for n in (0, 1, 2, 3, 4)] == [0.0, 0.5, 1.0, 2.0, 3.0]
    assert toolfail.NO_BACKOFF.delay(3) == 0.0
    assert toolfail.rule(Kind.RATE_LIMITED).backoff.delay(1) > 0


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, Kind.INVALID_ARGS),
        (401, Kind.UNAUTHORIZED),
        (403, Kind.PERMISSION),
        (404, Kind.NOT_FOUND),
        (408, Kind.TIMEOUT),
        (409, Kind.CONFLICT),
        (413, Kind.TOO_LARGE),
        (418, Kind.INVALID_ARGS),
        (429, Kind.RATE_LIMITED),
        (500, Kind.TRANSIENT),
        (502, Kind.TRANSIENT),
        (503, Kind.OVERLOADED),
        (504, Kind.TIMEOUT),
        (529, Kind.OVERLOADED),
        (200, Kind.UNKNOWN),
        (302, Kind.UNKNOWN),
    ],
)
def test_classify_status(status: int, kind: Kind) -> None:
    assert classify_status(status) is kind


class HTTPError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"status {status_code}")
        self.status_code = status_code


class Response:
    status = 429


class WrappedError(Exception):
    response = Response()


class ValidationError(Exception):
    """Named like pydantic's: recognised by name in the MRO."""


class ReadTimeout(Exception):
    pass


class ConnectError(Exception):
    pass


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (ToolFailure(Kind.BUDGET, "x"), Kind.BUDGET),
        (asyncio.CancelledError(), Kind.CANCELLED),
        (KeyboardInterrupt(), Kind.CANCELLED),
        (HTTPError(503), Kind.OVERLOADED),
        (WrappedError(), Kind.RATE_LIMITED),
        (TimeoutError(), Kind.TIMEOUT),
        (PermissionError(), Kind.PERMISSION),
        (FileNotFoundError(), Kind.NOT_FOUND),
        (ConnectionResetError(), Kind.TRANSIENT),
        (MemoryError(), Kind.BUDGET),
        (ValidationError(), Kind.INVALID_ARGS),
        (ValueError("bad"), Kind.INVALID_ARGS),
        (OSError(36, "File name too long"), Kind.INVALID_ARGS),
        (OSError(5, "Input/output error"), Kind.UNKNOWN),
        (ReadTimeout(), Kind.TIMEOUT),
        (ConnectError(), Kind.TRANSIENT),
        (RuntimeError("?"), Kind.UNKNOWN),
        (KeyError("k"), Kind.UNKNOWN),
    ],
)
def test_classify(exc: BaseException, kind: Kind) -> None:
    assert classify(exc) is kind


def test_pydantic_validation_error_is_invalid_args() -> None:
    import pydantic

    class Model(pydantic.BaseModel):
        n: int

    with pytest.raises(pydantic.ValidationError) as info:
        Model.model_validate({"n": "x"})
    assert classify(info.value) is Kind.INVALID_ARGS


def test_bool_status_is_not_a_status() -> None:
    class Odd(Exception):
        status_code = True

    assert classify(Odd()) is Kind.UNKNOWN
