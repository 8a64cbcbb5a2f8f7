"""Phase A's hyperparameters (paper Table 9), as settings with the paper's values as defaults.

    settings = PhaseASettings()                                # Table 9
    settings = PhaseASettings(rounds=5, trials=50, seed=3)     # a small run

Environment variables ``KOPA_EDGE__<NAME>`` override them when read through ``PhaseASettings.from_env()``.

The binding proposer's chat endpoint is configured apart (``KopaSettings().models.proposer``,
``KOPA_MODELS__PROPOSER__<NAME>``): ``PhaseASettings`` goes into a run's meta, and the API key must never land there.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class PhaseASettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    k_intra: int = Field(15, ge=0, description="K: candidate neighbours per source tool on its own platform")
    k_cross: int = Field(10, ge=0, description="Kx: candidate neighbours per source tool on other platforms")
    s_min: float = Field(0.3, ge=0, le=1, description="minimum similarity / feasibility to admit an edge")
    kappa: float = Field(2.0, ge=0, description="κ: strength of the feasibility-anchored Beta prior")
    rounds: int = Field(100, ge=1, description="T: graph-update iterations")
    trials: int = Field(500, ge=1, description="M: paths sampled per iteration")
    epsilon_explore: float = Field(0.1, ge=0, le=1, description="ε_exp: probability of a uniformly random edge")
    tau_prune: float = Field(0.5, gt=0, lt=1, description="τ_prune: viability threshold of Eq. 5")
    epsilon_prune: float = Field(0.3, gt=0, lt=1, description="ε_prune: pruning confidence level of Eq. 5")
    n_min: int = Field(2, ge=1, description="n_min: trials an edge needs before it can be pruned")
    max_path_edges: int = Field(3, ge=1, description="edges per sampled path (a path of n edges makes n+1 calls)")
    environmental_retries: int = Field(2, ge=0, description="retries of a call that met an environmental fault")
    seed: int = Field(0, description="seed of every random choice (sampling, exploration, record choice)")

    @model_validator(mode="after")
    def _some_neighbours(self) -> PhaseASettings:
        if self.k_intra + self.k_cross == 0:
            raise ValueError("k_intra and k_cross are both 0: the skeleton would have no edge")
        return self

    @classmethod
    def from_env(cls, **overrides: object) -> PhaseASettings:
        """Defaults, then ``KOPA_EDGE__*`` variables, then ``overrides`` (e.g. command-line options)."""
        env = _EdgeEnv().model_dump(exclude_none=True)
        return cls.model_validate({**env, **{k: v for k, v in overrides.items() if v is not None}})


class _EdgeEnv(BaseSettings):
    """Only the variables that are set; validation happens in ``PhaseASettings``."""

    model_config = SettingsConfigDict(env_prefix="KOPA_EDGE__", extra="ignore")

    k_intra: int | None = None
    k_cross: int | None = None
    s_min: float | None = None
    kappa: float | None = None
    rounds: int | None = None
    trials: int | None = None
    epsilon_explore: float | None = None
    tau_prune: float | None = None
    epsilon_prune: float | None = None
    n_min: int | None = None
    max_path_edges: int | None = None
    environmental_retries: int | None = None
    seed: int | None = None
