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


def test_untested_edges_are_tried_first_each_about_as_often_and_then_thompson_decides():
    tested = {("a", "b"): EdgePosterior(50.0, 1.0, trials=40), ("b", "d"): EdgePosterior(2.0, 2.0, trials=2)}
    untested = {("a", "c"): EdgePosterior(1.0, 50.0, trials=1), ("c", "d"): EdgePosterior(2.0, 2.0),
                ("d", "a"): EdgePosterior(2.0, 2.0, trials=0)}
    sampler = ThompsonSampler({**tested, **untested}, epsilon=0.0, min_trials=2)
    firsts = Counter(sampler.path(trial_rng(0, 0, t), max_edges=1)[0] for t in range(3000))
    assert set(firsts) == set(untested)  # every path starts on an untested edge, each a third of the time
    assert all(900 < n < 1100 for n in firsts.values())
    # from a tool with an untested edge the path takes it, even against a much stronger tested one
    assert {sampler.choose([("a", "b"), ("a", "c")], trial_rng(1, 0, t)) for t in range(50)} == {("a", "c")}
    for t in range(200):  # paths stay paths: live edges, chained, no tool twice
        path = sampler.path(trial_rng(2, 0, t), max_edges=3)
        assert path[0] in untested and all(path[i][1] == path[i + 1][0] for i in range(len(path) - 1))
        tools = [path[0][0]] + [e[1] for e in path]
        assert len(tools) == len(set(tools))
    # once every edge has its trials, Eq. 2 alone: the strong edge wins, starts are uniform tools again
    done = ThompsonSampler({**tested, ("a", "c"): EdgePosterior(1.0, 50.0, trials=2)}, epsilon=0.0, min_trials=2)
    assert {done.choose([("a", "b"), ("a", "c")], trial_rng(1, 0, t)) for t in range(50)} == {("a", "b")}
    assert {done.path(trial_rng(3, 0, t), max_edges=1)[0][0] for t in range(100)} == {"a", "b"}
    with pytest.raises(ValueError, match="min_trials"):
        ThompsonSampler(GRAPH, epsilon=0.1, min_trials=-1)
