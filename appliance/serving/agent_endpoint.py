"""The agent endpoint: OpenAI-compatible ``/v1/chat/completions`` that runs the tool loop on the appliance.

    app = create_agent_app(model_config, GatewayExecutor(gateway.runtime), tokens={"s3cret"})
    # POST /v1/chat/completions {"messages": [...], "tools": [...], "stream": false}   (Bearer s3cret)

A request is one whole agent run: model → tool calls → gateway → model … until the model answers or the
budget is spent (``kopa.max_turns`` model turns, ``kopa.max_calls`` tool calls; by default the episode limits of the
model's configuration, ``[episode]`` in kopa.toml). The loop is the one agent step (``bench.agents.step``) as the
benchmark's ``openai`` agent plays it (``OpenAIAgent.converse``); the tool calls go to an executor (the gateway's
``ToolRuntime`` in the chat profile, or a benchmark episode). Tools: the request's ``tools`` entries name
them (the catalog's definitions are used, not the client's), or ``kopa.tools`` lists names, or the endpoint's
defaults apply. A forced ``tool_choice`` (a named function, ``required``) holds for the first model turn only.

The reply is a chat completion whose assistant message carries the extension field ``kopa``::

    {"trajectory": [{"turn", "call_id", "tool", "arguments", "outcome", "total_count", "records",
                     "message", "correlation_id"}, ...],
     "stop_reason": "answer" | "budget" | "no_answer", "turns": [...], "calls": N, "parser": "..."}

(streaming: the last chunk's ``choices[0].delta.kopa``). ``finish_reason`` is ``stop`` for an answer and
``length`` when the budget ran out. A tool call the model wrote but that cannot be read (malformed XML, an
unknown tool, arguments that are not JSON) is a trajectory step with its error, and the model is told; only
a failing model server is an HTTP error (502), and a bad request a 4xx, both in OpenAI's error shape
(``{"error": {"message", "type", "param", "code"}}``). A client's mistake is decided before the model server is
called (``request_checks``): a body over the limit is a 413, malformed JSON, an unknown role, a sampling setting
of the wrong type or out of range and a prompt longer than the model's context are a 400 whose ``param`` names
the field.
Bearer tokens as for ``/mcp``; ``/healthz`` is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, request_response

from bench.agents.llm_config import OpenAIAgentConfig
from bench.agents.openai_agent import EndpointError, OpenAIAgent, ToolCallRequest, TurnLimitReached
from bench.agents.step import BudgetSpent
from mcp_gateway.runtime import ToolResult
from mcp_gateway.server import StaticTokenVerifier
from mcp_gateway.text import scrub_surrogates
from models.toolcalls import ToolCallParser, choose_parser

from .executors import RequestError, ToolExecutor
from .request_checks import RequestLimits, check_request, read_body

if TYPE_CHECKING:
    from models.client import ChatClient

__all__ = ["AGENT_MODEL", "EXTENSION_FIELD", "AgentRun", "create_agent_app", "run_agent"]

AGENT_MODEL = "kopa-agent"
EXTENSION_FIELD = "kopa"
STREAM_PIECE = 16  # characters per content delta when an answer is streamed
KEEPALIVE_S = 10.0  # an SSE comment while the loop runs, so proxies keep a slow stream open


class _EndpointLoop(OpenAIAgent):
    """The benchmark's tool loop, its unreadable calls recorded as trajectory steps."""

    def __init__(self, config: OpenAIAgentConfig, parser: ToolCallParser, trajectory: list[dict[str, Any]]):
        super().__init__(config)
        self.parser, self.trajectory = parser, trajectory

    def tool_choice(self, turn: int) -> Any:
        # a forced tool (a named function, "required") holds for the first turn only: forced on every turn, the loop
        # could never end with an answer
        choice = self.config.tool_choice
        return choice if turn == 0 or choice in ("auto", "none") else "auto"

    def tool_calls(self, message: dict[str, Any], turn: int, tools: list[dict[str, Any]], *,
                   reader: ToolCallParser | None = None) -> list[ToolCallRequest]:
        # the bench agent's own reading (structured calls, else the calls in the text), with the endpoint's reader
        calls = super().tool_calls(message, turn, tools, reader=reader or self.parser)
        for call in calls:
            if call.problem is not None:  # unreadable: an error step of the trajectory, and the model is told
                self.trajectory.append({"turn": turn, "call_id": call.id, "tool": None, "arguments": None,
                                        "outcome": "malformed_tool_call", "message": call.problem})
        return calls


