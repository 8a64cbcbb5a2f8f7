"""Input limits and argument checks in ToolRuntime: refused with a named parameter and limit, before any upstream call.

The runtime runs over the real catalog and platform clients against the sandbox app (in-process ASGI); the
transport under the clients counts the requests that reach the upstream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from mcp_gateway.catalog import load_catalog
from mcp_gateway.clients import ClientSet, PlatformURLs, SecretStore
from mcp_gateway.limits import DEFAULT_LIMITS, InputLimits, LimitExceeded
from mcp_gateway.runtime import Outcome
from mcp_gateway.runtime.runtime import ToolRuntime
from sandbox import PLATFORM_IDS, KeyStore

SCHOOLS = "search_school_info"  # edu: every filter is an optional string sent as a query parameter
STATIONS = "get_subway_ridership_by_station"  # seoul: filters are URL path segments


class CountingTransport(httpx.AsyncBaseTransport):
    """The sandbox's ASGI transport, recording every URL the clients send upstream."""

    def __init__(self, app) -> None:
        self.inner, self.urls = httpx.ASGITransport(app), []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        return await self.inner.handle_async_request(request)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture
def upstream(sandbox_app) -> CountingTransport:
    return CountingTransport(sandbox_app)


@pytest.fixture
async def clients(upstream: CountingTransport, keys: KeyStore) -> AsyncIterator[ClientSet]:
    secrets = SecretStore({p: keys.first(p) for p in PLATFORM_IDS})
    async with ClientSet(PlatformURLs.sandbox("http://sandbox"), transport=upstream, secrets=secrets) as cs:
        yield cs


def runtime_with(catalog, clients: ClientSet, **limits: int) -> ToolRuntime:
    return ToolRuntime(catalog, clients, clients.ctx.secrets, limits=InputLimits(**limits))


async def test_a_megabyte_string_is_refused_naming_the_parameter_and_the_limit(catalog, clients, upstream) -> None:
    result = await runtime_with(catalog, clients).call(SCHOOLS, {"SCHUL_NM": "가" * 1_000_000}, "s")
    assert result.outcome is Outcome.SCHEMA_MISMATCH
    assert result.message == (f"{SCHOOLS}: parameter 'SCHUL_NM' is 1,000,000 characters long; the limit is 4,096 "
                              "(setting KOPA_GATEWAY__LIMITS__MAX_STRING_CHARS). Send a shorter value.")
    assert upstream.urls == []


async def test_the_whole_arguments_size_is_limited_even_when_every_string_fits(catalog, clients, upstream) -> None:
    runtime = runtime_with(catalog, clients, max_string_chars=100, max_arguments_bytes=200)
    args = {"SCHUL_NM": "a" * 90, "LCTN_SC_NM": "b" * 90, "SD_SCHUL_CODE": "c" * 90}
    result = await runtime.call(SCHOOLS, args, "s")
    assert result.outcome is Outcome.SCHEMA_MISMATCH
    assert result.message == (f"{SCHOOLS}: the arguments are 320 bytes as JSON; the limit is 200 bytes "
                              "(setting KOPA_GATEWAY__LIMITS__MAX_ARGUMENTS_BYTES). Send shorter values.")
    assert upstream.urls == []


async def test_arguments_at_the_default_limits_reach_the_upstream(catalog, clients, upstream) -> None:
    """The largest string a default call may carry, in Korean (9 URL characters each), still makes a valid URL."""
    result = await runtime_with(catalog, clients).call(SCHOOLS, {"SCHUL_NM": "가" * DEFAULT_LIMITS.max_string_chars},
                                                       "s")
    assert result.outcome is Outcome.SEMANTIC_SUCCESS and result.total_count == 0
    assert len(upstream.urls) == 1 and len(upstream.urls[0]) > 9 * DEFAULT_LIMITS.max_string_chars


async def test_a_url_the_http_client_refuses_is_a_schema_mismatch_not_an_internal_error(catalog, clients,
                                                                                       upstream) -> None:
    """Regression: raised limits let a 30,000-character value through; httpx raised InvalidURL ('uncategorized')."""
    runtime = runtime_with(catalog, clients, max_string_chars=100_000, max_arguments_bytes=1_000_000)
    result = await runtime.call(SCHOOLS, {"SCHUL_NM": "가" * 30_000}, "s")
    assert result.outcome is Outcome.SCHEMA_MISMATCH
    assert result.message == ("the arguments make a request the HTTP client refuses (URL component 'query' too long); "
                              "send shorter values")
    assert upstream.urls == []


