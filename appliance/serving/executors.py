"""Who runs the agent endpoint's tool calls: the gateway (chat clients) or a benchmark episode.

    executor = GatewayExecutor(gateway.runtime)                 # chat profile: keys injected, audit logged
    executor = EpisodeExecutor()                                # `kopa bench run --agent endpoint`
    sid = executor.register(context.call)                       # the episode's harness records every call

An executor offers the tools a request may use (``tools``), opens a session per request (``begin``), runs one
call (``call``) and closes the session (``end``). A tool failure is a ``ToolResult`` with its outcome class,
never an exception; only a request that names no usable tools or session is a ``RequestError``.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from bench.agents.base import CallTool
from mcp_gateway.catalog.export import to_openai_function
from mcp_gateway.runtime import Outcome, ToolResult
from mcp_gateway.server import Telemetry
from mcp_gateway.server.telemetry import CallRecord

__all__ = ["EpisodeExecutor", "GatewayExecutor", "RequestError", "ToolExecutor"]

logger = logging.getLogger(__name__)
TOOLSET = "agent-endpoint"  # the audit line's toolset: calls made by the endpoint's server-side loop


class RequestError(ValueError):
    """A chat request the endpoint cannot serve (HTTP 400, 413 for a body over the limit); the message names the
    field and the fix, ``param`` the field (OpenAI's error ``param``: ``"messages[2].role"``, None for the whole
    body) and ``code`` the kind of mistake (``"invalid_type"``, ``"invalid_value"``, ...)."""

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.param, self.code, self.status = param, code, status


class ToolExecutor(Protocol):
    def tools(self, requested: Sequence[Any] | None, kopa: Mapping[str, Any]) -> list[dict[str, Any]]: ...

    def begin(self, kopa: Mapping[str, Any]) -> str: ...

    async def call(self, session: str, tool: str, args: Any) -> ToolResult: ...

    def end(self, session: str) -> None: ...


def _requested_names(requested: Sequence[Any] | None, kopa: Mapping[str, Any]) -> list[str] | None:
    """Tool names from the request's ``tools`` entries (or ``kopa.tools``: plain names); None when it names none."""
    names = kopa.get("tools")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise RequestError("kopa.tools must be a list of tool names")
        return names
    if not requested:
        return None
    out = []
    for i, entry in enumerate(requested):
        function = entry.get("function") if isinstance(entry, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str) or not name:
            raise RequestError(f"tools[{i}] has no function.name; give OpenAI tools entries or kopa.tools names")
        out.append(name)
    return out


class GatewayExecutor:
    """Tool calls through the appliance's ``ToolRuntime``: the catalog's schemas under the runtime's profile
    (chat: keys injected, never shown), one fresh workspace session per request, an audit line per call."""

    def __init__(self, runtime: Any, *, default_tools: Sequence[str] = (), telemetry: Telemetry | None = None) -> None:
        self.runtime = runtime
        self.default_tools = tuple(default_tools)
        self.telemetry = telemetry or Telemetry()
        for name in self.default_tools:
            self._spec(name)

    def _spec(self, name: str) -> Any:
        try:
            return self.runtime.catalog.get(name)
        except KeyError as exc:  # the catalog's message lists the nearest names
            raise RequestError(str(exc.args[0] if exc.args else exc)) from None

    def tools(self, requested: Sequence[Any] | None, kopa: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The catalog's definitions of the tools the request names (its schemas are not trusted), or the
        endpoint's default tools."""
        names = _requested_names(requested, kopa)
        names = list(self.default_tools) if names is None else names
        return [to_openai_function(self._spec(n), self.runtime.profile) for n in dict.fromkeys(names)]

    def begin(self, kopa: Mapping[str, Any]) -> str:
        return f"agent-{uuid.uuid4().hex}"

    async def call(self, session: str, tool: str, args: Any) -> ToolResult:
        started = time.perf_counter()
        correlation = uuid.uuid4().hex
        try:
            result = await self.runtime.call(tool, args, session)
        except Exception as exc:  # noqa: BLE001 - a runtime bug is a visible failure; the endpoint stays up
            logger.error("runtime.call raised %s for tool %s (correlation %s)", type(exc).__name__, tool, correlation)
            result = ToolResult(tool=tool, outcome=Outcome.UNCATEGORIZED,
                                message=f"internal gateway error (correlation id {correlation}); the call was not "
                                        "completed")
        correlation = result.correlation_id or correlation
        try:
            platform = self.runtime.catalog.get(tool).platform
        except KeyError:
            platform = "unknown"
        self.telemetry.record(CallRecord(
            correlation_id=correlation, session_id=session, toolset=TOOLSET, tool=tool, platform=platform,
            outcome=result.outcome, upstream_code=result.upstream_code, latency_s=time.perf_counter() - started,
            request_id=None, upstream=result.upstream))
        return result.model_copy(update={"correlation_id": correlation})

    def end(self, session: str) -> None:
        self.runtime.reset_session(session)


class EpisodeExecutor:
    """Tool calls of benchmark episodes: each request names (``kopa.session``) an episode registered here, whose
    harness runs and records the call; the tools are the episode's own, as the request sends them."""

    def __init__(self) -> None:
        self._episodes: dict[str, CallTool] = {}

    def register(self, call: CallTool) -> str:
        session = f"episode-{uuid.uuid4().hex}"
        self._episodes[session] = call
        return session

    def unregister(self, session: str) -> None:
        self._episodes.pop(session, None)

    def tools(self, requested: Sequence[Any] | None, kopa: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [dict(t) for t in requested or ()]

    def begin(self, kopa: Mapping[str, Any]) -> str:
        session = kopa.get("session")
        if not isinstance(session, str) or session not in self._episodes:
            raise RequestError("kopa.session must name an episode registered with this endpoint's EpisodeExecutor")
        return session

    async def call(self, session: str, tool: str, args: Any) -> ToolResult:
        return await self._episodes[session](tool, args)

    def end(self, session: str) -> None:
        pass
