"""The ``openai`` agent: any OpenAI-compatible chat endpoint with tools plays an episode.

    from bench.agents.openai_agent import OpenAIAgent
    agent = OpenAIAgent(base_url="http://127.0.0.1:8000/v1", model="qwen3.5-4b")
    outcome = await run_episode(task, agent, gateway, seed=0)

The loop: system prompt and query, then up to ``max_turns`` chat requests (``POST {base_url}/chat/completions``
with the episode's tools, through ``models.ChatClient``: the openai SDK's retries and timeouts). Every tool call of one assistant turn runs at once (``asyncio.gather``); the
results go back in the order the model issued the calls. The final answer is the text of the first
assistant reply without tool calls. Defaults follow Appendix I (15 turns, 16K-token tool responses,
600 s per episode, 60 s per tool call); see ``bench.agents.llm_config``.

What a malformed reply does (the episode is always scored; see ``bench.episode``):

* **tool-call arguments that are not JSON**: the raw string is still passed to ``context.call``, so the
  attempt is recorded and ACTION scores it; the runtime refuses a non-object as SCHEMA_MISMATCH, and the
  model is told that its arguments were not valid JSON. Empty arguments count as ``{}``; raw control
  characters inside strings (llama.cpp's argument grammar lets a newline through) are accepted.
* **an unknown tool**: passed on as well; the harness answers with a SCHEMA_MISMATCH tool error.
* **calls written into the text** (a server without a tool-call parser, llama.cpp with a Qwen GGUF): a reply
  without structured ``tool_calls`` has its content read for ``<tool_call>`` blocks (qwen3_coder XML or hermes
  JSON, ``models.toolcalls``); the calls leave the content and run as structured ones would. A block that cannot
  be read is an ``invalid_tool_call`` call that is not run (nothing is recorded): its tool message tells the
  model what was wrong and how to write a call.
* **argument values of the wrong JSON type**: a string where the tool's schema declares an integer, number,
  boolean, object or array is read by the one typing rule (``models.toolcalls.values``): ``{"page": "2"}`` runs
  as 2; a string that does not convert is passed on as it is and refused as SCHEMA_MISMATCH.
* **a reply with neither text nor tool calls**: the episode ends without an answer (``None``), unless
  ``retry_empty_without_tools`` asks once more without tools.
* **the endpoint fails** (HTTP error, timeout, a body that is not a chat completion): ``EndpointError``
  is raised. ``run_episode`` records it as the episode's error and scores the episode without an answer.
* **no final answer after ``max_turns`` turns**: ``TurnLimitReached`` (the last turn's calls are run).

Tool responses are capped at ``max_tool_tokens`` approximate tokens, counted as UTF-8 bytes / 3: a Hangul
syllable (3 bytes) is about one token in current tokenizers, and ASCII JSON is 3-4 characters per token,
so the estimate errs towards counting too many. Records are dropped from the end of the page until the
response fits, and the model is told how many it does not see.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.agents.base import CallTool, EpisodeContext
from bench.agents.llm_config import OpenAIAgentConfig
from mcp_gateway.runtime import Outcome, ToolResult
from models.errors import EndpointError as ModelEndpointError
from models.toolcalls import INVALID_CALL, ToolCallParser, read_message

if TYPE_CHECKING:
    from models.client import ChatClient

__all__ = ["AgentError", "EndpointError", "OpenAIAgent", "ToolCallRequest", "TurnLimitReached", "approx_tokens",
           "cap_tool_response", "lean_tool", "request_seed"]

BYTES_PER_TOKEN = 3
TOOL_TIMEOUT_GRACE_S = 5.0  # the agent's backstop fires after the harness's own tool timeout, never before


class AgentError(RuntimeError):
    """A model-backed agent stopped without an answer; the message says why."""


class EndpointError(AgentError):
    """The chat endpoint failed: unreachable, an HTTP error, a timeout, or a body that is no chat completion."""


class TurnLimitReached(AgentError):
    """The model was still calling tools when the turn limit came."""


def approx_tokens(text: str) -> int:
    """Approximate token count of ``text``: UTF-8 bytes / 3, rounded up."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def cap_tool_response(content: dict[str, Any], max_tokens: int) -> str:
    """``content`` as JSON text of at most ``max_tokens`` approximate tokens.

    Whole records are dropped from the end (``records_omitted`` says how many); if even no records do not
    fit, the text itself is cut and marked.
    """
    text = _dumps(content)
    if approx_tokens(text) <= max_tokens:
        return text
    records = content.get("records")
    if isinstance(records, list) and records:
        lo, hi = 0, len(records) - 1  # the largest prefix that fits, by bisection
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if approx_tokens(_dumps(_trimmed(content, records, mid))) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        text = _dumps(_trimmed(content, records, lo))
        if approx_tokens(text) <= max_tokens:
            return text
    marker = " …[cut: the tool response exceeded the size limit]"
    budget = max_tokens * BYTES_PER_TOKEN - len(marker.encode("utf-8"))
    return text.encode("utf-8")[:max(budget, 0)].decode("utf-8", errors="ignore") + marker


