"""Property-based fuzzing of the gateway (Hypothesis): tool arguments from and around each tool's inputSchema, and
random JSON-RPC messages.

Real parts: the committed catalog, ToolRuntime, the platform clients and the sandbox upstream (the cached test
world, in-process); the official MCP client in memory for tool arguments; raw HTTP to the gateway app on loopback
(uvicorn in the same process) for JSON-RPC messages the SDK client would never send. A fixed, seeded sample of
tools covers every platform. Runs are derandomized, so CI sees the same examples every time; ``hypothesis.event``
tags each example with its outcome (``--hypothesis-show-statistics`` shows the mix).

Invariants: a tool call always ends as a tool result whose ``outcome`` is a Table 7 class that agrees with
``isError`` (never an exception, never ``uncategorized``: every input here is one the gateway can validate), with a
bounded message; any HTTP message gets a JSON-RPC answer or an empty 202, never a 5xx.
"""

from __future__ import annotations

import functools
import json
import os
import random
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from mcp import Client

from mcp_gateway.catalog import Catalog, load_catalog
from mcp_gateway.gateway import open_gateway
from mcp_gateway.limits import DEFAULT_LIMITS
from mcp_gateway.runtime import Outcome
from mcp_gateway.runtime.runtime import PROFILES
from mcp_gateway.server import ToolSet, build_mcp_server, create_gateway_app
from sandbox.loopback import free_port
from tests.conftest import TEST_DATA_DIR, sandbox_upstream

SEED = 17
TOOLS_PER_PLATFORM = 3
# CI: 100 derandomized examples per property. KOPA_FUZZ_EXAMPLES=5000 runs a deeper, random search (pytest's
# --hypothesis-seed=N repeats one).
DEEP = os.environ.get("KOPA_FUZZ_EXAMPLES")
FUZZ = settings(max_examples=int(DEEP or 100), deadline=None, derandomize=not DEEP, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
OUTCOMES = {o.value: o for o in Outcome}
MAX_MESSAGE = 1_000  # a refusal repeats at most a bounded picture of the input
TOKEN = "fuzz-token"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "Authorization": f"Bearer {TOKEN}", "MCP-Protocol-Version": "2025-11-25"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}}


def sampled_tools(catalog: Catalog) -> list[str]:
    """A fixed, seeded sample: a few tools of every platform (and of the built-ins)."""
    by_platform: dict[str, list[str]] = defaultdict(list)
    for spec in catalog.tools.values():
        by_platform[spec.platform].append(spec.name)
    rng = random.Random(SEED)
    return [name for platform in sorted(by_platform)
            for name in sorted(rng.sample(sorted(by_platform[platform]), min(TOOLS_PER_PLATFORM,
                                                                             len(by_platform[platform]))))]


@functools.cache
def catalog() -> Catalog:
    return load_catalog()  # on first use, not at collection: every xdist worker collects this module


@functools.cache
def schemas() -> dict[str, dict[str, Any]]:
    """The sampled tools' input schemas as the chat profile lists them."""
    return {name: catalog().tools[name].input_schema(include_generic=PROFILES["chat"])
            for name in sampled_tools(catalog())}


# ---- strategies -----------------------------------------------------------------------------------

_limit = DEFAULT_LIMITS.max_string_chars
SPECIAL_STRINGS = ["", " ", ".", "..", "/", "a/b", "../..", "%", "%2F", "?x=1", "#", "&a=b", "\x00", "\n", "'", '"',
                   "\\", "가", "🙂", "\u200b", "0", "-1", "1e309", "null", "<x/>", "\ud800", "a\udfffb"]
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=10)
any_code_points = st.characters(categories=["L", "N", "P", "S", "Z", "C"])  # lone surrogates (Cs) included
strings = st.one_of(st.text(max_size=24), st.text(any_code_points, max_size=6), st.sampled_from(SPECIAL_STRINGS),
                    st.builds(lambda ch, n: ch * n, st.sampled_from(["a", "가", "%"]),
                              st.sampled_from([_limit - 1, _limit, _limit + 1, 3 * _limit])))
integers = st.one_of(st.integers(-3, 120), st.sampled_from([0, -1, 2**31, 2**63 - 1, 2**63, -2**63 - 1, 10**30]),
                     st.integers())


