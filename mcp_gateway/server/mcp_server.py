"""The MCP server: a thin adapter from the SDK's low-level ``Server`` onto the ToolRuntime.

Every tool call, whatever happens upstream, ends as a visible ``CallToolResult`` carrying
its Table 7 outcome (``isError`` for failures): a model learns from a failed call only if it
sees it, so failures are never JSON-RPC errors. Only protocol misuse (an invalid
``tools/list`` cursor) is. The same ``Server`` is served over streamable HTTP
(``http_app``) and stdio (``stdio``).
"""

from __future__ import annotations

import base64
import binascii
import difflib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Protocol

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request

from ..catalog.spec import TOOL_NAME_MAX, ToolSpec
from ..clients.replay_cache import EncodedResult, ResultCache
from ..limits import InputLimits, LimitExceeded
from ..runtime.result import Outcome, ToolResult
from ..runtime.validation import describe
from .search import NgramIndex
from .telemetry import CallRecord, Telemetry
from .toolset import CatalogLike, ToolSet

logger = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 100
CORRELATION_META_KEY = "kopa/correlationId"
SEARCH_TOOL, CALL_TOOL = "search_tools", "call_tool"
SEARCH_LIMIT_MAX = 50
_NEEDS_SESSION = ("the KOPA gateway keeps per-session workspace state: connect with the initialize handshake "
                  f"(protocol {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}) and send Mcp-Session-Id")


class RuntimeProtocol(Protocol):
    """What the server needs from ``mcp_gateway.runtime.ToolRuntime``."""

    catalog: CatalogLike
    profile: str
    limits: InputLimits  # the runtime enforces them on every call; the server on its own meta-tools

    def input_schema(self, spec: ToolSpec) -> dict[str, Any]:
        """The arguments' schema as this profile shows it (the runtime validates against the same)."""
        ...

    async def call(self, tool: str, args: dict[str, Any], session_id: str) -> ToolResult: ...

    def reset_session(self, session_id: str) -> None: ...


def mcp_tool(spec: ToolSpec, runtime: RuntimeProtocol) -> types.Tool:
    """A catalog tool as MCP lists it under ``runtime``'s profile."""
    return types.Tool(name=spec.name, description=spec.description_ko, input_schema=runtime.input_schema(spec),
                      output_schema=spec.output_schema(),
                      annotations=types.ToolAnnotations.model_validate(spec.annotations()))


class ListedTools:
    """Each catalog tool as MCP lists it under one runtime's profile, built on first use and shared by every tool set
    of that runtime: a tool is listed in ``all``, in its platform's set and in its domain's set, and building its
    schemas was most of the gateway's start-up."""

    def __init__(self, runtime: RuntimeProtocol) -> None:
        self.runtime = runtime
        self._tools: dict[str, types.Tool] = {}

    def get(self, spec: ToolSpec) -> types.Tool:
        tool = self._tools.get(spec.name)
        if tool is None:
            tool = self._tools[spec.name] = mcp_tool(spec, self.runtime)
        return tool


_META_TOOLS = (
    types.Tool(
        name=SEARCH_TOOL,
        description="이 서버의 도구를 한국어 설명으로 검색합니다. 질문의 핵심어(예: '전환사채 발행 결정', '학급 학생 수')로 "
                    "찾은 도구의 이름, 설명, 입력 스키마를 점수 순으로 돌려줍니다. 찾은 도구는 call_tool로 호출하세요.",
        input_schema={"type": "object", "additionalProperties": False, "required": ["query"], "properties": {
            "query": {"type": "string", "description": "찾을 기능을 설명하는 검색어"},
            "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_LIMIT_MAX, "default": 10,
                      "description": "돌려줄 도구 수"}}},
        output_schema={"type": "object", "required": ["tools"], "properties": {"tools": {"type": "array", "items": {
            "type": "object", "required": ["name", "description", "inputSchema", "score"], "properties": {
                "name": {"type": "string"}, "description": {"type": "string"}, "inputSchema": {"type": "object"},
                "score": {"type": "number"}}}}}},
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    ),
    types.Tool(
        name=CALL_TOOL,
        description="search_tools로 찾은 도구를 이름과 인자로 호출하고 그 도구의 결과를 그대로 돌려줍니다.",
        input_schema={"type": "object", "additionalProperties": False, "required": ["name"], "properties": {
            "name": {"type": "string", "description": "호출할 도구 이름"},
            "arguments": {"type": "object", "description": "그 도구의 입력 스키마에 맞는 인자", "default": {}}}},
        annotations=types.ToolAnnotations(read_only_hint=False, open_world_hint=True),
    ),
)


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"kopa:{offset}".encode()).decode()