def _trimmed(content: dict[str, Any], records: list[Any], keep: int) -> dict[str, Any]:
    return {**content, "records": records[:keep], "records_omitted": len(records) - keep,
            "note": f"only the first {keep} of {len(records)} records of this page fit the size limit"}


def request_seed(seed: int, rollout: int) -> int:
    """The sampling seed sent with every request of an episode: fixed by seed and rollout, so rollouts differ."""
    return int.from_bytes(hashlib.sha256(f"{seed}/{rollout}".encode()).digest()[:4], "big") >> 1


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call as the model wrote it, read by ``models.toolcalls``.

    ``raw_arguments`` are as written (sent back to the model in the assistant message), ``arguments`` as they
    run (typed by the tool's schema; the raw text when they were not JSON, with ``arguments_problem`` saying so).
    ``problem`` says why the call could not be read at all: then it is not run, and the model is told.
    """

    id: str
    name: str
    raw_arguments: Any
    problem: str | None = None
    arguments: Any = field(default_factory=dict)
    arguments_problem: str | None = None


class OpenAIAgent:
    """An agent backed by an OpenAI-compatible chat-completions endpoint."""

    name = "openai"

    def __init__(self, config: OpenAIAgentConfig | None = None, /, **fields: Any):
        """``OpenAIAgent(config)`` or ``OpenAIAgent(base_url=..., model=..., max_turns=...)``."""
        if config is None:
            config = OpenAIAgentConfig(**fields)
        elif fields:
            config = config.model_copy(update=fields)
        self.config = config

    async def run(self, context: EpisodeContext) -> str | None:
        messages: list[dict[str, Any]] = [{"role": "system", "content": context.system_prompt},
                                          {"role": "user", "content": context.query}]
        tools = [tool.as_openai() for tool in context.tools]
        return await self.converse(messages, tools, seed=request_seed(context.seed, context.rollout),
                                   call=context.call, note_turn=context.note_turn)

    async def converse(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, seed: int,
                       call: CallTool, note_turn: Callable[[dict[str, Any]], None] = lambda turn: None,
                       client: ChatClient | None = None) -> str | None:
        """The tool loop over ``messages`` (extended in place with every assistant turn and tool result).

        ``call(tool, args)`` runs one tool call; the episode harness and the agent endpoint each pass their own.
        ``client``: a long-lived client for the endpoint (``self.config.endpoint()``); by default one is made for
        this loop (making one costs milliseconds and a new connection: a server reuses its own).

        Raises:
            EndpointError: the chat endpoint failed.
            TurnLimitReached: no final answer within ``max_turns`` turns.
        """
        cfg = self.config
        deadline = time.monotonic() + cfg.episode_timeout_s
        tools = [_bounded(tool if cfg.schema_prose else lean_tool(tool), cfg.max_argument_chars) for tool in tools]
        async with contextlib.AsyncExitStack() as stack:
            if client is None:
                from models.client import ChatClient  # the openai SDK, imported when a model is first asked

                client = await stack.enter_async_context(ChatClient(cfg.endpoint(), role="agent"))
            for turn in range(cfg.max_turns):
                message = await self._complete(client, messages, tools, seed, deadline, note_turn, turn)
                calls = self.tool_calls(message, turn, tools)
                content = message.get("content")
                if not calls:
                    if not content and cfg.retry_empty_without_tools and tools:
                        content = (await self._complete(client, messages, [], seed, deadline, note_turn,
                                                        turn)).get("content")
                    return content if isinstance(content, str) and content else None
                messages.append({"role": "assistant", "content": content if isinstance(content, str) else "",
                                 "tool_calls": [{"id": c.id, "type": "function",
                                                 "function": {"name": c.name, "arguments": _as_text(c.raw_arguments)}}
                                                for c in calls]})
                replies = await asyncio.gather(*(self._run_call(call, c) for c in calls))
                messages.extend(self._tool_message(c, reply) for c, reply in zip(calls, replies))
        raise TurnLimitReached(f"no final answer within {cfg.max_turns} assistant turns: the model was still "
                               "calling tools")

    def tool_calls(self, message: dict[str, Any], turn: int, tools: list[dict[str, Any]], *,
                   reader: ToolCallParser | None = None) -> list[ToolCallRequest]:
        """The tool calls of an assistant message: its structured ``tool_calls``, else the calls written in its
        content (read by ``reader``, by default every text format), which then leave ``message["content"]``."""
        return _tool_calls(message, turn, tools, reader)

    # ------------------------------------------------------------------------------------ the endpoint

    async def _complete(self, client: ChatClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                        seed: int, deadline: float, note_turn: Callable[[dict[str, Any]], None],
                        turn: int) -> dict[str, Any]:
        """The assistant message of one chat request (reported to ``note_turn`` with its token usage)."""
        cfg = self.config
        left = deadline - time.monotonic()
        if left <= 0:
            raise EndpointError(f"the episode's {cfg.episode_timeout_s:g} s ran out before the next request")
        timeout = min(left, cfg.request_timeout_s) if cfg.request_timeout_s else left
        try:
            reply = await client.complete(messages, tools=tools, timeout_s=timeout, model=cfg.model, seed=seed,
                                          temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                                          tool_choice=cfg.tool_choice if tools else None,
                                          extra_body=cfg.extra_body or None)
        except ModelEndpointError as exc:
            raise EndpointError(str(exc)) from None
        usage = reply.usage
        note_turn({"turn": turn, "with_tools": bool(tools), "content": reply.message.get("content"),
                   "tool_calls": reply.message.get("tool_calls") or [],
                   "usage": {k: usage.get(k) for k in ("prompt_tokens", "completion_tokens")} if usage else None})
        return reply.message

    # ------------------------------------------------------------------------------------ tool calls

    async def _run_call(self, run: CallTool, call: ToolCallRequest) -> tuple[ToolResult, str | None]:
        """The call's result, and what was wrong with its arguments (None when they were JSON)."""
        if call.problem is not None:  # the call could not even be read: nothing to run, the model is told why
            return ToolResult(tool=call.name, outcome=Outcome.SCHEMA_MISMATCH, message=call.problem), None
        args, problem = call.arguments, call.arguments_problem
        limit = self.config.tool_timeout_s
        try:
            result = await asyncio.wait_for(run(call.name, args), limit + TOOL_TIMEOUT_GRACE_S)
        except TimeoutError:
            result = ToolResult(tool=call.name, outcome=Outcome.TIMEOUT,
                                message=f"{call.name}: no result within {limit:g} s; try again or narrow the query")
        return result, problem

    def _tool_message(self, call: ToolCallRequest, reply: tuple[ToolResult, str | None]) -> dict[str, Any]:
        result, problem = reply
        content = result.structured()
        if problem:
            content["arguments_error"] = problem
        text = cap_tool_response(content, self.config.max_tool_tokens)
        if self.config.tool_result_role == "user":
            return {"role": "user", "content": f"Result of {call.name} ({call.id}):\n{text}"}
        return {"role": "tool", "tool_call_id": call.id, "content": text}


def _tool_calls(message: dict[str, Any], turn: int, tools: list[dict[str, Any]],
                reader: ToolCallParser | None) -> list[ToolCallRequest]:
    """The tool calls of an assistant message, whatever shape they came in (ids made up where missing)."""
    structured = isinstance(message.get("tool_calls"), list) and bool(message["tool_calls"])  # as read_message
    read = read_message(message, tools, reader)
    if not structured and (read.calls or read.problems):
        message["content"] = read.content  # the calls leave the text; they go on as structured tool_calls
    calls = [ToolCallRequest(id=c.id or f"call_{turn}_{i}", name=c.name,
                             raw_arguments=c.raw if structured else c.arguments, arguments=c.arguments,
                             arguments_problem=c.problem) for i, c in enumerate(read.calls)]
    # an unreadable call gets a name chat templates can render: the model sees it answered with the reason
    calls += [ToolCallRequest(id=f"call_{turn}_{len(read.calls) + i}", name=INVALID_CALL, raw_arguments={},
                              problem=problem) for i, problem in enumerate(read.problems)]
    return calls


_SCHEMA_PROSE = ("description", "title", "examples", "default")


def lean_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI ``tools`` entry with no prose in its parameter schema (descriptions, titles, examples, defaults):
    names, types, enums and ``required`` stay (``OpenAIAgentConfig.schema_prose``)."""

    def lean(schema: Any) -> Any:
        if isinstance(schema, list):
            return [lean(item) for item in schema]
        if not isinstance(schema, dict):
            return schema
        out = {k: lean(v) for k, v in schema.items() if k not in _SCHEMA_PROSE}
        if isinstance(schema.get("properties"), dict):  # property names are data, not prose
            out["properties"] = {name: lean(sub) for name, sub in schema["properties"].items()}
        return out

    function = tool["function"]
    return {**tool, "function": {**function, "parameters": lean(function.get("parameters", {}))}}


def _bounded(tool: dict[str, Any], max_chars: int | None) -> dict[str, Any]:
    """``tool`` with ``maxLength`` on every string property that has none (nested objects too)."""
    if max_chars is None:
        return tool

    def bound(schema: Any) -> Any:
        if not isinstance(schema, dict):
            return schema
        out = dict(schema)
        if out.get("type") == "string" and "maxLength" not in out and "enum" not in out:
            out["maxLength"] = max_chars
        if isinstance(out.get("properties"), dict):
            out["properties"] = {k: bound(v) for k, v in out["properties"].items()}
        if isinstance(out.get("items"), dict):
            out["items"] = bound(out["items"])
        return out

    function = tool["function"]
    return {**tool, "function": {**function, "parameters": bound(function.get("parameters", {}))}}


def _as_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else _dumps(raw if raw is not None else {})
