"""Thompson sampling (Eq. 2): seeded, follows the larger posterior draw, explores at rate ε."""

from collections import Counter

import pytest

from edge.graph.posterior import EdgePosterior
from edge.graph.sampler import ThompsonSampler, trial_rng

GRAPH = {("a", "b"): EdgePosterior(50.0, 1.0), ("a", "c"): EdgePosterior(1.0, 50.0),
         ("b", "d"): EdgePosterior(2.0, 2.0), ("d", "a"): EdgePosterior(2.0, 2.0)}


def test_the_same_seed_round_and_trial_give_the_same_paths():
    sampler = ThompsonSampler(GRAPH, epsilon=0.1)
    first = [sampler.path(trial_rng(7, r, t), max_edges=3) for r in range(3) for t in range(20)]
    again = [ThompsonSampler(GRAPH, epsilon=0.1).path(trial_rng(7, r, t), max_edges=3) for r in range(3)
             for t in range(20)]
    assert first == again
    other = [sampler.path(trial_rng(8, r, t), max_edges=3) for r in range(3) for t in range(20)]
    assert other != first


def test_thompson_follows_the_strong_edge_and_epsilon_sets_the_exploration_floor():
    edges = [("a", "b"), ("a", "c")]
    greedy = Counter(ThompsonSampler(GRAPH, epsilon=0.0).choose(edges, trial_rng(0, 0, t)) for t in range(400))
    assert greedy[("a", "c")] == 0
    exploring = Counter(ThompsonSampler(GRAPH, epsilon=0.5).choose(edges, trial_rng(0, 0, t)) for t in range(2000))
    # half the time a uniform choice: the weak edge gets about a quarter of the picks
    assert 0.2 < exploring[("a", "c")] / 2000 < 0.3


def test_paths_follow_live_edges_without_revisiting_a_tool():
    sampler = ThompsonSampler(GRAPH, epsilon=0.3)
    for t in range(200):
        path = sampler.path(trial_rng(1, 0, t), max_edges=5)
        assert 1 <= len(path) <= 5
        assert all(edge in GRAPH for edge in path)
        assert all(path[i][1] == path[i + 1][0] for i in range(len(path) - 1))
        tools = [path[0][0]] + [e[1] for e in path]
        assert len(tools) == len(set(tools))
    assert ThompsonSampler({}, epsilon=0.1).path(trial_rng(0, 0, 0), max_edges=3) == []
    with pytest.raises(ValueError, match="epsilon"):
        ThompsonSampler(GRAPH, epsilon=1.5)



def test_undecided_edges_are_tried_first_each_about_as_often_and_then_thompson_decides():
    tested = {("a", "b"): EdgePosterior(50.0, 1.0, trials=40), ("b", "d"): EdgePosterior(2.0, 2.0, trials=2)}
    untested = {("a", "c"): EdgePosterior(1.0, 50.0, trials=1), ("c", "d"): EdgePosterior(2.0, 2.0),
                ("d", "a"): EdgePosterior(2.0, 2.0, trials=0)}
    sampler = ThompsonSampler({**tested, **untested}, epsilon=0.0, to_test=set(untested))
    firsts = Counter(sampler.path(trial_rng(0, 0, t), max_edges=1)[0] for t in range(3000))
    assert set(firsts) == set(untested)  # every path starts on an undecided edge, each a third of the time
    assert all(900 < n < 1100 for n in firsts.values())
    # from a tool with an undecided edge the path takes it, even against a much stronger decided one
    assert {sampler.choose([("a", "b"), ("a", "c")], trial_rng(1, 0, t)) for t in range(50)} == {("a", "c")}
    for t in range(200):  # paths stay paths: live edges, chained, no tool twice
        path = sampler.path(trial_rng(2, 0, t), max_edges=3)
        assert path[0] in untested and all(path[i][1] == path[i + 1][0] for i in range(len(path) - 1))
        tools = [path[0][0]] + [e[1] for e in path]
        assert len(tools) == len(set(tools))
    # with none undecided, Eq. 2 alone: the strong edge wins, starts are uniform tools again
    done = ThompsonSampler({**tested, ("a", "c"): EdgePosterior(1.0, 50.0, trials=2)}, epsilon=0.0)
    assert {done.choose([("a", "b"), ("a", "c")], trial_rng(1, 0, t)) for t in range(50)} == {("a", "b")}
    assert {done.path(trial_rng(3, 0, t), max_edges=1)[0][0] for t in range(100)} == {"a", "b"}


