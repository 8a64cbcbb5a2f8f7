"""benchmarks/cassette_lookup.py runs end to end at a tiny size and prints every figure it promises."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import httpx
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "cassette_lookup.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("cassette_lookup", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["cassette_lookup"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("cassette_lookup", None)


SMALL = ["--interactions", "300", "--lookups", "300", "--vcr-lookups", "5"]


def test_prints_the_table_and_the_goals(bench, capsys):
    result = bench.main(SMALL)
    out = capsys.readouterr().out
    for line in ("300 interactions", "open, first (page cache evicted)", "open, warm (median of 5)",
                 "lookup p50 (rows + response)", "lookup p99", "replay path p50 (transport)", "size on disk",
                 "vcrpy 9.4.2", "goals", "open <= 1 s", "lookup p50 <= 50 µs", "open >= 50x faster than vcrpy"):
        assert line in out, f"{line!r} missing from the output:\n{out}"
    assert out.count(" met") + out.count("NOT MET") >= 3
    # The figures are measurements of real work, not placeholders.
    assert result["interactions"] == 300 and result["platforms"] == 10
    assert 0 < result["open"]["warm_s"] < 30 and result["lookup_p50_us"] > 0 and result["replay_p50_us"] > 0
    assert result["vcr"]["load_s"] > 0 and result["vcr"]["yaml_bytes"] > 0 and not result["vcr"]["extrapolated"]
    assert result["bundle_bytes"] >= result["parts_bytes"]["bodies.bin"] > 0


def test_json_output_and_labelled_extrapolation(bench, capsys):
    bench.main([*SMALL, "--vcr-interactions", "100", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["vcr"]["extrapolated"] is True and data["vcr"]["interactions_loaded"] == 100
    assert data["vcr"]["load_s"] == pytest.approx(data["vcr"]["measured"]["load_s"] * 3)
    assert set(data["goals"]) >= {"open_s", "lookup_p50_us", "open_vs_vcr"}


def test_synthetic_interactions_are_deterministic_and_realistic(bench):
    items, urls = bench.Synthesizer(11).build(400)
    again, _ = bench.Synthesizer(11).build(400)
    assert [i.fingerprint for i in items] == [i.fingerprint for i in again]
    assert [i.body for i in items] == [i.body for i in again]
    assert {i.platform for i in items} == {"ex", "seoul", "dart", "krx", "kdic", "hrdk", "edu", "law", "assembly", "gg"}
    assert all(i.origin == "synthetic" and i.source == "synthetic:benchmark" for i in items)
    assert len({i.fingerprint for i in items}) < len(items)  # some requests were recorded more than once
    sizes = sorted(len(i.body) for i in items)
    assert 1000 <= sizes[len(sizes) // 2] <= 3000 and sizes[-1] <= 20_000
    assert any("정상" in i.body.decode() for i in items)
    assert all(json.loads(i.body) for i in items)
    routes = bench.Routes.sandbox(bench.ORIGIN)
    for item, url in zip(items, urls, strict=True):  # each URL is the request its interaction answers
        request = httpx.Request("GET", url)
        assert bench.request_key(request, *routes.match(request.url)).fingerprint == item.fingerprint
