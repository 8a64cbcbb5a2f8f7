"""Agents that play KOPA-Bench episodes: the deterministic baselines here, model-backed ones beside them.

    from bench.agents import make_agent
    agent = make_agent("first-page")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Agent, CallTool, EpisodeContext, ToolInfo, placeholder_names, resolve_placeholders
from .first_page import FirstPageAgent
from .llm_config import OpenAIAgentConfig
from .local import LocalAgent, LocalModel
from .openai_agent import OpenAIAgent
from .oracle import OracleAgent, format_answer

__all__ = [
    "AGENTS",
    "Agent",
    "CallTool",
    "EpisodeContext",
    "FirstPageAgent",
    "LocalAgent",
    "LocalModel",
    "OpenAIAgent",
    "OpenAIAgentConfig",
    "OracleAgent",
    "ToolInfo",
    "format_answer",
    "make_agent",
    "placeholder_names",
    "resolve_placeholders",
]

# `openai` reads its endpoint from KOPA_AGENT_* variables. `local` is not here: it owns a model
# server, so it is used as `async with LocalAgent() as agent:` around a whole run.
AGENTS: dict[str, Callable[..., Agent]] = {
    "oracle": OracleAgent, "first-page": FirstPageAgent,
    "openai": lambda **overrides: OpenAIAgent(OpenAIAgentConfig.from_env(**overrides)),
}
MODEL_AGENTS = frozenset({"openai"})  # those that take model settings (max_turns, ...); the baselines take none


def make_agent(name: str, **overrides: Any) -> Agent:
    """The agent registered as ``name``; ``overrides`` (max_turns, ...) go to a model agent's config and are
    ignored by the deterministic baselines, which have no model settings.

    Raises:
        ValueError: no agent has that name; the message lists the known ones.
    """
    try:
        factory = AGENTS[name]
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; choose one of {', '.join(sorted(AGENTS))}") from None
    return factory(**overrides) if name in MODEL_AGENTS else factory()
