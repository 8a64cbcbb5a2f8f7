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

import httpx

from bench.agents.base import EpisodeContext
from bench.agents.llm_config import OpenAIAgentConfig
from bench.agents.openai_agent import EndpointError, TurnLimitReached, request_seed

from .agent_endpoint import EXTENSION_FIELD, create_agent_app
from .executors import EpisodeExecutor
from .service import serve_app

__all__ = ["EndpointAgent"]


class EndpointAgent:
    """An agent whose whole episode is one request to the agent endpoint."""

    name = "endpoint"

    def __init__(self, url: str, token: str, executor: EpisodeExecutor, model: OpenAIAgentConfig) -> None:
        self.url, self.executor, self.model = f"{url.rstrip('/')}/v1/chat/completions", executor, model
        self._token = token

    @classmethod
    @contextlib.asynccontextmanager
    async def serving(cls, model: OpenAIAgentConfig, **app_options: Any) -> AsyncIterator[EndpointAgent]:
        """The endpoint app over ``model`` served on a free loopback port in this event loop, and its agent."""
        executor = EpisodeExecutor()
        token = secrets.token_urlsafe(16)  # this run's only client is this agent
        app = create_agent_app(model, executor, tokens={token}, **app_options)
        async with serve_app(app) as origin:
            yield cls(origin, token, executor, model)

    async def run(self, context: EpisodeContext) -> str | None:
        session = self.executor.register(context.call)
        body = {"model": "kopa-agent", "seed": request_seed(context.seed, context.rollout),
                "messages": [{"role": "system", "content": context.system_prompt},
                             {"role": "user", "content": context.query}],
                "tools": [tool.as_openai() for tool in context.tools],
                EXTENSION_FIELD: {"session": session, "max_calls": 10**6}}  # the harness enforces its own limits
        try:
            async with httpx.AsyncClient(headers={"Authorization": f"Bearer {self._token}"}) as client:
                response = await client.post(self.url, json=body, timeout=self.model.episode_timeout_s + 30)
        except httpx.HTTPError as exc:
            raise EndpointError(f"{self.url}: {type(exc).__name__}: {exc}") from None
        finally:
            self.executor.unregister(session)
        if response.status_code != 200:
            raise EndpointError(f"{self.url} answered HTTP {response.status_code}: {response.text[:500]}")
        message = response.json()["choices"][0]["message"]
        extension = message.get(EXTENSION_FIELD) or {}
        for turn in extension.get("turns", []):
            context.note_turn(turn)
        if extension.get("stop_reason") == "budget":
            raise TurnLimitReached(f"no final answer within {self.model.max_turns} assistant turns (agent endpoint)")
        return message.get("content") or None