class AgentRun:
    """One request's run: the calls the agent step runs, and the trajectory the reply carries."""

    def __init__(self, executor: ToolExecutor, session: str) -> None:
        self.executor, self.session = executor, session
        self.trajectory: list[dict[str, Any]] = []
        self.turns: list[dict[str, Any]] = []
        self.calls = 0
        self._turn = 0

    def note_turn(self, turn: dict[str, Any]) -> None:
        self._turn = turn["turn"]
        self.turns.append({k: turn.get(k) for k in ("turn", "usage")} |
                          {"tool_calls": len(turn.get("tool_calls") or [])})

    def note_not_run(self, turn: int, call: ToolCallRequest, why: str) -> None:
        """A call the budget left unrun (the step told the model so): a trajectory step without a result."""
        self.trajectory.append({"turn": turn, "call_id": call.id, "tool": call.name, "arguments": call.arguments,
                                "outcome": "not_run", "message": why})

    async def call(self, tool: str, args: Any) -> ToolResult:
        self.calls += 1
        result = await self.executor.call(self.session, tool, args)
        self.trajectory.append({"turn": self._turn, "tool": tool, "arguments": args, "outcome": result.outcome.value,
                                "total_count": result.total_count, "records": len(result.records),
                                "message": result.message, "correlation_id": result.correlation_id})
        return result

    def usage(self) -> dict[str, int]:
        totals = {"prompt_tokens": 0, "completion_tokens": 0}
        for turn in self.turns:
            for key in totals:
                totals[key] += int((turn.get("usage") or {}).get(key) or 0)
        return totals | {"total_tokens": totals["prompt_tokens"] + totals["completion_tokens"]}


def _request_config(base: OpenAIAgentConfig, body: Mapping[str, Any], kopa: Mapping[str, Any]) -> OpenAIAgentConfig:
    update: dict[str, Any] = {}
    for field in ("temperature", "max_tokens", "tool_choice"):
        if body.get(field) is not None:
            update[field] = body[field]
    if "max_tokens" not in update and body.get("max_completion_tokens") is not None:  # the newer name
        update["max_tokens"] = body["max_completion_tokens"]
    for field in ("max_turns", "max_calls"):
        if kopa.get(field) is not None:
            update[field] = kopa[field]
    try:
        return OpenAIAgentConfig.model_validate(base.model_dump() | update)
    except ValidationError as exc:  # the field and the reason, without pydantic's dump and URL
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"] if part not in ("limits", "endpoint")) or None
        raise RequestError(f"bad request setting {field}: {first['msg']}", param=field, code="invalid_value") from None


