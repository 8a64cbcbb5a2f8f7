"""EDGE's settings: Phase A's hyperparameters (paper Table 9), with the paper's values as defaults.

    settings = PhaseASettings()                                # Table 9
    settings = PhaseASettings(rounds=5, trials=50, seed=3)     # a small run
    settings = KopaSettings().edge.with_options(seed=3)        # kopa.toml [edge], KOPA_EDGE__<NAME>, then options

They are the ``edge`` section of the appliance's one settings root (``appliance.config.KopaSettings``): kopa.toml
``[edge]`` (``rounds = 5``) or ``KOPA_EDGE__ROUNDS=5``, the environment winning over the file. This module imports
nothing heavy, since the settings root reads it at every ``kopa`` start.

The binding proposer's chat endpoint is configured apart (``KopaSettings().models.proposer``,
``KOPA_MODELS__PROPOSER__<NAME>``): ``PhaseASettings`` goes into a run's meta, and the API key must never land there.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class PhaseASettings(BaseModel):
    """Phase A's hyperparameters (module doc); the ``edge`` section of ``KopaSettings``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k_intra: int = Field(15, ge=0, description="K: candidate neighbours per source tool on its own platform")
    k_cross: int = Field(10, ge=0, description="Kx: candidate neighbours per source tool on other platforms")
    s_min: float = Field(0.3, ge=0, le=1, description="minimum judged feasibility s_e to admit an edge"
                         " (not a similarity floor)")
    kappa: float = Field(2.0, ge=0, description="κ: strength of the feasibility-anchored Beta prior")
    rounds: int = Field(100, ge=1, description="T: graph-update iterations")
    trials: int = Field(500, ge=1, description="M: paths sampled per iteration")
    epsilon_explore: float = Field(0.1, ge=0, le=1, description="ε_exp: probability of a uniformly random edge")
    tau_prune: float = Field(0.5, gt=0, lt=1, description="τ_prune: viability threshold of Eq. 5")
    epsilon_prune: float = Field(0.3, gt=0, lt=1, description="ε_prune: pruning confidence level of Eq. 5")
    n_min: int = Field(2, ge=1, description="n_min: trials an edge needs before it can be pruned")
    explore_floor: int | None = Field(None, ge=0, description="trials an edge gets, and more (up to 4x) while Eq. 5 "
                                      "can neither prune nor trust it, before Thompson sampling chooses between it "
                                      "and others (edge.graph.sampler); None: n_min; 0: Eq. 2 alone")
    max_path_edges: int = Field(3, ge=1, description="edges per sampled path (a path of n edges makes n+1 calls)")
    environmental_retries: int = Field(2, ge=0, description="retries of a call that met an environmental fault")
    seed: int = Field(0, description="seed of every random choice (sampling, exploration, record choice)")

    @model_validator(mode="after")
    def _some_neighbours(self) -> PhaseASettings:
        if self.k_intra + self.k_cross == 0:
            raise ValueError("k_intra and k_cross are both 0: the skeleton would have no edge")
        return self

    def with_options(self, **options: object) -> PhaseASettings:
        """These settings with ``options`` over them (command-line options; None: not given), validated again.

        Raises:
            pydantic.ValidationError: an option is out of range.
        """
        given = {name: value for name, value in options.items() if value is not None}
        return type(self).model_validate({**self.model_dump(), **given})
