"""Settings of a model-backed agent: where the endpoint is and the limits of one episode.

    from bench.agents.llm_config import OpenAIAgentConfig
    config = OpenAIAgentConfig(base_url="http://127.0.0.1:8000/v1", model="qwen3.5-4b")
    config = OpenAIAgentConfig.from_env()   # KOPA_AGENT_BASE_URL, KOPA_AGENT_MODEL, KOPA_AGENT_API_KEY, ...

The default limits are the paper's (Appendix I: "we cap each episode at 15 assistant turns and 16K
tool-response tokens, with episode and tool timeouts of 600 s and 60 s").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = ["ENV_PREFIX", "OpenAIAgentConfig"]

ENV_PREFIX = "KOPA_AGENT_"


class OpenAIAgentConfig(BaseModel):
    """An OpenAI-compatible chat endpoint with tools, and how an episode may use it."""

    model_config = ConfigDict(frozen=True)

    base_url: str = Field(description="OpenAI-style base URL ending in /v1, e.g. http://127.0.0.1:8000/v1")
    model: str = Field(min_length=1, description="model name the endpoint serves")
    api_key: SecretStr = Field(SecretStr(""), description="bearer token; empty: no Authorization header")
    max_turns: int = Field(15, ge=1, description="assistant turns (chat requests) per episode")
    max_tool_tokens: int = Field(16_000, ge=64, description="cap on one tool response, in approximate tokens")
    episode_timeout_s: float = Field(600.0, gt=0, description="the whole episode, model and tools together")
    tool_timeout_s: float = Field(60.0, gt=0, description="one tool call (run_episode enforces it too)")
    request_timeout_s: float | None = Field(None, gt=0, description="one chat request; None: what the episode "
                                                                    "has left")
    temperature: float | None = Field(0.7, ge=0, le=2, description="sampling temperature; None: the endpoint's")
    max_tokens: int | None = Field(None, ge=1, description="per reply; None: the endpoint's default")
    tool_choice: Any = Field("auto", description='"auto", "required", "none" or {"type": "function", ...}')
    tool_result_role: Literal["tool", "user"] = Field(
        "tool", description="role of the message carrying a tool result; 'user' for chat templates that drop "
                            "tool messages (llama-cpp-python's chatml-function-calling)")
    retry_empty_without_tools: bool = Field(
        False, description="a reply with neither text nor tool calls is asked again once without tools, for "
                           "an endpoint that cannot write text while tools are offered")
    max_argument_chars: int | None = Field(
        None, ge=1, description="add maxLength to string parameters that have none: for servers that decode "
                                "arguments with a grammar built from the schema and ignore max_tokens there "
                                "(llama-cpp-python's chatml-function-calling), it bounds each argument")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="merged into every request body")

    @property
    def url(self) -> str:
        return f"{self.base_url.rstrip('/')}/chat/completions"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> OpenAIAgentConfig:
        """Read ``KOPA_AGENT_<FIELD>`` for every scalar field (``KOPA_AGENT_BASE_URL``, ``_MODEL``, ...).

        Raises:
            pydantic.ValidationError: a value is malformed, or base URL or model is missing.
        """
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for name in cls.model_fields:
            raw = env.get(ENV_PREFIX + name.upper(), "").strip()
            if raw and name not in ("extra_body", "tool_choice"):
                values[name] = raw
        return cls.model_validate({**values, **overrides})
