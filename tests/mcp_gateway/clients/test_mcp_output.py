"""The compiled output-schema check (``mcp_gateway.clients.mcp_output``) answers as ``jsonschema`` does, and in
front of the MCP SDK's validator leaves every result and every error message as the SDK makes them.

Real parts: ``jsonschema``'s Draft 2020-12 validator as the oracle (random schemas of the plain subset and random
JSON values, by hypothesis), every output schema of the committed catalog, a 1,000-record page replayed from the
shipped bundle, the pytest plugin's gateway on a loopback port with two official MCP clients connected to it.
"""

from __future__ import annotations

import contextlib
import copy
import sys
import time

import mcp.types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, exceptions

from appliance.pytest_plugin import connected, serve_bundle
from mcp_gateway.catalog import load_catalog
from mcp_gateway.clients.mcp_output import TYPES, FastPathValidator, compile_check, fast_output_checks
from tests.test_layout import REPO

# ------------------------------------------------------------------------------------------------ the check alone

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, 1.0, -2.0, 1.5, float("nan")])
    | st.sampled_from(["", "a", "가", "1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=12)

type_names = st.sampled_from(sorted(TYPES))
types_ = type_names | st.lists(type_names, min_size=1, max_size=3, unique=True)


def schemas(depth: int = 3) -> st.SearchStrategy:
    leaf = st.booleans() | st.fixed_dictionaries({}, optional={"type": types_, "description": st.just("설명")})
    if depth == 0:
        return leaf
    sub = schemas(depth - 1)
    return leaf | st.fixed_dictionaries({}, optional={
        "type": types_, "description": st.just("d"), "title": st.just("t"),
        "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), sub, max_size=3),
        "required": st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=2),
        "items": sub})


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas(), json_values)
def test_the_compiled_check_agrees_with_jsonschema(schema, instance):
    check = compile_check(schema)
    assert check is not None, schema
    assert check(instance) == Draft202012Validator(schema).is_valid(instance), (schema, instance)


@pytest.mark.parametrize("instance", [True, False, 1, 1.0, 2.5, -0.0])
def test_booleans_are_not_numbers_and_integral_floats_are_integers(instance):
    for name in ("integer", "number", "boolean"):
        schema = {"type": name}
        assert compile_check(schema)(instance) == Draft202012Validator(schema).is_valid(instance), (name, instance)


@pytest.mark.parametrize("schema", [
    {"type": "string", "enum": ["a"]}, {"$ref": "#/$defs/x", "$defs": {"x": {}}}, {"type": "object",
    "additionalProperties": False}, {"type": "string", "pattern": "^a"}, {"anyOf": [{"type": "string"}]},
    {"properties": {"a": {"minimum": 1}}}, {"items": [{"type": "string"}]}, {"type": "strange"}, {"type": []},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}, {"required": "a"}, "not a schema",
])
def test_anything_beyond_the_plain_subset_is_left_to_jsonschema(schema):
    assert compile_check(schema) is None


def test_every_output_schema_of_the_catalog_compiles():
    catalog = load_catalog()
    assert [s.name for s in catalog if compile_check(s.output_schema()) is None] == []


# ------------------------------------------------------------------------------------------------ a real page


@pytest.fixture(scope="module")
def bike_page() -> tuple[dict, dict]:
    """(list_bike_stations' output schema, its 1,000-record page replayed from the shipped bundle)."""
    import asyncio

    from bench.taskset.build import DEFAULT_CASSETTES
    from mcp_gateway.gateway import open_gateway

    async def replay() -> dict:
        gw = open_gateway(upstream="replay", mode="replay", profile="bench", cassettes=DEFAULT_CASSETTES,
                          bundle="kopa-default")
        try:
            key = (await gw.runtime.call("get_seoul_api_key", {}, "s")).structured()["records"][0]["api_key"]
            result = await gw.runtime.call("list_bike_stations", {"KEY": key, "pageNo": 1, "numOfRows": 1000}, "s")
            return result.structured()
        finally:
            await gw.aclose()

    page = asyncio.run(replay())
    assert len(page["records"]) == 1000
    return load_catalog().get("list_bike_stations").output_schema(), page


