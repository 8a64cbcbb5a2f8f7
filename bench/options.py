"""The options of one benchmark run, checked once, for every way a run starts: ``kopa bench run``, ``kopa bench
demo`` and the console's bench job (all three run them with ``bench.run_flow.run_bench``).

    from bench.options import BenchRunOptions, new_run_dir, parse_seeds
    options = BenchRunOptions(agent="oracle", tasks=Path("tasks.jsonl"), seeds=parse_seeds("2"), rollouts=2)
    out_dir = options.run_dir or new_run_dir(home / "runs")      # runs/bench-20250601T120000123456Z

The options are the one place of the defaults (``kopa bench run``'s flags default to ``BenchRunOptions.rollouts``
and so on) and of the checks: a bad value fails when the options are made, with the one-line error ``kopa bench
run`` prints (it names the option and the valid values). Where the task file and the bundle are is checked by the
run itself.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .agents.registry import AGENTS

__all__ = ["MODES", "RUN_DIR_PREFIX", "UPSTREAMS", "BenchRunOptions", "new_run_dir", "new_unique_dir", "parse_seeds",
           "run_dir_name", "stamped_name"]

UPSTREAMS = ("replay", "sandbox", "live")  # replay is the benchmark; the other two must be asked for
MODES = ("replay", "replay-or-record")  # replay-or-record (with the sandbox): the coverage pass
RUN_DIR_PREFIX = "bench"


@dataclass(frozen=True, kw_only=True)
class BenchRunOptions:
    """What a benchmark run is asked to do (``kopa bench run``'s options, one field each)."""

    agent: str
    """a name of ``bench.agents.AGENTS``"""
    tasks: Path | None = None
    """the task set (JSONL), all pinned to one cassette bundle; None: the shipped KOPA-Bench set"""
    rollouts: int = 4
    """rollouts per task and seed (pass@k uses k = rollouts)"""
    seeds: tuple[int, ...] = (0,)
    """the seeds, at least one, none twice (``parse_seeds`` reads ``--seeds``: a count or a list)"""
    concurrency: int = 1
    """episodes run at once"""
    run_dir: Path | None = None
    """where the run's files go (an existing run is resumed); None: a new ``<home>/runs/bench-<stamp>``"""
    upstream: str = "replay"
    """replay (the tasks' bundle) | sandbox | live"""
    resume: bool = True
    """skip the episodes already in the run directory"""
    cassettes: Path | None = None
    """the cassettes folder holding the tasks' bundle; None: the home's if it has it, else the shipped one"""
    per_domain: int | None = None
    """only the first N tasks of each domain (a quick run)"""
    max_turns: int | None = None
    """assistant turns per episode for a model agent; None: the agent's default (15, Appendix I)"""
    base_url: str | None = None
    """the endpoint a model agent talks to, over the agent profile's (agents with ``takes_endpoint``)"""
    model: str | None = None
    """the model name at ``base_url``, over the agent profile's"""
    mode: str = "replay"
    """replay (strict) | replay-or-record (with the sandbox upstream: misses recorded into a new bundle version)"""
    strict_catalog: bool = False
    """refuse to start when the tasks' bundle pins another tool catalog than the running one (else: one warning)"""

    def __post_init__(self) -> None:
        """Raises: ValueError: a bad value; one line naming the option, the value and what would do."""
        if self.agent not in AGENTS:
            raise ValueError(f"--agent {self.agent!r}: choose one of {', '.join(AGENTS)}")
        if self.upstream not in UPSTREAMS:
            raise ValueError(f"--upstream {self.upstream!r}: choose one of {', '.join(UPSTREAMS)}")
        if self.mode not in MODES:
            raise ValueError(f"--mode {self.mode!r}: choose one of {', '.join(MODES)}")
        if self.mode == "replay-or-record" and self.upstream != "sandbox":
            raise ValueError("--mode replay-or-record records the pinned bundle's misses from the sandbox: add "
                             "--upstream sandbox")
        if (self.base_url or self.model) and not AGENTS[self.agent].takes_endpoint:
            takers = " or ".join(name for name, entry in AGENTS.items() if entry.takes_endpoint)
            raise ValueError(f"--base-url and --model go with --agent {takers}, not {self.agent}")
        for option, value in (("--rollouts", self.rollouts), ("--concurrency", self.concurrency),
                              ("--per-domain", self.per_domain), ("--max-turns", self.max_turns)):
            if value is not None and value < 1:
                raise ValueError(f"{option} {value}: give at least 1")
        seeds = tuple(self.seeds)
        if not seeds or len(set(seeds)) != len(seeds):
            raise ValueError(f"--seeds {','.join(map(str, seeds))!r}: give at least one seed, none twice")
        object.__setattr__(self, "seeds", seeds)  # a list given: kept as the tuple a frozen value holds

    def agent_overrides(self) -> dict[str, Any]:
        """What goes to the agent over its profile: ``max_turns``, ``base_url``, ``model`` (those given)."""
        given = {"max_turns": self.max_turns, "base_url": self.base_url, "model": self.model}
        return {key: value for key, value in given.items() if value is not None}


def parse_seeds(text: str) -> list[int]:
    """``--seeds``: '8' → eight seeds [0, …, 7] (the paper's n = 8, Appendix C); '0,3,5' → exactly those; a
    one-line error for text that is neither. The seeds themselves (at least one, none twice) are checked by
    ``BenchRunOptions``, the one place that checks them.
    """
    text = text.strip()
    if text.isdigit():
        count = int(text)
        if count < 1:
            raise ValueError(f"--seeds {text!r}: a single number is how many seeds to run (0 … N-1); give 1 or more, "
                             "or list seeds with commas, e.g. 0,1,2")
        return list(range(count))
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--seeds {text!r}: give a count (8 → seeds 0-7) or comma-separated integers, "
                         "e.g. 0,1,2") from None


def run_dir_name(now: datetime | None = None) -> str:
    """``bench-<UTC stamp to the microsecond>``: the default name of a run's directory, for every way a run starts
    (two runs started in the same second still get two directories)."""
    return stamped_name(RUN_DIR_PREFIX, now, microseconds=True)


def stamped_name(prefix: str, now: datetime | None = None, *, microseconds: bool = False) -> str:
    """``<prefix>-<UTC time>``, e.g. ``grpo-trl-20250601T120000Z`` (``...T120000123456Z`` with ``microseconds``): the
    name of every run folder and run file of the appliance (bench, training, EDGE graphs, demos, replay stats)."""
    return f"{prefix}-{(now or datetime.now(UTC)).strftime('%Y%m%dT%H%M%S%fZ' if microseconds else '%Y%m%dT%H%M%SZ')}"


def new_run_dir(runs: Path, now: datetime | None = None) -> Path:
    """A new, empty run directory under ``runs`` named by ``run_dir_name``; made here, so that two runs starting at
    the same moment never share one (the second gets ``-2``): a default directory is never resumed by accident.

    Raises:
        OSError: ``runs`` cannot be written.
    """
    return new_unique_dir(runs, run_dir_name(now))


def new_unique_dir(parent: Path, name: str) -> Path:
    """``parent/name`` made now and empty, or ``name-2``, ``name-3``, ... when the name is taken (every run folder of
    the appliance, bench or training, is named so).

    Raises:
        OSError: ``parent`` cannot be written.
    """
    parent.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        path = parent / (name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise AssertionError("unreachable")
