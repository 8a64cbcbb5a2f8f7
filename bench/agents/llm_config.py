"""Settings of a model-backed agent: its model endpoint (the agent's model profile) and the limits of one episode.

    from bench.agents.llm_config import OpenAIAgentConfig
    config = OpenAIAgentConfig(base_url="http://127.0.0.1:8000/v1", model="qwen3.5-4b")
    config = OpenAIAgentConfig.from_profile(KopaSettings().models.agent, max_turns=4)   # [models.agent]
    config.endpoint.temperature, config.limits.max_turns, config.tool_choice

Where the requests go, how they are sampled and re-sent is ``endpoint``, a ``models.settings.AgentProfile``: the
one profile type kopa.toml ``[models.agent]`` and ``KOPA_MODELS__AGENT__*`` fill, so a field is defined (and
defaulted) once. The episode's limits are ``bench.limits.EpisodeLimits`` (``limits``; kopa.toml ``[episode]``), the
ones the agent endpoint and training read too. The fields of both may also be given flat (``base_url=...``,
``temperature=0``, ``max_turns=4``): they go into ``endpoint`` and ``limits`` over the ones given there.
``request_timeout_s`` is the profile's ``timeout_s`` (one chat request); when neither is given, a request may take
what the episode has left.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bench.limits import EpisodeLimits
from models.settings import AgentProfile, EndpointProfile

__all__ = ["OpenAIAgentConfig"]

# the flat name of the profile's request timeout, as model servers' agent settings give it (ModelServer.agent_settings)
_TIMEOUT_ALIAS = "request_timeout_s"


class OpenAIAgentConfig(BaseModel):
    """An OpenAI-compatible chat endpoint with tools, and how an episode may use it."""

    model_config = ConfigDict(frozen=True)

    endpoint: AgentProfile = Field(description="where the requests go, the sampling and the retries: the agent's model "
                                               "profile; base_url and model are required")
    limits: EpisodeLimits = Field(default_factory=EpisodeLimits, description="turns, calls, tool-output cap, prompt "
                                                                           "budget and timeouts of one episode")
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

    @model_validator(mode="before")
    @classmethod
    def _flat_fields(cls, data: Any) -> Any:
        """Fields of ``EpisodeLimits`` and of the profile given flat go into ``limits`` and ``endpoint``."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        limits = _as_dict(data.get("limits")) | _take(data, EpisodeLimits.model_fields)
        # only the profile's own fields: a judge's or proposer's profile carries more (response_format, cache)
        endpoint = {k: v for k, v in _as_dict(data.get("endpoint")).items() if k in AgentProfile.model_fields}
        if _TIMEOUT_ALIAS in data:
            endpoint["timeout_s"] = data.pop(_TIMEOUT_ALIAS)
        endpoint |= _take(data, AgentProfile.model_fields)
        if endpoint.get("timeout_s") is None:  # no request limit of its own: what the episode has left
            endpoint["timeout_s"] = EpisodeLimits.model_validate(limits).episode_timeout_s
        data["limits"], data["endpoint"] = limits, endpoint
        return data

    @model_validator(mode="after")
    def _complete_endpoint(self) -> OpenAIAgentConfig:
        self.endpoint.required("agent")  # the message names the setting to add
        return self

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
    def base_url(self) -> str:
        return str(self.endpoint.base_url)

    @property
    def model(self) -> str:
        return str(self.endpoint.model)

    @property
    def url(self) -> str:
        return f"{self.base_url.rstrip('/')}/chat/completions"

    def client_profile(self) -> EndpointProfile:
        """The profile for ``models.ChatClient``: no profile seed, since every request of an episode sends its own."""
        return self.endpoint.model_copy(update={"seed": None})

    @classmethod
    def from_profile(cls, profile: EndpointProfile, **overrides: Any) -> OpenAIAgentConfig:
        """The endpoint of ``profile`` (``KopaSettings().models.agent``), then ``overrides`` (``limits=`` the
        settings' ``EpisodeLimits``, command-line options; None values are ignored).

        Raises:
            ValueError: no base URL or model, from the profile or the overrides (the message names the setting).
            pydantic.ValidationError: a value is malformed.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        return cls.model_validate({"endpoint": profile, **given})


def _as_dict(value: Any) -> dict[str, Any]:
    """A section given as a model or a mapping (None: empty), as a dict to merge flat fields into."""
    if value is None:
        return {}
    return value.model_dump() if isinstance(value, BaseModel) else dict(value)


def _take(data: dict[str, Any], fields: Any) -> dict[str, Any]:
    """Remove the keys of ``fields`` from ``data``, and return them."""
    return {name: data.pop(name) for name in list(data) if name in fields}
