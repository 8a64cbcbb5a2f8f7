"""Settings of a model-backed agent: where the endpoint is and the limits of one episode.

    from bench.agents.llm_config import OpenAIAgentConfig
    config = OpenAIAgentConfig(base_url="http://127.0.0.1:8000/v1", model="qwen3.5-4b")
    config = OpenAIAgentConfig.from_profile(KopaSettings().models.agent, max_turns=4)   # [models.agent]

The episode's limits are ``bench.limits.EpisodeLimits`` (``limits``; kopa.toml ``[episode]``), the ones the agent
endpoint and training read too. Its fields may also be given flat (``max_turns=4``, ``max_tool_tokens=1500``): they
go into ``limits`` over the ones given there, and read back as attributes (``config.max_turns``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from bench.limits import EpisodeLimits
from models.settings import EndpointProfile

__all__ = ["OpenAIAgentConfig"]


class OpenAIAgentConfig(BaseModel):
    """An OpenAI-compatible chat endpoint with tools, and how an episode may use it."""

    model_config = ConfigDict(frozen=True)

    base_url: str = Field(description="OpenAI-style base URL ending in /v1, e.g. http://127.0.0.1:8000/v1")
    model: str = Field(min_length=1, description="model name the endpoint serves")
    api_key: SecretStr = Field(SecretStr(""), description="bearer token; empty: no Authorization header")
    limits: EpisodeLimits = Field(default_factory=EpisodeLimits, description="turns, calls, tool-output cap, prompt "
                                                                           "budget and timeouts of one episode")
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
    schema_prose: bool = Field(
        True, description="send the tools' parameter descriptions, titles, examples and defaults; False for small "
                          "local models whose chat format renders each Hangul syllable of them as a \\uXXXX escape "
                          "(llama-cpp-python's chatml-function-calling): the prompt shrinks to a fraction")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="merged into every request body")
    max_retries: int = Field(2, ge=0, description="re-sends after a timeout, a connection error, HTTP 408/409/429 or "
                                                  "5xx (the openai SDK's policy); never after another 4xx")

    @model_validator(mode="before")
    @classmethod
    def _flat_limits(cls, data: Any) -> Any:
        """``max_turns=4`` and the other ``EpisodeLimits`` fields given flat go into ``limits``."""
        if not isinstance(data, dict) or not set(data) & set(EpisodeLimits.model_fields):
            return data
        data = dict(data)
        base = data.get("limits") or {}
        base = base.model_dump() if isinstance(base, EpisodeLimits) else dict(base)
        data["limits"] = base | {k: data.pop(k) for k in list(data) if k in EpisodeLimits.model_fields}
        return data

    @property
    def max_turns(self) -> int:
        return self.limits.max_turns

    @property
    def max_tool_tokens(self) -> int:
        return self.limits.max_tool_tokens

    @property
    def episode_timeout_s(self) -> float:
        return self.limits.episode_timeout_s

    @property
    def tool_timeout_s(self) -> float:
        return self.limits.tool_timeout_s

    @property
    def url(self) -> str:
        return f"{self.base_url.rstrip('/')}/chat/completions"

    def endpoint(self) -> EndpointProfile:
        """Where the requests go and how they are re-sent, for ``models.ChatClient`` (sampling is per request)."""
        return EndpointProfile(base_url=self.base_url, model=self.model, api_key=self.api_key,
                               timeout_s=self.request_timeout_s or self.episode_timeout_s,
                               max_retries=self.max_retries, seed=None)

    @classmethod
    def from_profile(cls, profile: EndpointProfile, **overrides: Any) -> OpenAIAgentConfig:
        """The endpoint of ``profile`` (``KopaSettings().models.agent``), then ``overrides`` (``limits=`` the
        settings' ``EpisodeLimits``, command-line options; None values are ignored).

        Raises:
            ValueError: no base URL or model, from the profile or the overrides (the message names the setting).
            pydantic.ValidationError: a value is malformed.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        endpoint = profile.model_copy(update={k: given[k] for k in ("base_url", "model") if k in given})
        endpoint.required("agent")
        values: dict[str, Any] = {"base_url": endpoint.base_url, "model": endpoint.model, "api_key": endpoint.api_key,
                                  "temperature": endpoint.temperature, "max_tokens": endpoint.max_tokens,
                                  "request_timeout_s": endpoint.timeout_s, "max_retries": endpoint.max_retries,
                                  "extra_body": dict(endpoint.extra_body)}
        return cls.model_validate({**values, **given})
