"""Fault injection: seeded, at the configured rates, rendered over real HTTP."""

from __future__ import annotations

import json
import math

import httpx
import pytest
from starlette.testclient import TestClient

from sandbox import (
    FaultInjector,
    FaultKind,
    FaultProfile,
    FaultRates,
    create_sandbox_app,
    load_profile,
)
from sandbox.faults import FaultProfileError
from sandbox.loopback import LoopbackServer

EDU_PATH = "/neis/hub/schoolInfo"


def _within(count: int, n: int, p: float, sigmas: float = 4.0) -> bool:
    return abs(count - n * p) <= sigmas * math.sqrt(n * p * (1 - p)) + 1


def test_injector_draws_each_kind_at_its_rate():
    rates = FaultRates(rate_limit=0.1, server_error=0.05, hang=0.02, malformed=0.08, unavailable=0.03)
    injector = FaultInjector(FaultProfile(seed=7, default=rates))
    n = 20_000
    draws = [injector.draw("dart") for _ in range(n)]
    for kind in FaultKind:
        assert _within(draws.count(kind), n, getattr(rates, kind.value)), kind
    assert injector.counts["dart"]["ok"] == draws.count(None)


def test_same_seed_gives_the_same_fault_sequence_and_another_seed_does_not():
    rates = FaultRates(server_error=0.3)

    def seq(seed: int) -> list[FaultKind | None]:
        injector = FaultInjector(FaultProfile(seed=seed, default=rates))
        return [injector.draw("krx") for _ in range(200)]

    assert seq(1) == seq(1)
    assert seq(1) != seq(2)


def test_platforms_draw_from_independent_streams():
    rates = FaultRates(server_error=0.5)
    a = FaultInjector(FaultProfile(seed=3, default=rates))
    b = FaultInjector(FaultProfile(seed=3, default=rates))
    for _ in range(50):
        b.draw("law")  # traffic on another platform must not shift this one's faults
    assert [a.draw("dart") for _ in range(100)] == [b.draw("dart") for _ in range(100)]


def test_rates_adding_up_past_one_are_refused():
    with pytest.raises(ValueError, match="must not exceed 1"):
        FaultRates(rate_limit=0.7, server_error=0.5)


def test_unknown_profile_names_the_builtins(tmp_path):
    with pytest.raises(FaultProfileError, match="none, flaky, hostile"):
        load_profile("sometimes")
    bad = tmp_path / "bad.json"
    bad.write_text('{"default": {"rate_limit": 2}}')
    with pytest.raises(FaultProfileError, match=str(bad)):
        load_profile(str(bad))


def test_profile_file_is_loaded(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"seed": 5, "platforms": {"gg": {"unavailable": 0.25}}}))
    profile = load_profile(str(path))
    assert profile.rates("gg").unavailable == 0.25 and profile.rates("dart").total() == 0


@pytest.mark.parametrize("kind", [FaultKind.RATE_LIMIT, FaultKind.SERVER_ERROR, FaultKind.UNAVAILABLE,
                                  FaultKind.MALFORMED])
def test_fault_kind_is_served_at_its_configured_rate(world, keys, kind):
    profile = FaultProfile(seed=11, platforms={"edu": FaultRates(**{kind.value: 0.25})})
    params = {"KEY": keys.first("edu"), "Type": "json", "pSize": "1"}
    with TestClient(create_sandbox_app(world, keys, profile), base_url="http://sandbox") as client:
        clean = client.get(EDU_PATH, params=params)
        n = 400
        faulty = sum(client.get(EDU_PATH, params=params).content != clean.content for _ in range(n))
    # the first request may itself have been a fault; the clean one must be the majority answer
    assert _within(faulty, n, 0.25) or _within(n - faulty, n, 0.25)


def test_malformed_answers_do_not_parse(world, keys):
    profile = FaultProfile(platforms={"edu": FaultRates(malformed=1.0)})
    with TestClient(create_sandbox_app(world, keys, profile), base_url="http://sandbox") as client:
        response = client.get(EDU_PATH, params={"KEY": keys.first("edu"), "Type": "json"})
    assert response.status_code == 200
    with pytest.raises(ValueError):
        json.loads(response.content)


def test_hangs_happen_at_their_configured_rate_over_loopback(world, keys):
    profile = FaultProfile(seed=3, hang_seconds=0.3, platforms={"edu": FaultRates(hang=0.2)})
    n, timeouts = 150, 0
    with LoopbackServer(create_sandbox_app(world, keys, profile)) as srv, httpx.Client(timeout=0.15) as client:
        for _ in range(n):
            try:
                client.get(srv.origin + EDU_PATH, params={"KEY": keys.first("edu"), "Type": "json", "pSize": "1"})
            except httpx.ReadTimeout:
                timeouts += 1
    assert _within(timeouts, n, 0.2)


def test_a_hang_outlasts_the_client_timeout_over_loopback(world, keys):
    profile = FaultProfile(hang_seconds=2.0, platforms={"edu": FaultRates(hang=1.0)})
    with LoopbackServer(create_sandbox_app(world, keys, profile)) as srv:
        with pytest.raises(httpx.ReadTimeout):
            httpx.get(srv.origin + EDU_PATH, params={"KEY": keys.first("edu")}, timeout=0.3)
        # other platforms are unaffected
        assert httpx.get(srv.origin + "/healthz", timeout=5).status_code == 200