def typed_value(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value of the declared type (an enum member half the time where there is an enum)."""
    right = {"string": strings, "integer": integers, "number": st.floats() | integers, "boolean": st.booleans()}
    values = right[prop["type"]]
    return st.sampled_from(prop["enum"]) | values if "enum" in prop else values


def arguments_around(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments from the schema (required ones present, every value typed) or around it: each property absent,
    typed or any JSON value, sometimes with an unknown key."""
    props, required = schema["properties"], set(schema.get("required", ()))
    fitting = st.fixed_dictionaries({name: typed_value(props[name]) for name in required},
                                    optional={name: typed_value(p) for name, p in props.items() if name not in required})
    known = st.fixed_dictionaries({}, optional={name: st.one_of(typed_value(p), typed_value(p), json_values)
                                                for name, p in props.items()})
    extra = st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in props), json_values, max_size=2)
    around = st.tuples(known, st.one_of(st.just({}), st.just({}), extra)).map(lambda pair: {**pair[1], **pair[0]})
    return st.one_of(fitting, around)


tool_calls = st.deferred(lambda: st.sampled_from(sorted(schemas())).flatmap(
    lambda name: st.tuples(st.just(name), arguments_around(schemas()[name]))))


# ---- the server, in process: in-memory clients, and the HTTP app on loopback in the same event loop --------

@dataclass
class Served:
    direct: Client  # in memory, the sampled tools listed as they are
    search: Client  # in memory, the same tools behind search_tools / call_tool
    http: httpx.Client  # raw HTTP to the gateway app on loopback
    headers: dict[str, str]  # with the Mcp-Session-Id of one initialized session


@asynccontextmanager
async def served() -> AsyncIterator[tuple[Client, Client, str]]:
    """One runtime behind everything; uvicorn runs in this loop, so the runtime's clients never change loops."""
    gateway = open_gateway(upstream="sandbox", sandbox=sandbox_upstream(), home=TEST_DATA_DIR, catalog=catalog())
    pins = ("evaluate_expression",)  # the health check after the fuzz
    tools = tuple(schemas())
    sample, searched = ToolSet("all", tools, pinned=pins), ToolSet("search", tools, "search", pins)
    app = create_gateway_app(gateway.runtime, tokens={TOKEN}, toolsets={"all": sample, "search": searched})
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    async with (gateway, anyio.create_task_group() as tasks,
                Client(build_mcp_server(gateway.runtime, sample)) as direct,
                Client(build_mcp_server(gateway.runtime, searched)) as search):
        tasks.start_soon(server.serve)
        while not server.started:
            await anyio.sleep(0.01)
        yield direct, search, f"http://127.0.0.1:{port}"
        server.should_exit = True


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    """An event loop in a thread: Hypothesis drives synchronous tests, the clients stay open across examples."""
    with start_blocking_portal() as portal:
        yield portal


