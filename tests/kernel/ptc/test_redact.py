"""Worker stderr redaction: each secret form is masked; crash reasons stay readable."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.ptc.redact import redact, rules

CASES = [
    # (form, text, secret that must disappear, mask that must appear)
    ("url", "connect https://bob:hunter2@db.example.com/x", "hunter2", "[redacted:credentials]@"),
    ("url-user", "clone https://ghtoken123@github.com/o/r", "ghtoken123", "[redacted:credentials]"),
    (
        "url-postgres",
        "postgres://svc:pa55w0rd@10.0.0.1:5432/db",
        "pa55w0rd",
        "[redacted:credentials]",
    ),
    ("authorization", "Authorization: Bearer abc.def.ghi123", "abc.def.ghi123", "[redacted:auth"),
    ("authorization-basic", "authorization=Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "Basic [redacted"),
    ("bearer", "sent bearer Zm9vYmFyYmF6cXV4", "Zm9vYmFyYmF6cXV4", "bearer [redacted:bearer]"),
    (
        "jwt",
        "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.SflKxwRJSMeKKF2QT4",
        "SflKxwRJSMeKKF2QT4",
        "[redacted:jwt]",
    ),
    (
        "openai",
        "OPENAI key sk-proj-AbCdEfGhIjKlMnOpQrSt",
        "AbCdEfGhIjKlMnOpQrSt",
        "[redacted:token]",
    ),
    (
        "anthropic",
        "using sk-ant-api03-abcdefghijklmnop",
        "api03-abcdefghijklmnop",
        "[redacted:token]",
    ),
    (
        "github-pat",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "ghp_abcdefghijklmnopqrst",
        "[redacted:token]",
    ),
    ("github-oauth", "gho_ABCDEFGHIJKLMNOPQRSTUVWXYZ01", "gho_ABCDEFGHIJKL", "[redacted:token]"),
    ("slack", "slack xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012", "[redacted:token]"),
    ("aws", "aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "[redacted:token]"),
    (
        "hex",
        "session 0123456789abcdef0123456789abcdef",
        "0123456789abcdef0123456789abcdef",
        "[redacted:hex]",
    ),
    ("password", "password=hunter2 and more", "hunter2", "password=[redacted:secret]"),
    ("secret", "client_secret: s3cr3t-value", "s3cr3t-value", "[redacted:secret]"),
    ("token", "TOKEN='abc def'", "abc def", "[redacted:secret]"),
    ("api_key-json", '{"api_key": "k-12345", "n": 1}', "k-12345", '"api_key": [redacted:secret]'),
    ("apikey", "apiKey=zzz999", "zzz999", "[redacted:secret]"),
]


@pytest.mark.parametrize(("form", "text", "secret", "mask"), CASES, ids=[c[0] for c in CASES])
def test_each_secret_form_is_masked(form: str, text: str, secret: str, mask: str) -> None:
    out = redact(text)
    assert secret not in out, form
    assert mask in out, (form, out)


def test_crash_reasons_stay_verbatim() -> None:
    crash = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/x.py", line 12, in <module>\n'
        "MemoryError\n"
        "#\n# Fatal error in , line 0\n"
        "# Fatal JavaScript out of memory: Ineffective mark-compacts\n"
        "Segmentation fault at 0x7ffd1234"
    )
    assert redact(crash) == crash


def test_short_hex_and_ordinary_urls_are_kept() -> None:
    text = "commit abc123 at https://example.com/path?q=1 mail a@b.org"
    assert redact(text) == text


def test_rules_are_named_in_order() -> None:
    assert rules()[0] == "url-credentials"
    assert rules()[-1] == "hex"


SECRETS = st.sampled_from(
    [
        "sk-" + "A1b2C3d4E5f6G7h8I9j0",
        "ghp_" + "a" * 36,
        "xoxb-" + "1" * 12 + "-abcdef",
        "AKIA" + "Z" * 16,
        "eyJ" + "x" * 20 + ".eyJ" + "y" * 10 + ".sig",
        "f" * 40,
    ]
)
NOISE = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Zs")), max_size=20)


@given(NOISE, SECRETS, NOISE)
def test_an_embedded_secret_never_survives(before: str, secret: str, after: str) -> None:
    out = redact(f"{before} {secret} {after}")
    assert secret not in out
    assert redact(out) == out  # masking is stable