def decode_cursor(cursor: str, total: int) -> int:
    """The offset a cursor from ``encode_cursor`` stands for; anything else is INVALID_PARAMS."""
    try:
        prefix, _, offset_text = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        offset = int(offset_text)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        offset, prefix = -1, ""
    if prefix != "kopa" or not 0 < offset < total:
        raise MCPError(code=types.INVALID_PARAMS, message=f"invalid tools/list cursor {cursor[:64]!r}")
    return offset


def encode(structured: dict[str, Any], *, is_error: bool) -> EncodedResult:
    """Structured content plus the same as compact JSON text, for clients that read only text.

    The MCP spec (2025-06-18 on): a tool with an output schema MUST return structured content that conforms
    to it, and SHOULD also return it serialized as JSON in a text block for backwards compatibility. Both are
    kept: many clients show a model only the text.
    """
    return EncodedResult(structured, json.dumps(structured, ensure_ascii=False, separators=(",", ":")), is_error)


def _call_result(encoded: EncodedResult, meta: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=encoded.text)],
                                structured_content=encoded.structured, is_error=encoded.is_error, meta=meta)


def _content(structured: dict[str, Any], *, is_error: bool, meta: dict[str, Any] | None = None) -> types.CallToolResult:
    return _call_result(encode(structured, is_error=is_error), meta)


def _failure(tool: str, outcome: Outcome, message: str) -> ToolResult:
    return ToolResult(tool=tool, outcome=outcome, message=message)


_META_JSON_TYPES = {"string": (str,), "integer": (int,), "object": (dict,)}


def check_meta_arguments(tool: types.Tool, args: dict[str, Any], limits: InputLimits) -> ToolResult | None:
    """A search-mode meta-tool's arguments against its own inputSchema and the input limits; None when they fit.

    Missing is MISSING_FIELD; a wrong type, an unknown name, a value out of range or over a limit is
    SCHEMA_MISMATCH, each named. ``call_tool``'s inner arguments are the runtime's to check.
    """
    schema, name = tool.input_schema, tool.name
    props: dict[str, Any] = schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        return _failure(name, Outcome.SCHEMA_MISMATCH, f"{name}: unknown parameter(s) "
                        f"{', '.join(repr(u[:40]) for u in unknown[:10])}; this tool takes: {', '.join(props)}")
    for param in schema.get("required", []):
        if args.get(param) is None or args[param] == "" or isinstance(args[param], str) and not args[param].strip():
            return _failure(name, Outcome.MISSING_FIELD, f"{name}: missing required parameter {param!r} "
                            f"({props[param]['type']}: {props[param]['description']})")
    for param, value in args.items():
        expected = props[param]["type"]
        if isinstance(value, bool) or not isinstance(value, _META_JSON_TYPES[expected]):
            return _failure(name, Outcome.SCHEMA_MISMATCH,
                            f"{name}: parameter {param!r} expects {expected}, got {describe(value)}")
        low, high = props[param].get("minimum"), props[param].get("maximum")
        if expected == "integer" and (low is not None and value < low or high is not None and value > high):
            return _failure(name, Outcome.SCHEMA_MISMATCH,
                            f"{name}: parameter {param!r} must be an integer from {low} to {high}; got {describe(value)}")
    strings = {k: v for k, v in args.items() if props[k]["type"] == "string"}  # objects go on to the runtime
    try:
        limits.check_arguments(name, strings)
    except LimitExceeded as exc:
        return _failure(name, Outcome.SCHEMA_MISMATCH, str(exc))
    return None


_META_BY_NAME = {t.name: t for t in _META_TOOLS}


