"""The ``openai`` agent: any OpenAI-compatible chat endpoint with tools plays an episode.

    from bench.agents.openai_agent import OpenAIAgent
    agent = OpenAIAgent(base_url="http://127.0.0.1:8000/v1", model="qwen3.5-4b")
    outcome = await run_episode(task, agent, gateway, seed=0)

The loop is the one agent step (``bench.agents.step``): system prompt and query, then up to ``max_turns`` chat
requests (``POST {base_url}/chat/completions`` with the episode's tools, through ``models.ChatClient``: the openai
SDK's retries and timeouts). Every tool call of one assistant turn runs at once; the results go back in the order
the model issued the calls. The final answer is the text of the first assistant reply without tool calls. The
limits are ``bench.limits.EpisodeLimits`` (Appendix I: 15 turns, 16K-token tool responses, 600 s per episode, 60 s
per tool call); see ``bench.agents.llm_config``.

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
  is raised with the client's ``ErrorKind`` and HTTP status. ``run_episode`` records it as the episode's error
  (message, kind, status) and scores the episode without an answer.
* **no final answer after ``max_turns`` turns**: ``TurnLimitReached`` (the last turn's calls are run).

Tool responses are capped at ``max_tool_tokens`` approximate tokens (``bench.agents.step.cap_tool_response``):
records are dropped from the end of the page until the response fits, and the model is told how many it does not
see.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench.agents.base import CallTool, EpisodeContext
from bench.agents.llm_config import OpenAIAgentConfig
from bench.agents.step import (
    SCHEMA_PROSE,
    AgentError,
    AgentStep,
    ToolCallRequest,
    TurnLimitReached,
    approx_tokens,
    cap_tool_response,
    read_calls,
)
from models.errors import EndpointError as ModelEndpointError
from models.errors import ErrorKind
from models.toolcalls import ToolCallParser

if TYPE_CHECKING:
    from models.client import ChatClient

__all__ = ["AgentError", "EndpointError", "OpenAIAgent", "ToolCallRequest", "TurnLimitReached", "approx_tokens",
           "cap_tool_response", "lean_tool", "request_seed"]


class EndpointError(AgentError):
    """The chat endpoint failed: unreachable, an HTTP error, a timeout, or a body that is no chat completion.
    ``kind`` and ``status`` are the client's (``models.errors.EndpointError``)."""

    @classmethod
    def wrap(cls, exc: ModelEndpointError) -> EndpointError:
        """The bench's error for the client's, with its message, kind and HTTP status."""
        return cls(str(exc), kind=exc.kind, status=exc.status)


def request_seed(seed: int, rollout: int) -> int:
    """The sampling seed sent with every request of an episode: fixed by seed and rollout, so rollouts differ."""
    return int.from_bytes(hashlib.sha256(f"{seed}/{rollout}".encode()).digest()[:4], "big") >> 1


