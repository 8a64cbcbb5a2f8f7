"""Where the appliance's models are: one profile per role, one section of ``KopaSettings`` (``models``).

    from appliance.config import KopaSettings
    profile = KopaSettings().models.judge        # kopa.toml [models.judge], or KOPA_MODELS__JUDGE__BASE_URL=...
    if profile.configured:
        client = ChatClient(profile)

The roles: ``agent`` (the model a benchmark run or the agent endpoint drives), ``judge`` (RESPONSE's LLM judge
and EDGE's query-quality judge), ``proposer`` (EDGE Phase A's binding proposer) and ``writer`` (EDGE Phase B's
query writer). A role whose ``base_url`` is unset is not configured: the offline default runs instead (the
deterministic scorers, the rule proposer, the rule realiser); the agent then has no endpoint and the local
model serves it.

Set from ``kopa.toml``::

    [models.judge]
    base_url = "http://127.0.0.1:8000/v1"
    model = "qwen3.5-27b"

or from the environment, which wins over the file: ``KOPA_MODELS__JUDGE__BASE_URL``, ``KOPA_MODELS__JUDGE__MODEL``,
``KOPA_MODELS__JUDGE__API_KEY`` … (every field of ``EndpointProfile``, upper-cased). The variables of earlier
releases (``KOPA_AGENT_*``, ``KOPA_JUDGE_*``, ``KOPA_EDGE__LLM_*``, ``KOPA_EDGE__WRITER_*``, ``KOPA_EDGE__JUDGE_*``)
are refused with the name that replaces them (``retired_variables``), so a setting is never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = ["DEFAULT_MAX_RETRIES", "DEFAULT_TIMEOUT_S", "ROLES", "AgentProfile", "EndpointProfile", "JudgeProfile",
           "ModelSettings", "ProposerProfile", "WriterProfile", "retired_variables"]

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 2
ROLES = ("agent", "judge", "proposer", "writer")
ResponseFormat = Literal["json_object", "json_schema", "none"]


class EndpointProfile(BaseModel):
    """One OpenAI-compatible chat endpoint and how to talk to it (retries and timeouts are the ``openai`` SDK's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = Field(None, description="OpenAI-style base URL ending in /v1, e.g. "
                                                   "http://127.0.0.1:8000/v1; unset: this role is not configured")
    model: str | None = Field(None, description="the model name the endpoint serves")
    api_key: SecretStr = Field(SecretStr(""), description="sent as a Bearer token, never written anywhere; empty: "
                                                          "no Authorization header")
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, description="one chat request, seconds")
    max_retries: int = Field(DEFAULT_MAX_RETRIES, ge=0, description="re-sends after a timeout, a connection error, "
                                                                   "HTTP 408/409/429 or 5xx (exponential backoff); "
                                                                   "never after another 4xx")
    temperature: float | None = Field(None, ge=0, le=2, description="sampling temperature; unset: the role's own")
    max_tokens: int | None = Field(None, ge=1, description="tokens per reply; unset: the endpoint's default")
    seed: int | None = Field(0, description="sent as the request seed where the endpoint honours it")
    concurrency: int = Field(8, ge=1, description="requests in flight at once (batch roles: proposer, judge, writer)")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="merged into every request body, e.g. "
                                                                         '{"chat_template_kwargs": {...}}')

    @property
    def configured(self) -> bool:
        """Whether the role has an endpoint (else its offline default runs)."""
        return bool(self.base_url)

    def required(self, role: str) -> EndpointProfile:
        """This profile, checked complete enough to send requests.

        Raises:
            ValueError: base URL or model is missing; the message names the setting to add.
        """
        missing = [name for name in ("base_url", "model") if not getattr(self, name)]
        if missing:
            keys = ", ".join(f"KOPA_MODELS__{role.upper()}__{m.upper()} (kopa.toml [models.{role}] {m})"
                             for m in missing)
            raise ValueError(f"the {role} model endpoint needs {' and '.join(missing)}: set {keys}")
        return self


class AgentProfile(EndpointProfile):
    """The model a benchmark run (``--agent openai|endpoint``) or the agent endpoint drives."""

    timeout_s: float = Field(600.0, gt=0, description="one chat request, seconds (an episode's own limit also holds)")
    temperature: float | None = Field(0.7, ge=0, le=2, description="sampling temperature")


class JudgeProfile(EndpointProfile):
    """RESPONSE's LLM judge (Appendix B.2) and EDGE's query-quality judge; unset: deterministic checks only."""

    temperature: float | None = Field(0.0, ge=0, le=2, description="0: the same question gets the same verdict")
    max_tokens: int | None = Field(1024, ge=16, description="room for the judge's reasoning and verdict")
    max_retries: int = Field(1, ge=0, description="re-sends after a timeout, a connection error, HTTP 408/409/429 "
                                                  "or 5xx; never after another 4xx")
    response_format: ResponseFormat = Field("json_object", description="for EDGE's quality judge: json_object, or "
                                                                       "none for servers that refuse it")


class ProposerProfile(EndpointProfile):
    """EDGE Phase A's binding proposer; unset: the rule proposer."""

    temperature: float | None = Field(0.0, ge=0, le=2, description="0: the same edge gets the same answer")
    max_tokens: int | None = Field(1024, ge=1, description="tokens per reply")
    response_format: ResponseFormat = Field(
        "json_object", description="json_schema: the per-edge reply schema (servers with guided decoding); "
                                   "none: for servers that refuse response_format")
    cache: Path | None = Field(None, description="JSON Lines file of the replies per edge (default: beside the run)")


class WriterProfile(EndpointProfile):
    """EDGE Phase B's query writer; unset: the rule-based Korean realiser writes every query."""

    temperature: float | None = Field(0.0, ge=0, le=2, description="0: the same trace gets the same query")


class ModelSettings(BaseModel):
    """The model endpoints, one profile per role (``kopa.toml`` ``[models.<role>]``, ``KOPA_MODELS__<ROLE>__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: AgentProfile = Field(default_factory=AgentProfile, description="the benchmarked or served agent model")
    judge: JudgeProfile = Field(default_factory=JudgeProfile, description="RESPONSE's judge and EDGE's quality judge")
    proposer: ProposerProfile = Field(default_factory=ProposerProfile, description="EDGE's binding proposer")
    writer: WriterProfile = Field(default_factory=WriterProfile, description="EDGE's query writer")


# Variables of earlier releases -> the role that replaces them. KOPA_EDGE__<NAME> itself stays (KopaSettings.edge).
_RETIRED = {"KOPA_AGENT_": "agent", "KOPA_JUDGE_": "judge", "KOPA_EDGE__LLM_": "proposer",
            "KOPA_EDGE__WRITER_": "writer", "KOPA_EDGE__JUDGE_": "judge"}
_RENAMED_FIELDS = {"RETRIES": "MAX_RETRIES"}


def retired_variables(env: Mapping[str, str]) -> list[str]:
    """One line per set variable of an earlier release, naming its replacement (empty when none is set)."""
    found = []
    for name in sorted(env):
        for prefix, role in _RETIRED.items():
            if name.startswith(prefix):
                field = name[len(prefix):]
                if field == "ENABLED":
                    found.append(f"{name}: the {role} is used when KOPA_MODELS__{role.upper()}__BASE_URL is set")
                else:
                    found.append(f"{name}: use KOPA_MODELS__{role.upper()}__{_RENAMED_FIELDS.get(field, field)}")
                break
    return found