class GatewayHandlers:
    """The ``tools/list`` and ``tools/call`` handlers of one tool set."""

    def __init__(self, runtime: RuntimeProtocol, toolset: ToolSet, *, page_size: int, telemetry: Telemetry,
                 results: ResultCache | None = None, listing: ListedTools | None = None,
                 deferred: list[Callable[[], Any]] | None = None) -> None:
        """``results`` / ``listing``: shared by the tool sets of one runtime (new ones when not given);
        ``deferred``: where a search set leaves the build of its index for the caller to run once it serves (the
        first search builds it if that has not happened yet); None: built here."""
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.runtime, self.toolset, self.page_size, self.telemetry = runtime, toolset, page_size, telemetry
        self.results = results if results is not None else ResultCache()  # replayed results, encoded once
        listing = listing if listing is not None else ListedTools(runtime)
        specs = toolset.resolve(runtime.catalog)
        self.specs = {s.name: s for s in specs}
        self.local_session = f"local-{uuid.uuid4().hex}"  # stdio / in-process: one client per server
        self._index: NgramIndex | None = None
        self._index_lock = threading.Lock()
        if toolset.mode == "search":
            clash = {t.name for t in _META_TOOLS} & set(self.specs)
            if clash:
                raise ValueError(f"tool set {toolset.name!r} has tools named like the search-mode tools: {clash}")
            pinned = [listing.get(self.specs[n]) for n in toolset.pinned]
            self.listed = [*_META_TOOLS, *pinned]
            if deferred is None:
                self.search_index()
            else:
                deferred.append(self.search_index)
        else:
            self.listed = [listing.get(s) for s in specs]

    def search_index(self) -> NgramIndex:
        """The search set's index over its tools' names and descriptions, built on first use (once)."""
        with self._index_lock:
            if self._index is None:
                self._index = NgramIndex([f"{s.name} {s.description_ko}" for s in self.specs.values()])
            return self._index

    async def list_tools(self, ctx: ServerRequestContext[Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        start = decode_cursor(cursor, len(self.listed)) if cursor else 0
        end = start + self.page_size
        return types.ListToolsResult(tools=self.listed[start:end],
                                     next_cursor=encode_cursor(end) if end < len(self.listed) else None)

    async def call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        if self.toolset.mode == "search" and params.name in _META_BY_NAME:
            refused = check_meta_arguments(_META_BY_NAME[params.name], args, self.runtime.limits)
            if refused is not None:
                return self._result(refused)
            if params.name == SEARCH_TOOL:
                return self._search(args)
            return await self._call_catalog(ctx, args["name"], args.get("arguments", {}))
        return await self._call_catalog(ctx, params.name, args)

    def _session_id(self, ctx: ServerRequestContext[Any]) -> str:
        """The MCP session (Mcp-Session-Id) on HTTP; the server's own local session on stdio and in-process."""
        if not isinstance(ctx.request, Request):
            return self.local_session
        session = ctx.request.headers.get(MCP_SESSION_ID_HEADER)
        if not session:  # sessionless HTTP would put every client in one workspace
            raise MCPError(code=types.INVALID_REQUEST, message=_NEEDS_SESSION)
        return session

    async def _call_catalog(self, ctx: ServerRequestContext[Any], name: str, args: dict[str, Any]) -> types.CallToolResult:
        session_id = self._session_id(ctx)
        spec = self.specs.get(name)
        correlation_id = uuid.uuid4().hex
        started = time.perf_counter()
        if spec is None and len(name) > TOOL_NAME_MAX:  # neither matched against every name nor echoed whole
            result = _failure(name[:TOOL_NAME_MAX], Outcome.SCHEMA_MISMATCH,
                              f"unknown tool: the name is {len(name):,} characters long; tool names have at most "
                              f"{TOOL_NAME_MAX} characters")
        elif spec is None:
            nearest = difflib.get_close_matches(name, self.specs, n=3, cutoff=0.0)
            result = _failure(name, Outcome.SCHEMA_MISMATCH,
                              f"unknown tool {name!r} in tool set {self.toolset.name!r}; nearest: {', '.join(nearest)}")
        else:
            try:
                result = await self.runtime.call(name, args, session_id)
            except Exception as exc:  # noqa: BLE001 - a runtime bug ends as a visible failure; server stays up
                # Type only: an exception's text may carry a URL with a key in it.
                logger.error("runtime.call raised %s for tool %s (correlation %s)",
                             type(exc).__name__, name, correlation_id)
                result = _failure(name, Outcome.UNCATEGORIZED,
                                  f"internal gateway error (correlation id {correlation_id}); the call was not completed")
        correlation_id = result.correlation_id or correlation_id  # the runtime's, when it tagged its upstream log
        result = result.model_copy(update={"correlation_id": correlation_id})
        self.telemetry.record(CallRecord(
            correlation_id=correlation_id, session_id=session_id, toolset=self.toolset.name,
            tool=result.tool, platform=spec.platform if spec else "unknown", outcome=result.outcome,
            upstream_code=result.upstream_code, latency_s=time.perf_counter() - started, request_id=ctx.request_id,
            upstream=result.upstream))
        return self._result(result)

    def _result(self, result: ToolResult) -> types.CallToolResult:
        meta = {CORRELATION_META_KEY: result.correlation_id} if result.correlation_id else None
        if result.replay_key is None:
            return _content(result.structured(), is_error=result.is_error, meta=meta)
        encoded = self.results.get_or_encode(result.replay_key,
                                             lambda: encode(result.structured(), is_error=result.is_error))
        return _call_result(encoded, meta)

    def _search(self, args: dict[str, Any]) -> types.CallToolResult:
        query, limit = args["query"], args.get("limit", 10)  # checked by check_meta_arguments
        specs = list(self.specs.values())
        hits = [{"name": specs[i].name, "description": specs[i].description_ko,
                 "inputSchema": self.runtime.input_schema(specs[i]), "score": round(score, 4)}
                for i, score in self.search_index().search(query, limit)]
        return _content({"tools": hits}, is_error=False)


def build_mcp_server(runtime: RuntimeProtocol, toolset: ToolSet, *, page_size: int = DEFAULT_PAGE_SIZE,
                     telemetry: Telemetry | None = None, results: ResultCache | None = None,
                     listing: ListedTools | None = None,
                     deferred: list[Callable[[], Any]] | None = None) -> Server[Any]:
    """A low-level MCP ``Server`` offering ``toolset`` of ``runtime``'s catalog.

    ``results``: where replayed results' encodings are kept, ``listing``: the tools as listed (one of each per
    runtime; new ones when not given); ``deferred``: see ``GatewayHandlers``."""
    handlers = GatewayHandlers(runtime, toolset, page_size=page_size, telemetry=telemetry or Telemetry(),
                               results=results, listing=listing, deferred=deferred)
    instructions = ("도구가 많아 검색 모드로 제공합니다: search_tools로 찾고 call_tool로 호출하세요."
                    if toolset.mode == "search" else None)
    server: Server[Any] = Server(f"kopa-gateway/{toolset.name}", version="0.1.0", instructions=instructions,
                                 on_list_tools=handlers.list_tools, on_call_tool=handlers.call_tool)
    _refuse_sessionless_http(server)
    return server


def _refuse_sessionless_http(server: Server[Any]) -> None:
    """Over HTTP, answer the 2026-07-28 ``server/discover`` probe with -32022 naming the handshake versions.

    That era has no HTTP sessions, and the gateway's workspace state is per session; clients
    in ``auto`` mode take the answer as a legacy advertisement and fall back to ``initialize``.
    stdio and in-process connections are one client each, so they keep the SDK's answer.
    """
    entry = server.get_request_handler("server/discover")
    if entry is None:
        raise RuntimeError("this mcp SDK registers no server/discover handler; check the pinned version")
    sdk_discover = entry.handler

    async def discover(ctx: ServerRequestContext[Any], params: types.RequestParams) -> Any:
        if isinstance(ctx.request, Request):
            raise MCPError(code=types.UNSUPPORTED_PROTOCOL_VERSION, message=_NEEDS_SESSION,
                           data={"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": ctx.protocol_version})
        return await sdk_discover(ctx, params)

    server.add_request_handler("server/discover", entry.params_type, discover)
