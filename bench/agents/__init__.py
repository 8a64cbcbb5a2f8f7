"""Agents that play KOPA-Bench episodes: the deterministic baselines here, model-backed ones beside them.

    from bench.agents import make_agent
    agent = make_agent("first-page")
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Agent, CallTool, EpisodeContext, ToolInfo, placeholder_names, resolve_placeholders
from .first_page import FirstPageAgent
from .oracle import OracleAgent, format_answer

__all__ = [
    "AGENTS",
    "Agent",
    "CallTool",
    "EpisodeContext",
    "FirstPageAgent",
    "OracleAgent",
    "ToolInfo",
    "format_answer",
    "make_agent",
    "placeholder_names",
    "resolve_placeholders",
]

AGENTS: dict[str, Callable[[], Agent]] = {"oracle": OracleAgent, "first-page": FirstPageAgent}


def make_agent(name: str) -> Agent:
    """The agent registered as ``name``.

    Raises:
        ValueError: no agent has that name; the message lists the known ones.
    """
    try:
        return AGENTS[name]()
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; choose one of {', '.join(sorted(AGENTS))}") from None