async def run_agent(body: Mapping[str, Any], *, model: OpenAIAgentConfig, executor: ToolExecutor,
                    parser: ToolCallParser, client: ChatClient | None = None) -> tuple[str | None, dict[str, Any], dict[str, int]]:
    """Run the tool loop for one chat request: (answer or None, the ``kopa`` extension, token usage).

    ``client``: the endpoint's long-lived client to the model server (None: one for this request).

    Raises:
        RequestError: the request is malformed (no messages, unknown tools, bad settings).
        EndpointError: the model server failed.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise RequestError("messages must be a non-empty list of message objects")
    kopa = body.get(EXTENSION_FIELD) or {}
    if not isinstance(kopa, dict):
        raise RequestError(f"{EXTENSION_FIELD} must be an object")
    budget = kopa.get("max_calls")
    if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 0):
        raise RequestError("kopa.max_calls must be a non-negative integer")
    config = _request_config(model, body, kopa)
    tools = executor.tools(body.get("tools"), kopa)
    session = executor.begin(kopa)
    run = AgentRun(executor, session)
    loop = _EndpointLoop(config, parser, run.trajectory)
    seed = body.get("seed") if isinstance(body.get("seed"), int) else 0
    stop_reason = "answer"
    try:
        answer = await loop.converse([dict(m) for m in messages], tools, seed=seed, call=run.call,
                                     note_turn=run.note_turn, client=client,
                                     step=loop.step(run.call, on_not_run=run.note_not_run))
        if answer is None:
            stop_reason = "no_answer"
    except (TurnLimitReached, BudgetSpent):
        answer, stop_reason = None, "budget"
    finally:
        executor.end(session)
    extension = {"trajectory": run.trajectory, "stop_reason": stop_reason, "turns": run.turns, "calls": run.calls,
                 "parser": parser.name}
    return answer, extension, run.usage()


def _error(status: int, message: str, kind: str, param: str | None = None, code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                        status_code=status)


def _refused(exc: RequestError) -> JSONResponse:
    return _error(exc.status, str(exc), "invalid_request_error", exc.param, exc.code)


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def create_agent_app(model: OpenAIAgentConfig, executor: ToolExecutor, *, tokens: Iterable[str],
                     parser: ToolCallParser | None = None, served_name: str = AGENT_MODEL,
                     resources: Sequence[contextlib.AbstractAsyncContextManager[Any]] = (),
                     context_tokens: int | None = None, max_body_bytes: int | None = None) -> Starlette:
    """The Starlette app of the agent endpoint over the model server ``model`` and the tool ``executor``; a request's
    budgets are ``model.limits`` unless it sets ``kopa.max_turns``/``kopa.max_calls``.

    ``context_tokens``: the model server's context (``ModelServer.plan.context_tokens``), the bound on a request's
    prompt and ``max_tokens``; ``max_body_bytes``: the request body limit (None: derived from the context, else
    ``request_checks.DEFAULT_MAX_BODY_BYTES``).

    Raises:
        ValueError: no bearer token given, or a limit that is not positive.
    """
    tokens = {t for t in tokens if t}
    if not tokens:
        raise ValueError("the agent endpoint needs at least one bearer token (configuration: gateway tokens)")
    parser = parser or choose_parser()
    limits = RequestLimits.for_context(context_tokens, max_body_bytes)

    async def completions(request: Request) -> Response:
        if request.method != "POST":
            return _error(405, "use POST", "invalid_request_error")
        try:
            body = scrub_surrogates(await read_body(request, limits))  # a lone \udXXX escape: U+FFFD, not a 500
            check_request(body, limits)  # the client's mistakes never reach the model server
        except RequestError as exc:
            return _refused(exc)
        created, cid = int(time.time()), _completion_id()
        run = run_agent(body, model=model, executor=executor, parser=parser, client=getattr(request.app.state, "model_client", None))
        if body.get("stream"):
            return StreamingResponse(_stream(run, cid, created, served_name), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache"})
        try:
            answer, extension, usage = await run
        except RequestError as exc:
            return _refused(exc)
        except EndpointError as exc:
            return _error(502, f"the model server failed: {exc}", "model_server_error", code="model_server_error")
        finish = "length" if extension["stop_reason"] == "budget" else "stop"
        return JSONResponse({
            "id": cid, "object": "chat.completion", "created": created, "model": served_name,
            "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                         "message": {"role": "assistant", "content": answer or "", EXTENSION_FIELD: extension}}],
            "usage": usage})

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": served_name, "object": "model", "created": 0,
                                                         "owned_by": "kopa"}]})

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok", "model_server": model.base_url, "parser": parser.name})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for resource in resources:
                await stack.enter_async_context(resource)
            from models.client import ChatClient

            # one client to the model server for the app's life: its connections are reused across requests
            app.state.model_client = await stack.enter_async_context(ChatClient(model.client_profile(), role="agent"))
            yield

    def guarded(handler: Any) -> Any:
        return RequireAuthMiddleware(request_response(handler), required_scopes=[])

    routes = [Route("/v1/chat/completions", guarded(completions)), Route("/v1/models", guarded(models)),
              Route("/healthz", healthz, methods=["GET"])]
    backend = BearerAuthBackend(StaticTokenVerifier(tokens))
    return Starlette(routes=routes, middleware=[Middleware(AuthenticationMiddleware, backend=backend)],
                     lifespan=lifespan)


def _sse(data: Any) -> bytes:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def _stream(run: Any, cid: str, created: int, served_name: str) -> AsyncIterator[bytes]:
    """OpenAI chat-completion chunks: the role first (at once), then the answer in pieces, then the finish chunk
    with the ``kopa`` extension; an error after the 200 went out becomes a final chunk that says so."""

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return _sse({"id": cid, "object": "chat.completion.chunk", "created": created, "model": served_name,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra})

    yield chunk({"role": "assistant", "content": ""})
    task = asyncio.ensure_future(run)
    try:
        while not task.done():
            done, _ = await asyncio.wait({task}, timeout=KEEPALIVE_S)
            if not done:
                yield b": running the tool loop\n\n"
        answer, extension, usage = task.result()
    except (RequestError, EndpointError) as exc:
        kind = "invalid_request_error" if isinstance(exc, RequestError) else "model_server_error"
        yield chunk({"content": f"error: {exc}"})
        yield chunk({EXTENSION_FIELD: {"error": {"type": kind, "message": str(exc)}, "trajectory": []}}, "stop")
        yield b"data: [DONE]\n\n"
        return
    finally:
        if not task.done():  # the client went away: stop the loop
            task.cancel()
    text = answer or ""
    for start in range(0, len(text), STREAM_PIECE):
        yield chunk({"content": text[start:start + STREAM_PIECE]})
    finish = "length" if extension["stop_reason"] == "budget" else "stop"
    yield chunk({EXTENSION_FIELD: extension}, finish, usage=usage)
    yield b"data: [DONE]\n\n"
