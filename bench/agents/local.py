"""The ``local`` agent: SmolLM2-135M-Instruct served by llama-cpp-python on loopback, started and stopped here.

    from bench.agents.local import LocalAgent
    async with LocalAgent() as agent:                 # starts the server, waits until it answers, measures it
        outcome = await run_episode(task, agent, gateway, seed=0)
    # the server process is gone here, also after an error

The embedded default: no network, no GPU, no keys. The server is ``models.server.ModelServer`` on the
llama.cpp plan of ``models.plan`` (the packaged GGUF, ``models.llama_cpp.LOCAL_DEFAULTS``); ``LocalModel`` only
adds the agent configuration. A 135M model rarely solves a task; it is here so that the whole path — a real
model choosing tools through an OpenAI-compatible server — runs anywhere, and a near-zero score is expected.

How tools reach the model: the ``kopa-hermes-chatml`` chat format that ``python -m models.llama_cpp`` registers,
``models.templates.HERMES_CHATML``, the template SmolLM2 is trained with here (one template for training,
``--agent local`` and serving). The tools are listed as JSON in the system turn, tool results go back as ``tool``
messages rendered as ``<tool_response>`` blocks, and the model writes its calls as ``<tool_call>`` JSON in its
text, which the agent step reads with ``models.toolcalls``; ``max_tokens`` bounds every reply. The local defaults
send the schemas without their descriptions (``schema_prose=False``, ``bench.agents.openai_agent.lean_tool``):
names, types, enums and ``required`` stay. SmolLM2 spends 2-3 tokens on each Hangul syllable, so the prose would
take most of an 8K context — for ``--agent local`` and the agent endpoint over the local model alike — and decides
whether a 135M model on a busy CPU plays its turns in time at all.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

from bench.agents.llm_config import OpenAIAgentConfig
from bench.agents.openai_agent import OpenAIAgent
from models.errors import ModelServerError
from models.llama_cpp import LOCAL_DEFAULTS, LOCAL_MODEL_ALIAS, smollm2_gguf
from models.plan import plan_model_server
from models.server import ModelServer

__all__ = ["LOCAL_DEFAULTS", "LOCAL_MODEL_ALIAS", "LocalAgent", "LocalModel", "LocalModelError", "smollm2_gguf"]

LocalModelError = ModelServerError  # the name of earlier releases


class LocalModel(ModelServer):
    """The packaged SmolLM2 (or ``model_path``, a GGUF) on llama.cpp, on a free loopback port."""

    def __init__(self, *, model_path: Path | None = None, n_threads: int | None = None,
                 startup_timeout_s: float = 180.0):
        plan = plan_model_server(str(model_path) if model_path is not None else None, backend="llama.cpp",
                                 n_threads=n_threads)
        super().__init__(plan, startup_timeout_s=startup_timeout_s)

    def agent_config(self, **overrides: Any) -> OpenAIAgentConfig:
        """An agent configuration for this server: Appendix I limits, ``LOCAL_DEFAULTS``, the request time limit
        measured when it started (``agent_settings``), then ``overrides``.

        Raises:
            ModelServerError: the server is not running.
        """
        if self.process is None:
            raise ModelServerError("the local model server is not running; use `async with LocalModel()`")
        return OpenAIAgentConfig(**{"base_url": self.base_url, "model": self.plan.served_name,
                                    **self.agent_settings(**overrides)})


class LocalAgent(OpenAIAgent):
    """The ``openai`` agent against a ``LocalModel`` it owns: ``async with LocalAgent() as agent``."""

    name = "local"

    def __init__(self, model: LocalModel | None = None, **overrides: Any):
        self.model = model or LocalModel()
        self._overrides = overrides
        self._config: OpenAIAgentConfig | None = None

    @property
    def config(self) -> OpenAIAgentConfig:  # type: ignore[override]
        if self._config is None:
            raise ModelServerError("the local agent's model server is not running; use `async with LocalAgent()`")
        return self._config

    async def __aenter__(self) -> LocalAgent:
        await self.model.astart()
        self._config = self.model.agent_config(**self._overrides)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._config = None
        await self.model.astop()
