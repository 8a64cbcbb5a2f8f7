"""Agents that play KOPA-Bench episodes: the deterministic baselines here, model-backed ones beside them.

    from bench.agents import make_agent
    agent = make_agent("first-page")

``AGENTS`` (``bench.agents.registry``) names every agent a run can use and what it is: a deterministic
baseline, a model behind an endpoint (the ``[models.agent]`` profile) or one that owns a model server for
the whole run (``async with open_agent("local") as agent:``).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .registry import AGENTS, AgentEntry, AgentKind, agent_names, make_agent, open_agent

if TYPE_CHECKING:
    from .base import Agent, CallTool, EpisodeContext, ToolInfo, placeholder_names, resolve_placeholders
    from .first_page import FirstPageAgent
    from .llm_config import OpenAIAgentConfig
    from .local import LocalAgent, LocalModel
    from .openai_agent import OpenAIAgent
    from .oracle import OracleAgent, format_answer

# The agents themselves are imported on first use: `kopa` reads the registry at start-up (its --agent help), and the
# model agents pull in the openai SDK.
_HOMES = {
    "base": ("Agent", "CallTool", "EpisodeContext", "ToolInfo", "placeholder_names", "resolve_placeholders"),
    "first_page": ("FirstPageAgent",),
    "llm_config": ("OpenAIAgentConfig",),
    "local": ("LocalAgent", "LocalModel"),
    "openai_agent": ("OpenAIAgent",),
    "oracle": ("OracleAgent", "format_answer"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(["AGENTS", "AgentEntry", "AgentKind", "agent_names", "make_agent", "open_agent", *_MODULE_OF])


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)
