"""Thompson sampling over the graph's edges (paper Eq. 2), with an ε-greedy floor on exploration and a floor of
trials per edge.

From the current tool, draw θ̃ ~ Beta(α, β) for each live outgoing edge and follow the largest; with
probability ε follow a uniformly random one instead. A path stops after ``max_edges`` edges or where no live
edge leaves.

The trial floor (``min_trials``, by default Eq. 5's n_min): an edge tried fewer times than that is *untested*.
A path starts on an untested edge drawn uniformly among all of them while any is left (else at a source tool
drawn uniformly), and from each tool it follows an untested outgoing edge, drawn uniformly, before Thompson
sampling chooses. Why: the pruning rule needs n_min trials of an edge before it may prune it, and Thompson
sampling alone, started at uniform tools, spends a round's paths on the edges that already succeeded. On the full
catalog (32,221 edges, T = 100, M = 500) most edges were never tried twice, 1 % was pruned, and the refined
graph's held-out success rose half a point (81.5 → 82.0 %) where the paper's rose 12.5. With the floor every
edge is tested before the posteriors decide between them, which is what Eq. 5 presumes. ``min_trials=0`` is
Eq. 2 alone, from uniform start tools.

Every draw comes from a generator seeded by (seed, round, trial): a round's paths are the same whatever
ran before it in this process, so a resumed run samples exactly what an uninterrupted one would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .posterior import EdgePosterior

EdgeKey = tuple[str, str]  # (source tool, target tool)


def trial_rng(seed: int, round_no: int, trial: int) -> np.random.Generator:
    return np.random.default_rng([seed, round_no, trial])


class ThompsonSampler:
    def __init__(self, posteriors: Mapping[EdgeKey, EdgePosterior], *, epsilon: float, min_trials: int = 0):
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        if min_trials < 0:
            raise ValueError(f"min_trials must be >= 0, got {min_trials}")
        self.posteriors, self.epsilon, self.min_trials = posteriors, epsilon, min_trials
        self.outgoing: dict[str, list[EdgeKey]] = {}
        for key in sorted(posteriors):
            self.outgoing.setdefault(key[0], []).append(key)
        self.starts = sorted(self.outgoing)
        self.untested = [key for key in sorted(posteriors) if self._untested(key)]

    def _untested(self, edge: EdgeKey) -> bool:
        return self.posteriors[edge].trials < self.min_trials

    def choose(self, edges: Sequence[EdgeKey], rng: np.random.Generator) -> EdgeKey:
        """One edge among ``edges``: an untested one drawn uniformly if there is one, else by Eq. 2."""
        if not edges:
            raise ValueError("no edge to choose from")
        untested = [e for e in edges if self._untested(e)]
        if untested:
            return untested[int(rng.integers(len(untested)))]
        if rng.random() < self.epsilon:
            return edges[int(rng.integers(len(edges)))]
        draws = [rng.beta(self.posteriors[e].alpha, self.posteriors[e].beta) for e in edges]
        return edges[int(np.argmax(draws))]

    def path(self, rng: np.random.Generator, *, max_edges: int) -> list[EdgeKey]:
        """A path of 1..max_edges edges (empty when the graph has no edge left); never revisits a tool."""
        if not self.starts:
            return []
        if self.untested:  # start on an untested edge: every one of them equally likely
            first = self.untested[int(rng.integers(len(self.untested)))]
            path, node, seen = [first], first[1], {first[0], first[1]}
        else:
            node = self.starts[int(rng.integers(len(self.starts)))]
            seen, path = {node}, []
        while len(path) < max_edges:
            edges = [e for e in self.outgoing.get(node, ()) if e[1] not in seen]
            if not edges:
                break
            edge = self.choose(edges, rng)
            path.append(edge)
            node = edge[1]
            seen.add(node)
        return path
