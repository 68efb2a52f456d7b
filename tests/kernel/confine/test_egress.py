"""egress: the spec, the variables, the strict verification, and how strong a verdict is."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.abc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.confine import egress
from yagent.kernel.confine.egress import (
    BYPASS_VARIABLES,
    PROXY_VARIABLES,
    DeniedError,
    Mode,
    Spec,
    SpecError,
    Strength,
    ViolationError,
)
from yagent.kernel.confine.sandbox import EgressMode, HostProvider, Program

PROXY = "http://proxy.internal:3128"


def proxy_spec(allow: tuple[str, ...] = (), bypass: tuple[str, ...] = ()) -> Spec:
    return Spec(Mode.PROXY, allow, bypass)


def test_modes_are_the_sandbox_vocabulary_and_the_zero_value_is_loosest() -> None:
    assert Mode.UNRESTRICTED < Mode.PROXY < Mode.DENIED
    assert Spec().mode is Mode.UNRESTRICTED
    Spec().validate()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (Spec(Mode.UNRESTRICTED, allow=("a.com",)), "no proxy"),
        (Spec(Mode.UNRESTRICTED, bypass=("a.com",)), "no proxy"),
        (Spec(Mode.DENIED, allow=("a.com",)), "no proxy"),
        (Spec(Mode.DENIED, bypass=("a.com",)), "no proxy"),
        (proxy_spec(allow=("a.com",), bypass=(" A.com ",)), "both allowed"),
        (proxy_spec(bypass=("*",)), "unrestricted"),
        (proxy_spec(bypass=("a.com,evil.com",)), "not a host pattern"),
        (proxy_spec(allow=("http://a.com",)), "not a host pattern"),
        (proxy_spec(allow=("a .com",)), "not a host pattern"),
        (proxy_spec(bypass=("a.com\nevil",)), "not a host pattern"),
        (proxy_spec(bypass=("",)), "non-empty"),
        (proxy_spec(bypass=(3,)), "non-empty"),  # type: ignore[arg-type]
        (Spec(7), "unknown egress mode"),  # type: ignore[arg-type]
    ],
)
def test_validate_refuses_incoherent_specs(spec: Spec, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        spec.validate()


def test_of_parses_and_validates() -> None:
    spec = Spec.of("proxy", allow=["pypi.org"], bypass=iter(["localhost"]))
    assert spec == Spec(Mode.PROXY, ("pypi.org",), ("localhost",))
    with pytest.raises(SpecError):
        Spec.of("unrestricted", allow=["x"])
    with pytest.raises(ValueError, match="unknown egress mode"):
        Spec.of("sometimes")


def test_meaning_ignores_order_case_and_whitespace() -> None:
    a = proxy_spec(allow=("A.com", "b.com"), bypass=("localhost",))
    b = proxy_spec(allow=(" b.com", "a.com "), bypass=("LOCALHOST",))
    assert a.meaning == b.meaning
    assert a.meaning != proxy_spec(allow=("a.com",)).meaning


def test_env_sets_the_six_variables_and_bypass_only() -> None:
    values = egress.env(proxy_spec(allow=("pypi.org",), bypass=("localhost", " 10.0.0.1")), PROXY)
    assert {name: values[name] for name in PROXY_VARIABLES} == dict.fromkeys(PROXY_VARIABLES, PROXY)
    assert values["NO_PROXY"] == values["no_proxy"] == "localhost,10.0.0.1"
    assert "pypi.org" not in values["NO_PROXY"]  # allow is for the proxy, never a bypass


def test_env_without_bypass_overrides_inherited_bypass_with_empty() -> None:
    values = egress.env(proxy_spec(allow=("pypi.org",)), PROXY)
    assert values["NO_PROXY"] == values["no_proxy"] == ""


def test_env_for_unrestricted_is_empty_and_for_denied_refuses() -> None:
    assert egress.env(Spec(), PROXY) == {}
    with pytest.raises(DeniedError, match="cannot be produced or verified"):
        egress.env(Spec(Mode.DENIED), PROXY)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "proxy:3128",
        "ftp://proxy:21",
        "http://",
        "http://pro xy:1",
        "http://p:99999",
        "http://p:0",
    ],
)
def test_env_refuses_bad_proxy_urls(url: str) -> None:
    with pytest.raises(SpecError):
        egress.env(proxy_spec(), url)


def test_env_validates_the_spec_first() -> None:
    with pytest.raises(SpecError):
        egress.env(proxy_spec(bypass=("a,b",)), PROXY)


def test_what_env_produces_verifies() -> None:
    spec = proxy_spec(allow=("pypi.org",), bypass=("localhost",))
    produced = egress.env(spec, PROXY)
    egress.verify(spec, produced)
    egress.verify(spec, produced, proxy_url=PROXY)


@pytest.mark.parametrize("name", PROXY_VARIABLES)
def test_each_missing_proxy_variable_is_a_violation(name: str) -> None:
    spec = proxy_spec()
    environ = egress.env(spec, PROXY)
    del environ[name]
    with pytest.raises(ViolationError, match=f"missing proxy variables: {name}"):
        egress.verify(spec, environ)


@pytest.mark.parametrize("name", PROXY_VARIABLES)
def test_each_deviating_proxy_variable_is_a_violation(name: str) -> None:
    spec = proxy_spec()
    environ = egress.env(spec, PROXY)
    environ[name] = "http://other:8080"
    with pytest.raises(ViolationError, match="disagree"):
        egress.verify(spec, environ)


def test_all_six_consistent_but_not_the_expected_proxy_is_a_violation() -> None:
    spec = proxy_spec()
    environ = egress.env(spec, "http://rogue:1")
    with pytest.raises(ViolationError, match="elsewhere"):
        egress.verify(spec, environ, proxy_url=PROXY)


def test_empty_values_count_as_missing() -> None:
    spec = proxy_spec()
    environ = egress.env(spec, PROXY)
    environ["ALL_PROXY"] = "  "
    with pytest.raises(ViolationError) as caught:
        egress.verify(spec, environ)
    assert caught.value.problems == ("missing proxy variables: ALL_PROXY",)


@pytest.mark.parametrize(
    ("no_proxy", "lower"),
    [
        ("localhost,10.0.0.1", "localhost,10.0.0.1"),
        (" 10.0.0.1 , LOCALHOST ", ""),
        ("", "10.0.0.1,localhost,"),
        ("localhost", "10.0.0.1"),
    ],
)
def test_bypass_is_compared_as_a_set_over_the_union(no_proxy: str, lower: str) -> None:
    spec = proxy_spec(bypass=("localhost", "10.0.0.1"))
    environ = dict.fromkeys(PROXY_VARIABLES, PROXY) | {"NO_PROXY": no_proxy, "no_proxy": lower}
    egress.verify(spec, environ)


@pytest.mark.parametrize("name", BYPASS_VARIABLES)
def test_an_undeclared_direct_route_is_a_violation(name: str) -> None:
    spec = proxy_spec(bypass=("localhost",))
    environ = egress.env(spec, PROXY)
    environ[name] = "localhost,evil.example"
    with pytest.raises(ViolationError, match=r"undeclared direct routes.*evil\.example"):
        egress.verify(spec, environ)


def test_a_declared_bypass_that_is_missing_is_a_violation() -> None:
    spec = proxy_spec(bypass=("localhost",))
    environ = dict.fromkeys(PROXY_VARIABLES, PROXY)
    with pytest.raises(ViolationError, match="declared bypass missing"):
        egress.verify(spec, environ)


def test_an_inherited_bypass_when_none_is_declared_is_a_violation() -> None:
    environ = dict.fromkeys(PROXY_VARIABLES, PROXY) | {"no_proxy": "*"}
    with pytest.raises(ViolationError, match="undeclared direct routes"):
        egress.verify(proxy_spec(), environ)


def test_every_problem_is_reported_at_once() -> None:
    environ = {"HTTP_PROXY": PROXY, "http_proxy": "http://x:1", "NO_PROXY": "a"}
    with pytest.raises(ViolationError) as caught:
        egress.verify(proxy_spec(bypass=("b",)), environ)
    assert len(caught.value.problems) == 4


def test_verify_unrestricted_accepts_anything_and_denied_refuses() -> None:
    egress.verify(Spec(), {"HTTP_PROXY": "whatever"})
    with pytest.raises(DeniedError):
        egress.verify(Spec(Mode.DENIED), {})
    with pytest.raises(DeniedError):
        egress.verify_verdict(Spec(Mode.DENIED), {})


def test_an_environment_verdict_is_never_more_than_advisory() -> None:
    spec = proxy_spec()
    good = egress.verify_verdict(spec, egress.env(spec, PROXY))
    assert good.satisfied
    assert good.strength is Strength.ADVISORY
    bad = egress.verify_verdict(spec, {})
    assert not bad.satisfied
    assert bad.strength is None
    assert bad.problems


@given(
    st.lists(st.sampled_from(["a.com", "b.org", "10.0.0.1", ".corp", "localhost"]), unique=True),
    st.randoms(),
)
def test_any_reordering_of_the_bypass_list_still_verifies(bypass: list[str], rnd: object) -> None:
    spec = proxy_spec(bypass=tuple(bypass))
    shuffled = list(bypass)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    environ = dict.fromkeys(PROXY_VARIABLES, PROXY) | {"no_proxy": " , ".join(shuffled).upper()}
    egress.verify(spec, environ)


class Claims:
    def __init__(self, mode: Mode) -> None:
        self.mode = mode

    def egress(self) -> Mode:
        return self.mode


class Measures:
    def __init__(self, measured: Mode | Exception) -> None:
        self.measured = measured

    def verify_egress(self) -> Mode:
        if isinstance(self.measured, Exception):
            raise self.measured
        return self.measured


class ClaimsAndMeasures(Claims, Measures):
    def __init__(self, claimed: Mode, measured: Mode) -> None:
        Claims.__init__(self, claimed)
        Measures.__init__(self, measured)


def test_a_claim_is_declared_not_enforced() -> None:
    verdict = egress.satisfied_verdict(proxy_spec(), Claims(Mode.PROXY))
    assert verdict.satisfied
    assert verdict.strength is Strength.DECLARED


def test_a_measurement_is_enforced() -> None:
    verdict = egress.satisfied_verdict(Spec(Mode.DENIED), Measures(Mode.DENIED))
    assert verdict.satisfied
    assert verdict.strength is Strength.ENFORCED
    assert "measured denied" in verdict.reason


def test_a_stricter_mode_satisfies_a_looser_requirement() -> None:
    assert egress.satisfied_by(proxy_spec(), Claims(Mode.DENIED))
    assert egress.satisfied_by(proxy_spec(), Measures(Mode.DENIED))


def test_a_weaker_claim_or_measurement_does_not_satisfy() -> None:
    assert not egress.satisfied_by(Spec(Mode.DENIED), Claims(Mode.PROXY))
    assert not egress.satisfied_by(Spec(Mode.DENIED), Measures(Mode.PROXY))


def test_the_measurement_beats_the_claim() -> None:
    backend = ClaimsAndMeasures(claimed=Mode.DENIED, measured=Mode.UNRESTRICTED)
    verdict = egress.satisfied_verdict(Spec(Mode.DENIED), backend)
    assert not verdict.satisfied
    assert "measured unrestricted" in verdict.reason


def test_a_measurement_that_fails_is_no_enforcement() -> None:
    verdict = egress.satisfied_verdict(Spec(Mode.DENIED), Measures(RuntimeError("probe died")))
    assert not verdict.satisfied
    assert "could not prove" in verdict.reason


def test_silence_satisfies_nothing_but_unrestricted() -> None:
    assert not egress.satisfied_by(proxy_spec(), object())
    assert "declares no egress" in egress.satisfied_verdict(Spec(Mode.DENIED), object()).reason
    verdict = egress.satisfied_verdict(Spec(), object())
    assert verdict.satisfied
    assert verdict.strength is Strength.ENFORCED


def test_satisfied_verdict_validates_the_spec() -> None:
    with pytest.raises(SpecError):
        egress.satisfied_verdict(Spec(Mode.DENIED, allow=("a",)), Claims(Mode.DENIED))


# --- end to end: a real program, a real proxy, the variables env() produced -----------------


async def _serve(listener: anyio.abc.Listener[anyio.abc.SocketStream], seen: list[str]) -> None:
    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            request = await stream.receive(65536)
            seen.append(request.decode(errors="replace").split("\r\n", 1)[0])
            await stream.send(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")

    await listener.serve(handle)


@pytest.fixture
async def servers() -> AsyncIterator[tuple[int, int, list[str], list[str]]]:
    proxy_seen: list[str] = []
    direct_seen: list[str] = []
    proxy = await anyio.create_tcp_listener(local_host="127.0.0.1")
    direct = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_serve, proxy, proxy_seen)
        tasks.start_soon(_serve, direct, direct_seen)
        yield (
            proxy.extra(anyio.abc.SocketAttribute.local_port),
            direct.extra(anyio.abc.SocketAttribute.local_port),
            proxy_seen,
            direct_seen,
        )
        tasks.cancel_scope.cancel()


_FETCH = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read())"


@pytest.mark.anyio
async def test_a_real_client_goes_through_the_proxy_and_only_bypass_goes_direct(
    servers: tuple[int, int, list[str], list[str]], tmp_path: Path
) -> None:
    proxy_port, direct_port, proxy_seen, direct_seen = servers
    spec = proxy_spec(allow=("allowed.example",), bypass=("127.0.0.1",))
    environ = egress.env(spec, f"http://127.0.0.1:{proxy_port}")
    egress.verify(spec, environ)
    host = HostProvider(tmp_path)
    fetch = [sys.executable, "-c", _FETCH]
    # Nothing enforces the proxy here (the host provider holds no egress): this is exactly the
    # advisory strength — the variables route a cooperating client, and only that.
    open_ = EgressMode.UNRESTRICTED
    via_proxy = await host.run(
        Program([*fetch, "http://allowed.example/x"], env=environ, egress=open_)
    )
    direct = await host.run(
        Program([*fetch, f"http://127.0.0.1:{direct_port}/y"], env=environ, egress=open_)
    )
    assert via_proxy.ok, via_proxy.text
    assert direct.ok, direct.text
    assert proxy_seen == ["GET http://allowed.example/x HTTP/1.1"]
    assert direct_seen == ["GET /y HTTP/1.1"]
