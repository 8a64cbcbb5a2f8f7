"""The order in which a model sees a task's tools: a seeded shuffle, decided here and nowhere else.

    names = presented_order(task.id, task.available_tools, seed)

A task file lists its golden tools first, in the order the golden trajectory calls them, then the distractors
(``bench.taskset.build``; EDGE's ``to_task`` does the same). Shown in that order the list is the answer key: a
model that calls the listed tools one after another follows it, and a model trained on such items learns that
shortcut. So the task file keeps the *set* and every episode shows a shuffle of it, fixed by the task and the
episode's seed (the same for every rollout of that seed, another for another seed). ``bench.episode.run_episode``
applies it, and everything that shows a model a task's tools goes through an episode: the bench agents, the agent
endpoint's benchmark runs, EDGE's SFT and verl exports (their replayed episodes use seed 0) and training rollouts
(seed 0, so a rollout sees the tools in the order of the dataset row it plays).

Introduced with task-set v2's figures already published: runs before it showed the golden-first order, so a model's
figures before and after are not comparable (the oracle's and first-page's are: they do not read the list).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

__all__ = ["presented_order"]


def presented_order(task_id: str, tools: Sequence[str], seed: int) -> list[str]:
    """``tools`` in the order a model sees them in an episode of ``task_id`` with ``seed`` (module doc)."""
    digest = hashlib.sha256(f"tool-order\x00{task_id}\x00{seed}".encode()).digest()
    order = list(tools)
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order
