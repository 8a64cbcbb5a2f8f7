"""What an agent is given and what it returns: the contract between the episode harness and any agent.

    class MyAgent:
        name = "my-agent"
        async def run(self, context: EpisodeContext) -> str | None:
            result = await context.call("search_subway_stations", {"KEY": context.runtime_context["seoul_api_key"],
                                                                   "STATION_NM": "서울역"})
            return f"ANSWER: {{{result.records[0]['STATION_CD']}}}"

An agent gets the system prompt, the user's query, the tools it may use (name, description, JSON
Schema) and ``call``, which runs one tool call through the gateway runtime for this episode's session
and records it. It returns its final answer text (None when it has none). A tool failure comes back as
a ``ToolResult`` with an error outcome, never as an exception, so an agent can show it to the model.

Placeholders in golden arguments (the convention of KOPA-Bench task files): a string argument whose
whole value is ``{name}``, with ``name`` a runtime-context key of the task's system state, stands for
that key's value in the episode: ``{"KEY": "{dart_api_key}"}`` becomes the episode's DART key token,
``{"basDt": "{current_date}"}`` the predefined date. The value is substituted with its own type,
inside lists and dicts too. Any other string, braces or not, is taken literally.
``resolve_placeholders`` applies it; the episode harness scores against the resolved golden actions.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from bench.task import ResponseType, Task
from mcp_gateway.runtime import ToolResult

__all__ = ["Agent", "CallTool", "EpisodeContext", "ToolInfo", "placeholder_names", "resolve_placeholders"]

CallTool = Callable[[str, Any], Awaitable[ToolResult]]
"""``await call(tool, args)``: run a tool in the episode's session; ``args`` is what the model sent."""

PLACEHOLDER = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]{0,63})\}$")  # task.py's runtime-context key rule


@dataclass(frozen=True)
class ToolInfo:
    """One tool the agent may call, as a model sees it."""

    name: str
    description: str  # Korean, with the record fields it returns
    parameters: Mapping[str, Any]  # JSON Schema of the arguments (the gateway profile's view, KEY included)
    page_no_param: str | None = None  # the argument that selects a result page, if the tool pages

    def as_openai(self) -> dict[str, Any]:
        """An OpenAI chat-completions ``tools`` entry."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": dict(self.parameters)}}


@dataclass(frozen=True)
class EpisodeContext:
    """Everything an agent gets for one episode.

    ``task`` is there for the deterministic baselines (oracle, first-page) that replay the golden
    trajectory; an agent under test uses only the prompt, the query, the tools and ``call``.
    """

    task: Task
    system_prompt: str
    query: str
    tools: tuple[ToolInfo, ...]
    runtime_context: Mapping[str, Any]
    response_type: ResponseType | None
    seed: int
    rollout: int
    call: CallTool = field(repr=False)
    # a model-backed agent reports each assistant turn here (content, tool calls, token usage); the
    # episode keeps them in its transcript line as ``model_turns``
    note_turn: Callable[[dict[str, Any]], None] = field(default=lambda turn: None, repr=False)

    def tool(self, name: str) -> ToolInfo:
        """The available tool ``name``.

        Raises:
            KeyError: the tool is not available in this episode.
        """
        for info in self.tools:
            if info.name == name:
                return info
        raise KeyError(f"tool {name!r} is not available in this episode; available: "
                       f"{', '.join(t.name for t in self.tools)}")


@runtime_checkable
class Agent(Protocol):
    """Anything with a ``name`` and an async ``run`` that returns the final answer text."""

    name: str

    async def run(self, context: EpisodeContext) -> str | None: ...


def placeholder_names(value: Any) -> set[str]:
    """The runtime-context keys that ``{name}`` placeholders in ``value`` refer to (lists and dicts searched)."""
    if isinstance(value, str):
        match = PLACEHOLDER.match(value)
        return {match.group(1)} if match else set()
    if isinstance(value, Mapping):
        return set().union(*(placeholder_names(v) for v in value.values()))
    if isinstance(value, (list, tuple)):
        return set().union(*(placeholder_names(v) for v in value))
    return set()


def resolve_placeholders(value: Any, context: Mapping[str, Any]) -> Any:
    """``value`` with every ``{name}`` placeholder whose name is in ``context`` replaced by its value."""
    if isinstance(value, str):
        match = PLACEHOLDER.match(value)
        return context[match.group(1)] if match and match.group(1) in context else value
    if isinstance(value, Mapping):
        return {k: resolve_placeholders(v, context) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [resolve_placeholders(v, context) for v in value]
    return value
