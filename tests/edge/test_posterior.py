"""Table 7 updates, the feasibility prior, Eq. 5's pruning rule at its boundary, and Table 9's settings."""

import pytest
from pydantic import ValidationError
from scipy.special import betainc

from edge.graph.outcomes import TABLE_7, is_environmental, is_structural, update_for
from edge.graph.posterior import EdgePosterior
from appliance.config import KopaSettings
from edge.settings import PhaseASettings
from mcp_gateway.runtime.result import Outcome


@pytest.mark.parametrize(("outcome", "d_alpha", "d_beta"), [
    ("semantic_success", 1.0, 0.0), ("generic_success", 0.3, 0.0), ("schema_mismatch", 0.0, 1.5),
    ("missing_field", 0.0, 1.0), ("rate_limit", 0.0, 0.1), ("timeout", 0.0, 0.3), ("server_error", 0.0, 0.3),
    ("auth_error", 0.0, 0.5), ("endpoint_unavailable", 0.0, 0.8), ("uncategorized", 0.0, 0.5),
])
def test_each_table_7_class_moves_the_posterior_by_its_weight(outcome, d_alpha, d_beta):
    before = EdgePosterior(2.0, 3.0, trials=4)
    after = before.updated(outcome)
    assert after.alpha == pytest.approx(2.0 + d_alpha) and after.beta == pytest.approx(3.0 + d_beta)
    assert after.trials == 5


def test_every_outcome_class_has_a_weight_and_a_replay_miss_is_no_evidence():
    assert set(TABLE_7) == set(Outcome)
    post = EdgePosterior(2.0, 3.0, trials=1)
    assert post.updated(Outcome.REPLAY_MISS) == post
    assert update_for("replay_miss").alpha == update_for("replay_miss").beta == 0.0


def test_structural_faults_weigh_more_than_environmental_ones():
    structural = [o for o in Outcome if is_structural(o)]
    environmental = [o for o in Outcome if is_environmental(o)]
    assert set(structural) == {Outcome.SCHEMA_MISMATCH, Outcome.MISSING_FIELD}
    assert min(update_for(o).beta for o in structural) > max(update_for(o).beta for o in environmental)


def test_prior_is_anchored_to_feasibility():
    assert EdgePosterior.from_feasibility(0.8, kappa=2.0) == EdgePosterior(2.6, 1.4)
    assert EdgePosterior.from_feasibility(0.0, kappa=2.0) == EdgePosterior(1.0, 3.0)
    with pytest.raises(ValueError, match="feasibility must be in"):
        EdgePosterior.from_feasibility(1.2, kappa=2.0)
    with pytest.raises(ValueError, match="must be positive"):
        EdgePosterior(0.0, 1.0)


def test_viability_is_the_regularized_incomplete_beta_complement():
    post = EdgePosterior(2.6, 4.4)
    assert post.viability(0.5) == pytest.approx(1 - betainc(2.6, 4.4, 0.5))


def test_pruning_at_its_boundary():
    # Beta(1, 3): Pr[θ > 0.5] = 0.5^3 = 0.125 < 0.3, so it is prunable once it has n_min trials
    low = EdgePosterior(1.0, 3.0, trials=1)
    assert low.viability(0.5) == pytest.approx(0.125)
    assert not low.prunable(tau=0.5, epsilon=0.3, n_min=2)  # one trial short
    assert EdgePosterior(1.0, 3.0, trials=2).prunable(tau=0.5, epsilon=0.3, n_min=2)
    # ε exactly at the viability is not below it: kept
    assert not EdgePosterior(1.0, 3.0, trials=2).prunable(tau=0.5, epsilon=0.125, n_min=2)
    assert EdgePosterior(1.0, 3.0, trials=2).prunable(tau=0.5, epsilon=0.1250001, n_min=2)
    # a well-supported edge survives: Beta(5, 2) has Pr[θ > 0.5] ≈ 0.89
    assert not EdgePosterior(5.0, 2.0, trials=10).prunable(tau=0.5, epsilon=0.3, n_min=2)


def test_two_structural_failures_prune_a_lukewarm_edge_but_two_timeouts_do_not():
    start = EdgePosterior.from_feasibility(0.5, kappa=2.0)  # Beta(2, 2)
    broken = start.updated("schema_mismatch").updated("schema_mismatch")  # Beta(2, 5)
    flaky = start.updated("timeout").updated("timeout")  # Beta(2, 2.6)
    assert broken.prunable(tau=0.5, epsilon=0.3, n_min=2)
    assert not flaky.prunable(tau=0.5, epsilon=0.3, n_min=2)


def test_settings_default_to_table_9_and_refuse_bad_values(monkeypatch):
    s = PhaseASettings()
    assert (s.k_intra, s.k_cross, s.s_min, s.kappa, s.rounds, s.trials) == (15, 10, 0.3, 2.0, 100, 500)
    assert (s.epsilon_explore, s.tau_prune, s.epsilon_prune, s.n_min) == (0.1, 0.5, 0.3, 2)
    with pytest.raises(ValidationError, match="tau_prune"):
        PhaseASettings(tau_prune=1.5)
    with pytest.raises(ValidationError, match="both 0"):
        PhaseASettings(k_intra=0, k_cross=0)
    # the edge section of the one settings root (kopa.toml [edge], KOPA_EDGE__<NAME>), then the options
    monkeypatch.setenv("KOPA_EDGE__ROUNDS", "7")
    from_env = KopaSettings().edge.with_options(trials=20, seed=None)
    assert (from_env.rounds, from_env.trials, from_env.seed) == (7, 20, 0)
    with pytest.raises(ValidationError, match="trials"):
        from_env.with_options(trials=0)
    monkeypatch.setenv("KOPA_EDGE__N_MIN", "zero")
    with pytest.raises(ValidationError, match="n_min"):
        KopaSettings()
