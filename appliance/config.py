"""Configuration: one pydantic-settings model with nested sections.

Sources, strongest first: keyword arguments, environment variables (prefix ``KOPA_``, nested
sections joined with ``__``, e.g. ``KOPA_SANDBOX__PORT=9000``), a TOML file named by
``KOPA_CONFIG`` (default ``kopa.toml`` in the working directory, if present), then the defaults
below. Secrets (platform keys) are ``SecretStr``: they never appear in a repr or a log line.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from bench.limits import EpisodeLimits
from edge.settings import PhaseASettings
from mcp_gateway.limits import InputLimits
from models.settings import ModelSettings, retired_variables
from public_apis import PLATFORM_IDS
from sandbox.versions import DEFAULT_SEED, WORLD_VERSIONS

DEFAULT_HOME = Path("~/.kopa")
DEFAULT_SANDBOX_HOST = "127.0.0.1"
DEFAULT_SANDBOX_PORT = 8088
DEFAULT_CONFIG_FILE = "kopa.toml"


class SandboxSettings(BaseModel):
    """The sandbox upstream: which world it serves, where, with which keys and faults."""

    seed: int = Field(DEFAULT_SEED, description="seed of the generated world")
    world: str = Field("v1", description="world version: v1, or v2 (v1 after a round of real-style drift)")
    scale: float = Field(1.0, gt=0, le=1, description="fraction of the full world's generated entities")
    host: str = Field(DEFAULT_SANDBOX_HOST, description="interface the sandbox listens on")
    port: int = Field(DEFAULT_SANDBOX_PORT, ge=1, le=65535, description="TCP port of the sandbox")
    faults: str = Field("none", description="fault profile: none, flaky, hostile, or a JSON file path")
    keys: dict[str, SecretStr] = Field(default_factory=dict,
                                       description="accepted key per platform id; unset ids use the sandbox defaults")

    @field_validator("world")
    @classmethod
    def _known_world(cls, value: str) -> str:
        if value not in WORLD_VERSIONS:
            raise ValueError(f"unknown world version {value!r}; choose one of {', '.join(WORLD_VERSIONS)}")
        return value

    @field_validator("keys")
    @classmethod
    def _known_platforms(cls, value: dict[str, SecretStr]) -> dict[str, SecretStr]:
        unknown = sorted(set(value) - set(PLATFORM_IDS))
        if unknown:
            raise ValueError(f"unknown platform id(s) {unknown}; valid ids: {', '.join(PLATFORM_IDS)}")
        return value


class GatewaySettings(BaseModel):
    """The MCP gateway (`kopa serve`)."""

    host: str = Field("127.0.0.1", description="interface the gateway listens on")
    port: int = Field(8765, ge=1, le=65535, description="TCP port of the gateway")
    upstream: str = Field("sandbox", description="sandbox (embedded default), live, or replay")
    profile: str = Field("chat", description="chat: keys injected; bench: the model passes episode key tokens")
    tokens: list[SecretStr] = Field(default_factory=list,
                                    description="bearer tokens accepted on /mcp; none set: one is generated per start")
    key_file: Path | None = Field(None, description="owner-only JSON/TOML file of live platform keys")
    page_size: int = Field(100, ge=1, le=1000, description="tools per tools/list page")
    toolsets: dict[str, list[str]] = Field(default_factory=dict,
                                           description="extra virtual servers: name -> tool names, served at /mcp/<name>")
    pinned: list[str] = Field(default_factory=list, description="tools search mode always lists")
    audit_file: Path | None = Field(None, description="where `kopa serve` appends one JSON line per tool call "
                                                       "(the console tails it); default <home>/logs/audit.jsonl")
    limits: InputLimits = Field(default_factory=InputLimits, description=(
        "input limits, enforced before any upstream call: max_string_chars, max_arguments_bytes, max_array_items; "
        "max_request_bytes at /mcp (413), e.g. KOPA_GATEWAY__LIMITS__MAX_STRING_CHARS=2000"))


class RecorderSettings(BaseModel):
    """Cassettes: where bundles live and whether the gateway records or replays."""

    cassettes: Path | None = Field(None, description="folder of cassette bundles; default <home>/cassettes")
    mode: str = Field("live", description="live | record | replay | replay-or-record (the gateway's transport)")
    bundle: str | None = Field(None, description="bundle NAME or NAME@VERSION to record into or replay from")
    strict_catalog: bool = Field(False, description=(
        "replay: refuse to start when the bundle pins another tool catalog than this gateway serves (else one "
        "warning names the tools added, removed and changed)"))

    @field_validator("mode")
    @classmethod
    def _known_mode(cls, value: str) -> str:
        modes = ("live", "record", "replay", "replay-or-record")
        if value not in modes:
            raise ValueError(f"unknown recorder mode {value!r}; choose one of {', '.join(modes)}")
        return value


class MetaDBSettings(BaseModel):
    """The operational metadata DB (SQLModel over SQLite by default)."""

    url: str | None = Field(None, description="SQLAlchemy URL; default sqlite:///<home>/kopa.db")


class KopaSettings(BaseSettings):
    """All settings of the appliance."""

    model_config = SettingsConfigDict(env_prefix="KOPA_", env_nested_delimiter="__", extra="forbid")

    home: Path = Field(DEFAULT_HOME, description="where worlds, cassettes, runs and the metadata DB live")
    sandbox: SandboxSettings = SandboxSettings()
    gateway: GatewaySettings = GatewaySettings()
    recorder: RecorderSettings = RecorderSettings()
    metadb: MetaDBSettings = MetaDBSettings()
    episode: EpisodeLimits = Field(default_factory=EpisodeLimits, description=(
        "the limits of one agent episode, read by the bench, the agent endpoint and training: max_turns, max_calls, "
        "max_parallel_calls, max_tool_tokens, max_prompt_tokens, max_repeated_turns, episode_timeout_s, "
        "tool_timeout_s, and how tools are shown; kopa.toml [episode] or KOPA_EPISODE__MAX_TURNS=..."))
    models: ModelSettings = Field(default_factory=ModelSettings, description=(
        "the model endpoints, one profile per role (agent, judge, proposer, writer): kopa.toml [models.judge], "
        "or KOPA_MODELS__JUDGE__BASE_URL, _MODEL, _API_KEY, ...; a role without base_url runs its offline default"))
    edge: PhaseASettings = Field(default_factory=PhaseASettings, description=(
        "EDGE Phase A's hyperparameters (Table 9 by default): kopa.toml [edge] rounds = 5, or KOPA_EDGE__ROUNDS=5; "
        "`kopa edge graph build` options win over both"))

    @model_validator(mode="before")
    @classmethod
    def _no_retired_variables(cls, data: object) -> object:
        # a variable of an earlier release would otherwise be dropped without a word
        if found := retired_variables(os.environ):
            raise ValueError("settings of an earlier release are set; rename them:\n  " + "\n  ".join(found))
        return data

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource) -> tuple[PydanticBaseSettingsSource, ...]:
        config_file = Path(os.environ.get("KOPA_CONFIG", DEFAULT_CONFIG_FILE))
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if config_file.exists():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=config_file))
        elif "KOPA_CONFIG" in os.environ:
            raise FileNotFoundError(f"KOPA_CONFIG names {config_file}, which does not exist")
        return tuple(sources)

    @property
    def home_dir(self) -> Path:
        return self.home.expanduser()

    @property
    def cassettes_dir(self) -> Path:
        return (self.recorder.cassettes or self.home / "cassettes").expanduser()

    @property
    def metadb_url(self) -> str:
        return self.metadb.url or f"sqlite:///{self.home_dir / 'kopa.db'}"
