"""Statistics: pass@k (Chen et al. 2021), Action over solved tasks, per-domain rows, Student-t seed intervals."""

import math

import pytest
from pydantic import ValidationError

from bench.stats import (
    DomainRow,
    EpisodeResult,
    MeanCI,
    action_score,
    mean_ci,
    pass_at,
    pass_at_1_by_seed,
    pass_at_k,
    summarize,
)


def episodes(task_id, domain, outcomes, seed=0):
    """One episode per (passed, action) pair, rollouts numbered in order."""
    return [EpisodeResult(task_id=task_id, domain=domain, rollout=r, seed=seed, passed=p, action=a)
            for r, (p, a) in enumerate(outcomes)]


# T1 passes 2 of 4, T2 none, T3 all four.
RUN = (episodes("T1", "finance", [(True, 0.8), (True, 0.6), (False, 0.1), (False, 0.2)])
       + episodes("T2", "finance", [(False, 0.5)] * 4)
       + episodes("T3", "law", [(True, 1.0), (True, 0.9), (True, 0.8), (True, 0.7)]))


# --- pass@k for one task -------------------------------------------------------------------

@pytest.mark.parametrize("n, c, k, expected", [
    (4, 0, 1, 0.0),          # c = 0: never
    (4, 0, 4, 0.0),
    (4, 4, 1, 1.0),          # c = n: always
    (4, 4, 4, 1.0),
    (4, 1, 1, 0.25),         # pass@1 is c/n
    (4, 1, 4, 1.0),          # n - c < k: every k-subset holds the pass
    (4, 2, 2, 1 - 1 / 6),    # 1 - C(2,2)/C(4,2)
    (5, 2, 3, 0.9),          # 1 - C(3,3)/C(5,3) = 1 - 1/10
    (10, 3, 5, 11 / 12),     # 1 - C(7,5)/C(10,5) = 1 - 21/252
])
def test_pass_at_k_matches_the_combinatorial_definition(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_is_stable_where_binomials_are_huge():
    n, c, k = 2000, 7, 300
    exact = 1 - math.comb(n - c, k) / math.comb(n, k)  # Python ints: exact, only the division rounds
    assert pass_at_k(n, c, k) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("n, c, k, message", [
    (3, 1, 4, "pass@4 needs at least 4 episodes per task, got n=3"),
    (4, 5, 1, "passes c=5 must lie in 0..n=4"),
    (4, -1, 1, "passes c=-1 must lie in 0..n=4"),
    (4, 1, 0, "k must be >= 1, got 0"),
])
def test_pass_at_k_refuses_impossible_counts(n, c, k, message):
    with pytest.raises(ValueError, match=message):
        pass_at_k(n, c, k)


# --- over a run ----------------------------------------------------------------------------

def test_pass_at_averages_the_per_task_estimates():
    assert pass_at(RUN, 1) == pytest.approx((0.5 + 0 + 1) / 3)
    assert pass_at(RUN, 2) == pytest.approx((5 / 6 + 0 + 1) / 3)
    assert pass_at(RUN, 4) == pytest.approx(2 / 3)


def test_pass_at_names_the_task_with_too_few_episodes():
    short = RUN + episodes("T4", "law", [(True, 1.0)] * 2)
    with pytest.raises(ValueError, match="task 'T4': pass@4 needs at least 4 episodes"):
        pass_at(short, 4)


def test_action_averages_passing_episodes_per_task_then_solved_tasks_only():
    # T1: (0.8 + 0.6)/2 = 0.7 (its failing episodes do not count); T2 unsolved, left out; T3: 0.85.
    # Pooling the six passing episodes instead would give 0.8.
    assert action_score(RUN) == pytest.approx((0.7 + 0.85) / 2)


def test_action_is_none_when_nothing_is_solved():
    assert action_score(episodes("T2", "finance", [(False, 0.5)] * 4)) is None


def test_summary_has_overall_and_per_domain_rows():
    summary = summarize(RUN, ks=(1, 4))
    assert (summary.n_tasks, summary.n_episodes) == (3, 12)
    assert summary.pass_at == pytest.approx({1: 0.5, 4: 2 / 3})
    assert summary.action == pytest.approx(0.775)
    assert summary.by_domain == {
        "finance": DomainRow(n_tasks=2, pass_at={1: 0.25, 4: 0.5}, action=pytest.approx(0.7)),
        "law": DomainRow(n_tasks=1, pass_at={1: 1.0, 4: 1.0}, action=pytest.approx(0.85)),
    }
    assert summary.seed_ci is None  # one seed: no interval


def test_inconsistent_results_are_refused():
    with pytest.raises(ValueError, match="episode task='T1' seed=0 rollout=0 appears twice"):
        summarize(RUN + RUN[:1])
    with pytest.raises(ValueError, match="task 'T1' is listed under domains 'finance' and 'law'"):
        summarize(RUN + [EpisodeResult(task_id="T1", domain="law", rollout=9, seed=0, passed=True, action=1.0)])
    with pytest.raises(ValueError, match="no episode results"):
        summarize([])
    with pytest.raises(ValidationError, match="action"):
        EpisodeResult(task_id="T1", domain="law", rollout=0, seed=0, passed=True, action=1.5)


# --- seeds and confidence intervals -----------------------------------------------------------

def test_student_t_interval_reproduces_the_sleep_data_textbook_example():
    # Student (1908) / R's `sleep`: paired differences of extra sleep, t.test gives mean 1.58 and the
    # 95% interval [0.7001142, 2.4598858] (df = 9).
    differences = [1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4]
    ci = mean_ci(differences)
    assert (ci.n, ci.confidence) == (10, 0.95)
    assert ci.mean == pytest.approx(1.58)
    assert (ci.low, ci.high) == (pytest.approx(0.7001142, abs=1e-7), pytest.approx(2.4598858, abs=1e-7))


def test_the_interval_uses_t_not_the_normal_quantile():
    # n = 8 seeds as in Table 4: t_{0.975, 7} = 2.3646 (tables), not 1.96.
    values = [0.30, 0.28, 0.31, 0.29, 0.27, 0.32, 0.30, 0.29]  # mean 0.295, sum of squares 0.0018
    ci = mean_ci(values)
    assert ci.half_width == pytest.approx(2.364624 * math.sqrt(0.0018 / 7) / math.sqrt(8), rel=1e-6)


def test_interval_bounds_read_as_table_4_reports_them():
    ci = MeanCI(mean=0.2931, half_width=0.0169, n=8, confidence=0.95)  # Qwen3.5-4B (Ours), Appendix C
    assert (round(ci.low, 4), round(ci.high, 4), round(ci.width, 4)) == (0.2762, 0.31, 0.0338)


def test_an_interval_needs_two_seeds_and_a_sensible_confidence():
    with pytest.raises(ValueError, match="needs at least 2 values"):
        mean_ci([0.3])
    with pytest.raises(ValueError, match=r"confidence must lie in \(0, 1\)"):
        mean_ci([0.3, 0.4], confidence=95)


def test_seed_interval_is_over_per_seed_pass_at_1():
    # Two tasks, two rollouts per seed: seed 0 passes 2 of 4 episodes, seed 1 3 of 4, seed 2 all.
    outcomes = {0: [(True, False), (True, False)], 1: [(True, True), (True, False)], 2: [(True, True), (True, True)]}
    results = [EpisodeResult(task_id=f"T{t}", domain="traffic", rollout=r, seed=seed, passed=passed, action=1.0)
               for seed, tasks in outcomes.items() for t, rollouts in enumerate(tasks) for r, passed in enumerate(rollouts)]
    assert pass_at_1_by_seed(results) == {0: 0.5, 1: 0.75, 2: 1.0}
    ci = summarize(results).seed_ci
    assert ci is not None and ci.n == 3 and ci.mean == pytest.approx(0.75)
    assert ci.half_width == pytest.approx(4.302653 * 0.25 / math.sqrt(3), rel=1e-6)  # t_{0.975, 2}, s = 0.25
