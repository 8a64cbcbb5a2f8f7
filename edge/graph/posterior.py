"""An edge's Beta posterior: the feasibility-anchored prior, Table 7 updates and the pruning rule (Eq. 5).

    post = EdgePosterior.from_feasibility(0.8, kappa=2.0)      # Beta(1 + κs, 1 + κ(1 − s)) = Beta(2.6, 1.4)
    post = post.updated(Outcome.SEMANTIC_SUCCESS)               # α + 1.0, one more trial
    post.viability(0.5)                                         # Pr[θ > τ] = 1 − I_τ(α, β)
    post.prunable(tau=0.5, epsilon=0.3, n_min=2)                # n ≥ n_min and Pr[θ > τ] < ε

Immutable, so a posterior can be stored, compared and replayed from the trial log without surprises.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mcp_gateway.runtime.result import Outcome

from .outcomes import update_for


@dataclass(frozen=True)
class EdgePosterior:
    alpha: float
    beta: float
    trials: int = 0  # executions that produced evidence (a replay miss is not one)

    def __post_init__(self) -> None:
        if self.alpha <= 0 or self.beta <= 0:
            raise ValueError(f"Beta parameters must be positive, got α={self.alpha}, β={self.beta}")

    @classmethod
    def from_feasibility(cls, feasibility: float, *, kappa: float) -> EdgePosterior:
        if not 0.0 <= feasibility <= 1.0:
            raise ValueError(f"feasibility must be in [0, 1], got {feasibility}")
        return cls(1.0 + kappa * feasibility, 1.0 + kappa * (1.0 - feasibility))

    def updated(self, outcome: Outcome | str) -> EdgePosterior:
        step = update_for(outcome)
        if step.alpha == 0.0 and step.beta == 0.0:
            return self  # no evidence (a replay miss): neither the posterior nor the trial count moves
        return replace(self, alpha=self.alpha + step.alpha, beta=self.beta + step.beta, trials=self.trials + 1)

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)

    def viability(self, tau: float) -> float:
        """Pr[θ > τ] under Beta(α, β): the complement of the regularized incomplete beta function."""
        from scipy.stats import beta as beta_dist  # ~0.9 s to import: not for every `kopa` command

        return float(beta_dist.sf(tau, self.alpha, self.beta))

    def prunable(self, *, tau: float, epsilon: float, n_min: int) -> bool:
        """Eq. 5: enough trials, and the posterior is confident the success rate is below τ."""
        return self.trials >= n_min and self.viability(tau) < epsilon
