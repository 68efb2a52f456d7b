"""Error classification details that the wire tests do not reach."""

from __future__ import annotations

import pytest

from yagent.kernel.judge.toolfail import Kind
from yagent.llm.errors import DETAIL_LIMIT, kind_of_body, to_engine_error
from yagent.llm.types import EngineError


class Timeoutish(Exception):
    pass


class Connectish(Exception):
    pass


class WithBody(Exception):
    def __init__(self, body: object, status: int | None = None) -> None:
        super().__init__("sdk text")
        self.body = body
        if status is not None:
            self.status_code = status


def convert(exc: Exception, secret: str | None = None) -> EngineError:
    return to_engine_error(
        exc,
        provider="prov",
        model="m1",
        timeout_types=(Timeoutish,),
        connection_types=(Connectish,),
        secret=secret,
    )


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ({"type": "error", "error": {"type": "overloaded_error"}}, Kind.OVERLOADED),
        ({"error": {"code": "rate_limit_exceeded"}}, Kind.RATE_LIMITED),
        ({"code": 503}, Kind.OVERLOADED),
        ({"code": "401"}, Kind.UNAUTHORIZED),
        ({"type": "mystery", "code": "context_length_exceeded"}, Kind.TOO_LARGE),
        ({"code": True}, Kind.UNKNOWN),
        ({}, Kind.UNKNOWN),
        ("plain text", Kind.UNKNOWN),
    ],
)
def test_kind_of_body(body: object, kind: Kind) -> None:
    assert kind_of_body(body) is kind


def test_timeout_is_checked_before_connection_and_status_before_both() -> None:
    class Both(Timeoutish, Connectish):
        pass

    assert convert(Both()).kind is Kind.TIMEOUT
    assert convert(Connectish("refused")).kind is Kind.TRANSIENT
    assert convert(WithBody({"error": {"message": "m"}}, status=429)).kind is Kind.RATE_LIMITED


def test_a_status_below_400_with_a_body_is_judged_by_the_body() -> None:
    err = convert(
        WithBody({"type": "error", "error": {"type": "api_error", "message": "hiccup"}}, 200)
    )
    assert err.kind is Kind.TRANSIENT
    assert str(err) == "prov model 'm1': error in stream (transient): hiccup"


def test_unclassified_exceptions_fall_back_to_toolfail_and_fail_closed() -> None:
    assert convert(RuntimeError("weird")).kind is Kind.UNKNOWN
    assert convert(ValueError("bad")).kind is Kind.INVALID_ARGS
    assert str(convert(RuntimeError(""))) == "prov model 'm1' (unknown): RuntimeError"


def test_the_key_is_redacted_and_long_details_are_cut_visibly() -> None:
    secret = "sk-live-abcdef"
    err = convert(RuntimeError(f"key {secret} " + "x" * 2000), secret=secret)
    text = str(err)
    assert secret not in text
    assert "[redacted]" in text
    assert "truncated" in text
    assert len(text) < DETAIL_LIMIT + 100


def test_an_engine_error_passes_through_unchanged() -> None:
    original = EngineError(Kind.BUDGET, "already classified")
    assert convert(original) is original