class OpenAIAgent:
    """An agent backed by an OpenAI-compatible chat-completions endpoint."""

    name = "openai"

    def __init__(self, config: OpenAIAgentConfig | None = None, /, **fields: Any):
        """``OpenAIAgent(config)`` or ``OpenAIAgent(base_url=..., model=..., max_turns=...)``."""
        if config is None:
            config = OpenAIAgentConfig(**fields)
        elif fields:
            config = OpenAIAgentConfig.model_validate({**dict(config), **fields})
        self.config = config

    async def run(self, context: EpisodeContext) -> str | None:
        messages: list[dict[str, Any]] = [{"role": "system", "content": context.system_prompt},
                                          {"role": "user", "content": context.query}]
        tools = [tool.as_openai() for tool in context.tools]
        return await self.converse(messages, tools, seed=request_seed(context.seed, context.rollout),
                                   call=context.call, note_turn=context.note_turn)

    def step(self, call: CallTool, **options: Any) -> AgentStep:
        """The agent step this agent plays its turns with (``options``: more of ``AgentStep``'s)."""
        cfg = self.config
        return AgentStep(cfg.limits, call, read=self.tool_calls, tool_result_role=cfg.tool_result_role,
                         retry_empty_without_tools=cfg.retry_empty_without_tools, **options)

    async def converse(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, seed: int,
                       call: CallTool, note_turn: Callable[[dict[str, Any]], None] = lambda turn: None,
                       client: ChatClient | None = None, step: AgentStep | None = None) -> str | None:
        """The tool loop over ``messages`` (extended in place with every assistant turn and tool result).

        ``call(tool, args)`` runs one tool call; the episode harness and the agent endpoint each pass their own.
        ``client``: a long-lived client for the endpoint (``self.config.client_profile()``); by default one is made for
        this loop (making one costs milliseconds and a new connection: a server reuses its own). ``step``: the
        agent step to play with (default ``self.step(call)``).

        Raises:
            EndpointError: the chat endpoint failed.
            TurnLimitReached: no final answer within ``max_turns`` turns.
            BudgetSpent: the prompt budget ran out.
        """
        cfg = self.config
        deadline = time.monotonic() + cfg.episode_timeout_s
        tools = [_bounded(tool if cfg.schema_prose else lean_tool(tool), cfg.max_argument_chars) for tool in tools]
        step = step or self.step(call)
        async with contextlib.AsyncExitStack() as stack:
            if client is None:
                from models.client import ChatClient  # the openai SDK, imported when a model is first asked

                client = await stack.enter_async_context(ChatClient(cfg.client_profile(), role="agent"))

            async def generate(conversation: list[dict[str, Any]], offered: list[dict[str, Any]]) -> dict[str, Any]:
                return await self._complete(client, conversation, offered, seed, deadline, note_turn, step.turn_no)

            return await step.run(messages, tools, generate)

    def tool_calls(self, message: dict[str, Any], turn: int, tools: list[dict[str, Any]], *,
                   reader: ToolCallParser | None = None) -> list[ToolCallRequest]:
        """The tool calls of an assistant message: its structured ``tool_calls``, else the calls written in its
        content (read by ``reader``, by default every text format), which then leave ``message["content"]``."""
        return read_calls(message, turn, tools, reader)

    def tool_choice(self, turn: int) -> Any:
        """The ``tool_choice`` of the request for ``turn`` (a request without tools sends none)."""
        return self.config.tool_choice

    # ------------------------------------------------------------------------------------ the endpoint

    async def _complete(self, client: ChatClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                        seed: int, deadline: float, note_turn: Callable[[dict[str, Any]], None],
                        turn: int) -> dict[str, Any]:
        """The assistant message of one chat request (reported to ``note_turn`` with its token usage)."""
        cfg = self.config
        left = deadline - time.monotonic()
        if left <= 0:
            raise EndpointError(f"the episode's {cfg.episode_timeout_s:g} s ran out before the next request",
                                kind=ErrorKind.EPISODE_TIMEOUT)
        endpoint = cfg.endpoint
        try:
            reply = await client.complete(messages, tools=tools, timeout_s=min(left, endpoint.timeout_s),
                                          model=endpoint.model, seed=seed, temperature=endpoint.temperature,
                                          max_tokens=endpoint.max_tokens,
                                          tool_choice=self.tool_choice(turn) if tools else None,
                                          extra_body=endpoint.extra_body or None)
        except ModelEndpointError as exc:
            raise EndpointError.wrap(exc) from None
        usage = reply.usage
        note_turn({"turn": turn, "with_tools": bool(tools), "content": reply.message.get("content"),
                   "tool_calls": reply.message.get("tool_calls") or [],
                   "usage": {k: usage.get(k) for k in ("prompt_tokens", "completion_tokens")} if usage else None})
        return reply.message


def lean_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI ``tools`` entry with no prose in its parameter schema (descriptions, titles, examples, defaults):
    names, types, enums and ``required`` stay (``OpenAIAgentConfig.schema_prose``)."""

    def lean(schema: Any) -> Any:
        if isinstance(schema, list):
            return [lean(item) for item in schema]
        if not isinstance(schema, dict):
            return schema
        out = {k: lean(v) for k, v in schema.items() if k not in SCHEMA_PROSE}
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
