"""bench: KOPA-Bench — task schema and task set, runner, agents, scorers, statistics, reports.

    from bench import load_tasks, run_episode, summarize
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .episode import EpisodeOutcome, run_episode
    from .prompt import build_system_prompt
    from .stats import EpisodeResult, Summary, mean_ci, pass_at, pass_at_k, summarize
    from .task import GoldenAction, ResponseType, RewardBasis, SystemState, Task, TaskLoadError, load_tasks

# Names are imported on first use: `kopa` reads `bench.agents.registry` and `bench.options` at start-up (the
# `kopa bench run` help and checks) without loading the episode loop, the scorers and the catalog behind them.
_HOMES = {
    "episode": ("EpisodeOutcome", "run_episode"),
    "prompt": ("build_system_prompt",),
    "stats": ("EpisodeResult", "Summary", "mean_ci", "pass_at", "pass_at_k", "summarize"),
    "task": ("GoldenAction", "ResponseType", "RewardBasis", "SystemState", "Task", "TaskLoadError", "load_tasks"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)