def broken_pages(page: dict) -> list[dict]:
    """The page spoiled in every way its schema can tell."""
    spoiled = []
    for edit in (lambda p: p["records"][999].update({next(iter(p["records"][999])): 7}),  # a string field an int
                 lambda p: p["records"].__setitem__(500, "a record as a string"),
                 lambda p: p.pop("outcome"),
                 lambda p: p.update({"total_count": "1000"}),
                 lambda p: p.update({"records": {"0": p["records"][0]}})):
        broken = copy.deepcopy(page)
        edit(broken)
        spoiled.append(broken)
    return spoiled


def test_a_replayed_page_checks_as_jsonschema_checks_it_with_the_same_error(bike_page):
    schema, page = bike_page
    plain = Draft202012Validator(schema)
    fast = FastPathValidator(compile_check(schema), plain)
    assert fast.is_valid(page) and list(fast.iter_errors(page)) == [] and plain.is_valid(page)
    for broken in broken_pages(page):
        expected = exceptions.best_match(plain.iter_errors(broken))
        assert expected is not None
        got = exceptions.best_match(fast.iter_errors(broken))
        assert (got.message, list(got.path)) == (expected.message, list(expected.path))


def test_the_compiled_check_of_a_1000_record_page_is_far_cheaper_than_jsonschemas(bike_page):
    schema, page = bike_page
    plain, check = Draft202012Validator(schema), compile_check(schema)

    def best(f) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            f()
            times.append(time.perf_counter() - started)
        return min(times)

    # ~25-40x on a quiet machine; 5x leaves room for a busy one
    assert best(lambda: check(page)) * 5 < best(lambda: list(plain.iter_errors(page)))


# ------------------------------------------------------------------------------------------------ in the SDK client


async def test_in_the_sdk_client_results_and_error_messages_are_unchanged(bike_page, monkeypatch, tmp_path):
    """Two official clients on one replay gateway, the plugin's (fast check) and a plain one: the same results,
    and a result that breaks the schema raises the same RuntimeError (``ClientSession.validate_tool_result``)."""
    import asyncio
    import contextlib

    monkeypatch.setenv("KOPA_HOME", str(tmp_path))  # no bundles there: the shipped one is replayed
    _, page = bike_page
    stack = contextlib.ExitStack()
    gateway = await asyncio.to_thread(stack.enter_context, serve_bundle("kopa-default"))
    try:
        async with connected(gateway) as fast, plain_client(gateway) as plain:
            assert getattr(fast.session._output_schema_validator, "kopa_fast", False)  # the plugin's client has it
            assert not getattr(plain.session._output_schema_validator, "kopa_fast", False)
            args = {"pageNo": 1, "numOfRows": 1000}  # the chat profile: the gateway holds the key
            a, b = await fast.call_tool("list_bike_stations", args), await plain.call_tool("list_bike_stations", args)
            assert not a.is_error and a.structured_content == b.structured_content
            assert a.structured_content["records"] == page["records"]
            # the SDK still compiles, checks and caches its own validator; the fast check stands in front of it
            assert isinstance(fast.session._tool_output_validators["list_bike_stations"], Draft202012Validator)
            assert fast_output_checks(fast.session) is True  # a second call wraps nothing twice
            for broken in broken_pages(page):
                result = types.CallToolResult(content=[], structured_content=broken)
                messages = []
                for client in (fast, plain):
                    with pytest.raises(RuntimeError, match="Invalid structured content returned by tool") as raised:
                        await client.session.validate_tool_result("list_bike_stations", result)
                    messages.append(str(raised.value))
                assert messages[0] == messages[1]
    finally:
        await asyncio.to_thread(stack.close)


@contextlib.asynccontextmanager
async def plain_client(gateway):
    """The official client as a user's agent opens it (the SDK's output check alone)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (httpx2.AsyncClient(headers=gateway.headers, timeout=60) as http,
                Client(streamable_http_client(gateway.url, http_client=http)) as client):
        yield client


def test_the_benchmark_runs_with_the_fast_check(tmp_path):
    import json
    import subprocess

    out = tmp_path / "replay.json"
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "replay_speed.py"), "--smoke", "--transports",
                           "http", "--fast-output-check", "--json", str(out)], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    (figures,) = json.loads(out.read_text(encoding="utf-8"))
    assert figures["output_check"] == "fast" and len(figures["calls"]) == 27
    assert "streamable HTTP, fast output check" in done.stdout
