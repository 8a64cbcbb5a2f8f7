"""Training run folders, for every engine: ``<home>/train/runs/<recipe>-<UTC stamp>``, made on the spot.

    run_dir = new_run_dir(home, "grpo_1gpu_small")     # ~/.kopa/train/runs/grpo_1gpu_small-20250601T120000Z

A folder is made here, so that two runs of one recipe started in the same second never share one: the second
gets ``-2`` (then ``-3``, ...) by ``bench.options.new_unique_dir``, the rule every run folder of the appliance
follows; a default folder is never resumed by accident.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from bench.options import new_unique_dir, stamped_name

__all__ = ["new_run_dir", "run_dir_name", "runs_dir"]


def runs_dir(home: Path) -> Path:
    """Where training runs live: ``<home>/train/runs``."""
    return Path(home).expanduser() / "train" / "runs"


def run_dir_name(recipe: str, now: datetime | None = None) -> str:
    """``<recipe>-<UTC stamp to the second>``: the default name of a training run's folder."""
    return stamped_name(recipe, now)


def new_run_dir(home: Path, recipe: str, now: datetime | None = None) -> Path:
    """A new, empty run folder for ``recipe`` under ``<home>/train/runs`` (module doc).

    Raises:
        OSError: the runs folder cannot be written.
    """
    return new_unique_dir(runs_dir(home), run_dir_name(recipe, now))
