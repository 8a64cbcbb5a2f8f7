"""Thompson sampling over the graph's edges (paper Eq. 2), with an ε-greedy floor on exploration.

From the current tool, draw θ̃ ~ Beta(α, β) for each live outgoing edge and follow the largest; with
probability ε follow a uniformly random one instead. A path starts at a source tool drawn uniformly and
stops after ``max_edges`` edges or where no live edge leaves.

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
    def __init__(self, posteriors: Mapping[EdgeKey, EdgePosterior], *, epsilon: float):
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        self.posteriors, self.epsilon = posteriors, epsilon
        self.outgoing: dict[str, list[EdgeKey]] = {}
        for key in sorted(posteriors):
            self.outgoing.setdefault(key[0], []).append(key)
        self.starts = sorted(self.outgoing)

    def choose(self, edges: Sequence[EdgeKey], rng: np.random.Generator) -> EdgeKey:
        """One edge among ``edges`` by Eq. 2."""
        if not edges:
            raise ValueError("no edge to choose from")
        if rng.random() < self.epsilon:
            return edges[int(rng.integers(len(edges)))]
        draws = [rng.beta(self.posteriors[e].alpha, self.posteriors[e].beta) for e in edges]
        return edges[int(np.argmax(draws))]

    def path(self, rng: np.random.Generator, *, max_edges: int) -> list[EdgeKey]:
        """A path of 1..max_edges edges (empty when the graph has no edge left); never revisits a tool."""
        if not self.starts:
            return []
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