@pytest.mark.parametrize(("args", "message"), [
    ({"SCHUL_NM": 5}, "parameter 'SCHUL_NM' expects string, got integer 5"),
    ({"SCHUL_NM": ["x"] * 100_000}, "parameter 'SCHUL_NM' expects string, got array of 100,000 items"),
    ({"numOfRows": "x" * 50_000}, "parameter 'numOfRows' expects integer, got string 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'… "
                                  "(50,000 characters)"),
    ({"numOfRows": True}, "parameter 'numOfRows' expects integer, got boolean True"),
    ({"pageNo": 2 ** 70}, "parameter 'pageNo' must fit in a 64-bit integer; got an integer of 71 bits"),
    ({"SCHUL_NM": "a\ud800b"}, "parameter 'SCHUL_NM' is not valid Unicode text (lone surrogate '\\ud800' at index 1); "
                               "send UTF-8 text"),
])
async def test_wrong_types_and_unsendable_values_are_named_and_never_echoed_whole(catalog, clients, upstream, args,
                                                                                  message) -> None:
    """Wrong types are reported as wrong types (even when oversized), with a bounded picture of the value."""
    result = await runtime_with(catalog, clients).call(SCHOOLS, args, "s")
    assert (result.outcome, result.message) == (Outcome.SCHEMA_MISMATCH, f"{SCHOOLS}: {message}")
    assert upstream.urls == []


async def test_a_huge_tool_name_is_refused_without_a_lookup_or_an_echo(catalog, clients) -> None:
    result = await runtime_with(catalog, clients).call("x" * 1_000_000, {}, "s")
    assert result.outcome is Outcome.SCHEMA_MISMATCH and len(result.tool) == 128
    assert result.message == ("unknown tool: the name is 1,000,000 characters long; tool names are strings of at "
                              "most 128 characters")


async def test_a_dot_segment_value_stays_one_seoul_path_segment(catalog, clients, upstream) -> None:
    """Regression (found by fuzzing): '..' as a path filter was normalised away, hitting another upstream path."""
    result = await runtime_with(catalog, clients).call(STATIONS, {"USE_DT": "20240101", "SUB_STA_NM": ".."}, "s")
    assert result.outcome is Outcome.SEMANTIC_SUCCESS and result.total_count == 0
    assert upstream.urls[-1].endswith("/%2E%2E") and f"/{catalog.get(STATIONS).endpoint.path}/" in upstream.urls[-1]


def test_arrays_and_nested_values_are_limited_by_their_path() -> None:
    limits = InputLimits(max_array_items=3, max_string_chars=5)
    limits.check_arguments("t", {"ids": [1, 2, 3], "deep": {"a": ["12345"]}})
    with pytest.raises(LimitExceeded, match=r"^t: parameter 'ids' has 4 items; the limit is 3 "
                                            r"\(setting KOPA_GATEWAY__LIMITS__MAX_ARRAY_ITEMS\)") as too_many:
        limits.check_arguments("t", {"ids": [1, 2, 3, 4]})
    with pytest.raises(LimitExceeded, match=r"parameter 'deep\.a\[1\]' is 6 characters long") as too_long:
        limits.check_arguments("t", {"deep": {"a": ["ok", "123456"]}})
    assert (too_many.value.parameter, too_many.value.limit) == ("ids", "max_array_items")
    assert (too_long.value.parameter, too_long.value.limit) == ("deep.a[1]", "max_string_chars")


def test_limits_are_settings_with_named_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from appliance.config import KopaSettings

    monkeypatch.chdir(tmp_path)  # no kopa.toml
    monkeypatch.delenv("KOPA_CONFIG", raising=False)

    assert KopaSettings().gateway.limits == DEFAULT_LIMITS == InputLimits(
        max_string_chars=4_096, max_arguments_bytes=16_384, max_array_items=256, max_request_bytes=1_048_576)
    monkeypatch.setenv("KOPA_GATEWAY__LIMITS__MAX_STRING_CHARS", "2000")
    monkeypatch.setenv("KOPA_GATEWAY__LIMITS__MAX_REQUEST_BYTES", "65536")
    limits = KopaSettings().gateway.limits
    assert (limits.max_string_chars, limits.max_request_bytes) == (2000, 65536)
