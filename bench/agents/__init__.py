"""Agents that play KOPA-Bench episodes: the deterministic baselines here, model-backed ones beside them.

    from bench.agents import make_agent
    agent = make_agent("first-page")
"""

from __future__ import annotations

from collections.abc import Callable

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
AGENTS: dict[str, Callable[[], Agent]] = {
    "oracle": OracleAgent, "first-page": FirstPageAgent,
    "openai": lambda: OpenAIAgent(OpenAIAgentConfig.from_env()),
}


def make_agent(name: str) -> Agent:
    """The agent registered as ``name``.

    Raises:
        ValueError: no agent has that name; the message lists the known ones.
    """
    try:
        return AGENTS[name]()
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; choose one of {', '.join(sorted(AGENTS))}") from None