@pytest.fixture(scope="module")
def gateway(portal: BlockingPortal) -> Iterator[Served]:
    with (portal.wrap_async_context_manager(served()) as (direct, search, origin),
          httpx.Client(base_url=origin, timeout=30) as http):
        yield Served(direct, search, http, open_session(http))
        # Whatever the fuzz sent, a new session still works end to end.
        answer = http.post("/mcp", headers=open_session(http), json={
            "jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "evaluate_expression", "arguments": {"expression": "6*7"}}}).json()
        assert answer["result"]["structuredContent"]["records"][0]["value"] == "42"


def open_session(http: httpx.Client) -> dict[str, str]:
    opened = http.post("/mcp", json=INIT, headers=MCP_HEADERS)
    headers = {**MCP_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    assert http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                     headers=headers).status_code == 202
    return headers


def assert_tool_result(structured: Any, is_error: bool | None, text: str | None = None) -> Outcome:
    """The tool-result invariant; returns the outcome."""
    assert isinstance(structured, dict) and structured.get("outcome") in OUTCOMES, structured
    outcome = OUTCOMES[structured["outcome"]]
    event(outcome.value)
    assert bool(is_error) is not outcome.ok, structured
    assert outcome is not Outcome.UNCATEGORIZED, structured
    assert len(structured.get("message") or "") <= MAX_MESSAGE, structured["message"][:300]
    if text is not None:
        assert json.loads(text) == structured
    return outcome


@FUZZ
@given(call=tool_calls, via_search=st.booleans())
@example(call=("search_school_info", {"SCHUL_NM": "가" * 1_000_000}), via_search=False)  # issue 17: InvalidURL
@example(call=("search_school_info", {"SCHUL_NM": "\ud800"}), via_search=True)  # was UnicodeEncodeError
@example(call=("remove_from_watchlist", {"list_name": "a" * 4_000, "item": ""}), via_search=False)  # echoed whole
def test_any_arguments_end_as_a_classified_tool_result(gateway: Served, portal: BlockingPortal,
                                                       call: tuple[str, dict[str, Any]], via_search: bool) -> None:
    name, args = call
    if via_search:
        result = portal.call(lambda: gateway.search.call_tool("call_tool", {"name": name, "arguments": args}))
    else:
        result = portal.call(lambda: gateway.direct.call_tool(name, args))
    assert_tool_result(result.structured_content, result.is_error, result.content[0].text)  # type: ignore[union-attr]


@FUZZ
@given(args=st.one_of(st.dictionaries(st.sampled_from(["query", "limit", "name", "arguments", "x"]),
                                      st.one_of(strings, integers, json_values), max_size=3),
                      st.dictionaries(st.text(max_size=6), json_values, max_size=3)),
       tool=st.sampled_from(["search_tools", "call_tool"]))
def test_the_search_mode_meta_tools_classify_any_arguments(gateway: Served, portal: BlockingPortal,
                                                           args: dict[str, Any], tool: str) -> None:
    result = portal.call(lambda: gateway.search.call_tool(tool, args))
    if result.is_error or tool == "call_tool":
        assert_tool_result(result.structured_content, result.is_error, result.content[0].text)  # type: ignore[union-attr]
    else:
        assert isinstance(result.structured_content["tools"], list)  # type: ignore[index]


# ---- raw JSON-RPC over HTTP -------------------------------------------------------------------------

METHODS = ["initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read", "prompts/list",
           "prompts/get", "completion/complete", "logging/setLevel", "server/discover", "notifications/initialized",
           "notifications/cancelled", "notifications/progress", "no/such/method"]
ids = st.one_of(st.integers(-2**31, 2**31), st.text(max_size=6), st.none(), st.floats(allow_nan=False,
                allow_infinity=False), st.lists(st.integers(), max_size=2))
http_strings = strings.filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s))  # JSON text is UTF-8
tools_call = st.deferred(lambda: st.fixed_dictionaries({
    "jsonrpc": st.just("2.0"), "id": st.integers(1, 10**6), "method": st.just("tools/call"),
    "params": st.fixed_dictionaries({"name": st.sampled_from(sorted(schemas())) | http_strings},
                                    optional={"arguments": st.dictionaries(st.sampled_from(
                                        sorted({p for s in schemas().values() for p in s["properties"]})),
                                        st.one_of(http_strings, st.integers(-10**20, 10**20), json_values),
                                        max_size=4) | json_values})}))
shaped = st.fixed_dictionaries({}, optional={
    "jsonrpc": st.sampled_from(["2.0", "1.0"]) | json_scalars, "id": ids,
    "method": st.sampled_from(METHODS) | st.text(max_size=16), "params": st.dictionaries(
        st.sampled_from(["name", "arguments", "cursor", "uri", "level", "_meta", "protocolVersion"]), json_values,
        max_size=3) | json_values,
    "result": json_values, "error": json_values})
messages = st.one_of(tools_call, tools_call, shaped, st.lists(shaped, max_size=3), json_values)
json_bodies = messages.map(lambda m: json.dumps(m, ensure_ascii=False).encode())
bodies = st.one_of(json_bodies, json_bodies, json_bodies, st.binary(max_size=48), st.sampled_from([b"", b"{", b"\xff\xfe", b'{"jsonrpc":"2.0"',
                                                            b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
                                                            b'"params":{"name":"a","arguments":{"q":"\\ud800"}}}']))


def assert_jsonrpc_answer(answer: Any, sent: Any) -> None:
    assert isinstance(answer, dict) and answer.get("jsonrpc") == "2.0", answer
    assert ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        assert isinstance(answer["error"]["code"], int) and isinstance(answer["error"]["message"], str), answer
        return
    if isinstance(sent, dict) and sent.get("method") == "tools/call":
        result = answer["result"]
        assert_tool_result(result.get("structuredContent"), result.get("isError"))


@FUZZ
@given(body=bodies, with_session=st.sampled_from([True, True, True, False]))
def test_any_http_message_gets_a_jsonrpc_answer_and_never_a_server_error(
        gateway: Served, body: bytes, with_session: bool) -> None:
    headers = gateway.headers if with_session else MCP_HEADERS
    response = gateway.http.post("/mcp", content=body, headers=headers)
    event(f"http {response.status_code}")
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code == 202 or not response.content:
        return
    assert response.headers["content-type"].startswith("application/json"), response.headers
    answer = response.json()
    try:
        sent = json.loads(body)
    except ValueError:
        sent = None
    for item in answer if isinstance(answer, list) else [answer]:
        assert_jsonrpc_answer(item, sent)
