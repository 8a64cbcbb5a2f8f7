"""The ``endpoint`` benchmark agent: KOPA-Bench episodes played by the agent endpoint itself.

    async with EndpointAgent.serving(model_config) as agent:     # the endpoint on a loopback port, this loop
        outcome = await run_episode(task, agent, gateway, seed=0)

Each episode is one ``POST /v1/chat/completions`` with the episode's prompt, query and tools; the tool loop runs
in the endpoint (the same code that serves chat clients), and its calls come back to the episode's harness
through an ``EpisodeExecutor`` (``kopa.session``), so they are recorded and scored as any agent's. The
benchmark therefore measures the served path: HTTP, the server-side loop, the tool-call parser.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

from bench.agents.base import EpisodeContext
from bench.agents.llm_config import OpenAIAgentConfig
from bench.agents.openai_agent import EndpointError, TurnLimitReached, request_seed
from models.client import ChatClient
from models.errors import EndpointError as ModelEndpointError
from models.settings import EndpointProfile

from .agent_endpoint import EXTENSION_FIELD, create_agent_app
from .executors import EpisodeExecutor
from .service import serve_app

__all__ = ["EndpointAgent"]


class EndpointAgent:
    """An agent whose whole episode is one request to the agent endpoint."""

    name = "endpoint"

    def __init__(self, url: str, token: str, executor: EpisodeExecutor, model: OpenAIAgentConfig) -> None:
        self.executor, self.model = executor, model
        # never re-sent: a second request would run the episode's tool calls again
        self.client = ChatClient(EndpointProfile(base_url=f"{url.rstrip('/')}/v1", model="kopa-agent", api_key=token,
                                                 timeout_s=model.episode_timeout_s + 30, max_retries=0, seed=None),
                                 role="agent endpoint")

    @classmethod
    @contextlib.asynccontextmanager
    async def serving(cls, model: OpenAIAgentConfig, **app_options: Any) -> AsyncIterator[EndpointAgent]:
        """The endpoint app over ``model`` served on a free loopback port in this event loop, and its agent."""
        executor = EpisodeExecutor()
        token = secrets.token_urlsafe(16)  # this run's only client is this agent
        app = create_agent_app(model, executor, tokens={token}, **app_options)
        async with serve_app(app) as origin:
            agent = cls(origin, token, executor, model)
            async with agent.client:
                yield agent

    async def run(self, context: EpisodeContext) -> str | None:
        session = self.executor.register(context.call)
        messages = [{"role": "system", "content": context.system_prompt}, {"role": "user", "content": context.query}]
        try:
            reply = await self.client.complete(
                messages, tools=[tool.as_openai() for tool in context.tools],
                seed=request_seed(context.seed, context.rollout),
                extra_body={EXTENSION_FIELD: {"session": session}})  # the endpoint plays by self.model.limits
        except ModelEndpointError as exc:
            raise EndpointError.wrap(exc) from None  # its kind and HTTP status go into the episode's record
        finally:
            self.executor.unregister(session)
        message = reply.message
        extension = message.get(EXTENSION_FIELD) or {}
        for turn in extension.get("turns", []):
            context.note_turn(turn)
        if extension.get("stop_reason") == "budget":
            raise TurnLimitReached(f"no final answer within {self.model.max_turns} assistant turns (agent endpoint)")
        return message.get("content") or None
