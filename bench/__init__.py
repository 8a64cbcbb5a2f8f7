"""bench: KOPA-Bench — task schema and task set, runner, agents, scorers, statistics, reports."""

from .episode import EpisodeOutcome, run_episode
from .prompt import build_system_prompt
from .stats import EpisodeResult, Summary, mean_ci, pass_at, pass_at_k, summarize
from .task import GoldenAction, ResponseType, RewardBasis, SystemState, Task, TaskLoadError, load_tasks

__all__ = [
    "EpisodeOutcome", "build_system_prompt", "run_episode",
    "EpisodeResult", "GoldenAction", "ResponseType", "RewardBasis", "Summary", "SystemState", "Task",
    "TaskLoadError", "load_tasks", "mean_ci", "pass_at", "pass_at_k", "summarize",
]