def test_an_edge_is_undecided_until_it_has_its_floor_of_trials_and_eq5_can_prune_or_trust_it():
    from edge.graph.sampler import undecided

    prior = EdgePosterior.from_feasibility(0.8, kappa=2.0)  # Beta(2.6, 1.4)
    after = {"": prior}
    for outcomes in ("F", "FF", "FFF", "S", "SS", "FS"):
        post = prior
        for o in outcomes:
            post = post.updated("missing_field" if o == "F" else "semantic_success")
        after[outcomes] = post
    graph = {("x", name or "fresh"): post for name, post in after.items()}
    out = undecided(graph, floor=2, tau=0.5, epsilon=0.3)
    # fewer than 2 trials: undecided; after two failures Pr[θ > 0.5] = 0.36 (neither < 0.3 nor > 0.7): still
    # undecided; a third failure decides (0.23: Eq. 5 prunes); two successes (0.93) or a failure then a
    # success (0.701) decide for the edge
    assert out == {("x", "fresh"), ("x", "F"), ("x", "S"), ("x", "FF")}
    # the cap: an edge tried 4 x floor times is decided, whatever its posterior
    assert undecided({("x", "y"): EdgePosterior(2.0, 2.0, trials=8)}, floor=2, tau=0.5, epsilon=0.3) == set()
    assert undecided({("x", "y"): EdgePosterior(2.0, 2.0, trials=7)}, floor=2, tau=0.5, epsilon=0.3) == {("x", "y")}
    assert undecided(graph, floor=0, tau=0.5, epsilon=0.3) == set()  # floor 0: Eq. 2 alone


def test_edges_whose_source_never_answered_a_start_with_a_record_are_left_to_thompson(tmp_path):
    """A tool that started 4 x floor paths and never returned a record cannot start a test of its edges."""
    from edge.graph.build import edges_to_test
    from edge.graph.store import GraphStore, TrialRecord
    from edge.settings import PhaseASettings

    store = GraphStore.create(tmp_path / "run.duckdb", meta={"seed": 0})
    prior = EdgePosterior.from_feasibility(0.8, kappa=2.0)
    store.add_edges([("barren", "b", 0.5, False, 0.8, [], prior), ("fertile", "d", 0.5, False, 0.8, [], prior),
                     ("young", "f", 0.5, False, 0.8, [], prior)])
    starts = [TrialRecord(0, m, 0, None, tool, {}, "generic_success") for m, tool in
              enumerate(["barren"] * 4 + ["fertile"] * 4 + ["young"] * 3)]
    store.commit_round(0, paths=11, trials=starts, posteriors={}, pruned=[],
                       observations=[("fertile", {}, {"x": 1})])
    starts = [TrialRecord(1, m, 0, None, tool, {}, "generic_success") for m, tool in enumerate(["barren"] * 4)]
    store.commit_round(1, paths=4, trials=starts, posteriors={}, pruned=[])
    assert store.first_calls() == {"barren": 8, "fertile": 4, "young": 3}
    settings = PhaseASettings()  # floor n_min = 2: barren after 8 starts without a record
    tested = edges_to_test(store, store.posteriors(), settings, store.inputs_seen())
    assert tested == {("fertile", "d"), ("young", "f")}
    assert edges_to_test(store, store.posteriors(), settings.with_options(explore_floor=0), {}) == set()
    store.close()
