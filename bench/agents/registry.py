"""The agents a benchmark run can name, in one place: what each one is and how it is made.

    from bench.agents.registry import AGENTS, AgentKind, make_agent, open_agent
    AGENTS["oracle"].kind                     # AgentKind.BASELINE
    agent = make_agent("first-page")          # a baseline, or an endpoint model with its profile:
    agent = make_agent("openai", profile=KopaSettings().models.agent, max_turns=4)
    async with open_agent("local", max_turns=4) as agent:   # any agent of the registry, model servers too
        ...
    async with open_agent("endpoint", profile=KopaSettings().models.agent) as agent:   # the agent endpoint
        ...

Every agent has its maker here. ``kopa bench run`` (its ``--agent`` help and checks), the console's agent choices,
``make_agent``/``open_agent`` and so every benchmark run (``bench.run_flow``) read ``AGENTS``. This module imports
no agent until one is made: ``kopa`` reads it at start-up, and the model agents pull in the openai SDK.

The ``endpoint`` agent plays its episodes through the agent endpoint, which the appliance serves
(``appliance.serving``); bench may not import the appliance, so the appliance hands the registry its server with
``provide_agent_server`` when it is imported (``appliance/__init__.py``), and the maker here uses it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from models.settings import EndpointProfile

    from .base import Agent
    from .llm_config import OpenAIAgentConfig

__all__ = ["AGENTS", "AgentEntry", "AgentKind", "AgentServer", "agent_names", "make_agent", "open_agent",
           "provide_agent_server"]

AgentServer = Callable[["OpenAIAgentConfig"], AbstractAsyncContextManager["Agent"]]
"""``serve(model_config)``: the agent endpoint in front of that model, served for the length of the block, as a
benchmark agent (``appliance.serving.endpoint_agent.EndpointAgent.serving``)."""


class AgentKind(StrEnum):
    """What an agent needs to play."""

    BASELINE = "baseline"
    """Deterministic, no model: made by name, takes no settings."""
    ENDPOINT = "endpoint model"
    """A model behind an OpenAI-compatible endpoint: the agent profile (``[models.agent]``), ``--base-url``/``--model``
    over it, and the episode limits (``max_turns``)."""
    MODEL_SERVER = "model server"
    """Owns a model server for the whole run: opened with ``async with``, closed when the run ends."""


@dataclass(frozen=True)
class AgentEntry:
    """One agent of the registry."""

    name: str
    kind: AgentKind
    summary: str
    make: Callable[..., Any]
    """``make(profile, **overrides)``: the agent (a baseline or endpoint model), or for a model-server agent the
    async context manager that yields it (``open_agent`` opens either)."""
    takes_endpoint: bool = False
    """whether ``--base-url``/``--model`` go with it (the endpoint it talks to, or the model server it fronts)"""


def _oracle(profile: EndpointProfile | None = None, **overrides: Any) -> Agent:
    from .oracle import OracleAgent

    return OracleAgent()


def _first_page(profile: EndpointProfile | None = None, **overrides: Any) -> Agent:
    from .first_page import FirstPageAgent

    return FirstPageAgent()


def _listed_order(profile: EndpointProfile | None = None, **overrides: Any) -> Agent:
    from .listed_order import ListedOrderAgent

    return ListedOrderAgent()


def _openai(profile: EndpointProfile | None = None, **overrides: Any) -> Agent:
    from models.settings import AgentProfile

    from .llm_config import OpenAIAgentConfig
    from .openai_agent import OpenAIAgent

    return OpenAIAgent(OpenAIAgentConfig.from_profile(profile if profile is not None else AgentProfile(), **overrides))


def _local(profile: EndpointProfile | None = None, **overrides: Any) -> AbstractAsyncContextManager[Agent]:
    from .local import LocalAgent

    return LocalAgent(**overrides)  # the packaged SmolLM2 on llama.cpp: not the agent profile's endpoint


_SERVER: dict[str, AgentServer] = {}  # "endpoint": what provide_agent_server was given


def provide_agent_server(serve: AgentServer) -> None:
    """Hand the registry the agent endpoint's server, which the ``endpoint`` agent plays through (the appliance
    does, when it is imported: bench may not import the appliance)."""
    _SERVER["endpoint"] = serve


@asynccontextmanager
async def _endpoint(profile: EndpointProfile | None = None, **overrides: Any) -> AsyncIterator[Agent]:
    """The agent endpoint (``provide_agent_server``'s) over ``base_url``/``model`` on the agent profile when
    ``base_url`` is given or the profile is configured, else over the local SmolLM2 started here for the block;
    the other overrides (``limits``, ``max_turns``) go to the model configuration the endpoint plays by.

    Raises:
        ValueError: no agent endpoint was provided (the appliance is not imported); ``OpenAIAgentConfig``'s.
    """
    serve = _SERVER.get("endpoint")
    if serve is None:
        raise ValueError("agent 'endpoint' is served by the appliance's agent endpoint, which is not loaded: "
                         "import appliance (or run it with `kopa bench run --agent endpoint`)")
    from models.settings import AgentProfile

    from .llm_config import OpenAIAgentConfig
    from .local import LocalModel

    profile = profile if profile is not None else AgentProfile()
    endpoint = {key: overrides.pop(key) for key in ("base_url", "model") if overrides.get(key) is not None}
    async with AsyncExitStack() as stack:
        if "base_url" in endpoint or profile.configured:  # --base-url, else [models.agent]
            config = OpenAIAgentConfig.from_profile(profile, **endpoint, **overrides)
        else:
            local = await stack.enter_async_context(LocalModel())
            config = local.agent_config(**overrides)
        yield await stack.enter_async_context(serve(config))


AGENTS: dict[str, AgentEntry] = {entry.name: entry for entry in (
    AgentEntry("oracle", AgentKind.BASELINE, "plays the golden actions: the ceiling a run is read against",
               make=_oracle),
    AgentEntry("first-page", AgentKind.BASELINE, "calls the golden tools, reads only their first page",
               make=_first_page),
    AgentEntry("listed-order", AgentKind.BASELINE, "calls the first tools of the shown list, golden arguments where "
               "it can: what the list order alone earns", make=_listed_order),
    AgentEntry("openai", AgentKind.ENDPOINT, "a model behind an OpenAI-compatible endpoint ([models.agent])",
               takes_endpoint=True, make=_openai),
    AgentEntry("local", AgentKind.MODEL_SERVER, "the packaged SmolLM2 on llama.cpp, started for the run",
               make=_local),
    AgentEntry("endpoint", AgentKind.MODEL_SERVER, "the agent endpoint's server-side tool loop (appliance.serving) "
               "over --base-url, else the local SmolLM2 started for the run", takes_endpoint=True, make=_endpoint),
)}


def agent_names(*kinds: AgentKind) -> tuple[str, ...]:
    """The registered names, in registry order; only those of ``kinds`` when given."""
    return tuple(name for name, entry in AGENTS.items() if not kinds or entry.kind in kinds)


def make_agent(name: str, *, profile: EndpointProfile | None = None, **overrides: Any) -> Agent:
    """The agent registered as ``name``: a baseline (``overrides`` are ignored: it has no model settings) or an
    endpoint model on ``profile`` (``KopaSettings().models.agent``) with ``overrides`` (base_url, model, max_turns,
    ...; None values ignored) over it.

    Raises:
        ValueError: no such agent (the message lists the ones this makes); the agent owns a model server (use
            ``open_agent``); an endpoint model without base URL or model (the message names the setting).
    """
    entry = AGENTS.get(name)
    if entry is None:
        known = sorted(agent_names(AgentKind.BASELINE, AgentKind.ENDPOINT))
        raise ValueError(f"unknown agent {name!r}; choose one of {', '.join(known)}")
    if entry.kind is AgentKind.MODEL_SERVER:
        raise ValueError(f"agent {name!r} owns a model server for the whole run: open it with "
                         f"`async with open_agent({name!r})`")
    return entry.make(profile) if entry.kind is AgentKind.BASELINE else entry.make(profile, **overrides)


@asynccontextmanager
async def open_agent(name: str, *, profile: EndpointProfile | None = None, **overrides: Any) -> AsyncIterator[Agent]:
    """Any agent of the registry, for the length of the block: ``make_agent``'s, or a model-server agent started
    here and stopped at the end (also after an error).

    Raises:
        ValueError: as ``make_agent``; the ``endpoint`` agent when the appliance is not loaded.
    """
    entry = AGENTS.get(name)
    if entry is None or entry.kind is not AgentKind.MODEL_SERVER:
        yield make_agent(name, profile=profile, **overrides)
        return
    async with entry.make(profile, **{k: v for k, v in overrides.items() if v is not None}) as agent:
        yield agent
