"""What one ``kopa train loop`` run is made of: the model, the data, the split, the training and evaluation budgets.

    settings = LoopSettings()                       # the measured loop (module defaults)
    settings = LoopSettings.quick()                 # every stage on a handful of items with a tiny model (CI)

The episode limits are the loop's own, shorter than the bench's (``LOOP_LIMITS``): tool descriptions cut to their
first sentence, the API key and paging parameters by name and type only, tool results to ~256 tokens, 8 turns, and
an episode stopped at its third turn in a row with the same calls and results.
Training rows (EDGE's export, run with these limits) and the evaluated prompts are shaped by the same agent step, so
the tuned model is evaluated on prompts like those it saw.

A run folder keeps its settings (``loop.json``) and is continued with them (``continued_settings``): a setting added
or a default changed since the run started counts as what the run did then (``settings_then``), and an option given
again must say what the run recorded, or the continuation is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bench.limits import EpisodeLimits

from .stages import LoopError

__all__ = ["LOOP_LIMITS", "QUICK_TOOLS", "SETTINGS_FILE", "LoopSettings", "bench_tools", "continued_settings",
           "recorded_settings", "settings_then"]

SETTINGS_FILE = "loop.json"  # a run's settings, written before its first stage

# episode_timeout_s: a backstop against a runaway episode only; with batched evaluation an episode's wall time
# includes the generations of the episodes batched with it
# bare_generic_params: the generic parameters' prose was 624 of a first turn's 2,643 tokens (run9, eval-v1)
# max_repeated_turns: in run9's eval-sft, 72 % of the tuned model's calls repeated the call before them and 104 of 108
# episodes played all 8 turns; stopping at the third identical turn would have saved 374 of its 758 calls and
# changed one episode's Corr (a calculator call made after six repeats)
LOOP_LIMITS = EpisodeLimits(max_turns=8, max_calls=16, max_tool_tokens=256, max_description_chars=80,
                            bare_generic_params=True, max_repeated_turns=3, episode_timeout_s=3600.0)

# --quick builds its EDGE data over these tools only (rest areas, bills, DART: a Phase A graph in seconds)
QUICK_TOOLS = ("find_dart_corp_code", "get_dart_company_overview", "get_dart_single_company_key_accounts",
               "search_dart_disclosures", "get_bill_detail", "get_bill_vote_results", "search_all_bills",
               "get_rest_area_fuel_prices", "get_rest_area_oil_list", "list_rest_area_locations")


class LoopSettings(BaseModel):
    """One loop run's settings (module doc)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field("gemma3", description="the base model: smollm2, gemma3, tiny (a 2-layer random SmolLM2 "
                                              "for checks) or a model folder")
    dataset: Path | None = Field(None, description="an exported EDGE dataset folder; None: built by the loop")
    edge_graph: Path | None = Field(None, description="an existing Phase A run (kopa edge graph build) to synthesize "
                                                      "from; None: the loop builds one")
    edge_items: int = Field(300, ge=1, description="EDGE items to synthesize when the loop builds its data")
    edge_seed: int = 0
    edge_tools: tuple[str, ...] = Field((), description="build the Phase A graph over these tools only")
    edge_rounds: int | None = Field(None, ge=1, description="Phase A rounds (None: the paper's)")
    edge_trials: int | None = Field(None, ge=1, description="Phase A paths per round (None: the paper's)")
    split: str = Field("eval-v1", description="the eval split (bench/tasks/splits)")
    split_tasks: int | None = Field(None, ge=1, description="evaluate on the split's first N tasks only (--quick)")
    seeds: tuple[int, ...] = Field((0, 1, 2), min_length=1, description="evaluation seeds (tool order, key tokens)")
    sft_steps: int = Field(30, ge=1)
    sft_learning_rate: float = Field(2e-4, gt=0)
    sft_balance: Literal["none", "domain"] = Field("domain", description="SFT's rows: as the trainer draws them from "
                                                                         "the data, or sft_steps of them taken evenly "
                                                                         "across the domains they start in "
                                                                         "(train.row_balance)")
    sft_slips: float = Field(0.25, ge=0, le=1, description="share of the SFT rows the loop's own data shows a call "
                                                           "made without its key, the gateway's error and the call "
                                                           "made right (the slip not learnt; kopa edge export "
                                                           "--slips)")
    max_length: int = Field(4096, ge=256, description="SFT rows are cut after their last assistant turn within it")
    probe_tasks: int = Field(4, ge=1, description="split tasks of the SFT learning curve's probe (seed 0)")
    probe_every: int = Field(10, ge=1, description="SFT steps between probes")
    grpo_steps: int = Field(2, ge=1)
    grpo_generations: int = Field(2, ge=2)
    grpo_learning_rate: float = Field(1e-5, gt=0)
    eval_batch: int = Field(8, ge=1, description="episodes evaluated at once, their generations batched")
    max_new_tokens: int = Field(128, ge=8, description="tokens per generation (evaluation and GRPO)")
    guide_tool_calls: bool = Field(True, description="evaluation: a call, once opened, is decoded under the grammar of "
                                                     "the offered tools (name, arguments' schema, end; "
                                                     "train.engines.trl.call_grammar), for every model alike")
    eval_precision: Literal["fp32", "bf16"] = Field("bf16", description="evaluation and probes: the model read in "
                                                                       "fp32, or under bf16 autocast (as SFT trains)")
    seed: int = Field(0, description="training seed")
    limits: EpisodeLimits = LOOP_LIMITS

    @classmethod
    def quick(cls, **overrides: object) -> LoopSettings:
        """Every stage on a handful of items, with the tiny model: minutes on 2 cores (module doc)."""
        base: dict[str, object] = {
            "model": "tiny", "edge_items": 4, "edge_tools": QUICK_TOOLS, "edge_rounds": 2, "edge_trials": 16,
            "split_tasks": 2, "seeds": (0, 1), "sft_steps": 1, "max_length": 8192, "probe_tasks": 1,
            "probe_every": 1, "eval_batch": 2, "grpo_steps": 1, "grpo_generations": 2, "max_new_tokens": 16,
            "limits": LOOP_LIMITS.model_copy(update={"max_turns": 2, "max_description_chars": 0})}
        return cls(**{**base, **overrides})


def bench_tools(task_file: Path | None = None) -> tuple[str, ...]:
    """Every tool a KOPA-Bench task offers (``--edge-tools bench``), sorted: the APIs the benchmark is about, 230 of
    the catalog's 2,416. EDGE data over them calls the tools the evaluated tasks need; the audit still keeps the split's
    queries and golden trajectories out of it. Over the whole catalog, 300 items called 9 of the 48 tools the eval
    split's golden actions use (run5, ``results/train-loop.md``)."""
    from bench.task import load_tasks
    from bench.taskset.build import DEFAULT_TASKS

    tools: set[str] = set()
    for task in load_tasks(task_file or DEFAULT_TASKS):
        tools.update(task.available_tools)
        tools.update(action.tool for action in task.golden_actions)
    return tuple(sorted(tools))


# settings (and episode limits) added after runs had started, with the value that earlier runs, which do not record
# them, ran with
_BEFORE_THEY_EXISTED: dict[str, Any] = {"guide_tool_calls": False, "eval_precision": "fp32", "sft_balance": "none",
                                         "sft_slips": 0.0}
_LIMITS_BEFORE_THEY_EXISTED: dict[str, Any] = {"bare_generic_params": False}


def settings_then(recorded: dict[str, Any]) -> dict[str, Any]:
    """Every setting of a run that recorded ``recorded``: a setting added since is filled with what runs did
    before it existed (its default, unless it changed what an earlier run did), an episode limit likewise."""
    defaults = LoopSettings.model_construct().model_dump(mode="json")
    then = {**defaults, **_BEFORE_THEY_EXISTED, **recorded}
    if isinstance(recorded.get("limits"), dict):
        then["limits"] = {**EpisodeLimits().model_dump(mode="json"), **_LIMITS_BEFORE_THEY_EXISTED,
                          **recorded["limits"]}
    return then


def continued_settings(recorded: dict[str, Any], given: dict[str, Any]) -> LoopSettings:
    """The settings a run that recorded ``recorded`` goes on with: its own (``settings_then``), whatever the
    defaults are now. ``given`` (options named again, as ``LoopSettings`` fields) must each say what the run recorded.

    Raises:
        LoopError: an option given differs from the run's, or the record is not a run's settings.
    """
    then = settings_then(recorded)
    try:
        settings = LoopSettings.model_validate(then)
    except ValueError as exc:
        raise LoopError(f"the run's recorded settings do not load ({exc}); start a new --run folder") from None
    if given:
        wanted = LoopSettings.model_validate({**then, **given}).model_dump(mode="json")
        had = settings.model_dump(mode="json")
        changed = sorted(k for k in given if wanted.get(k) != had.get(k))
        if changed:
            what = "; ".join(f"{k}: {had[k]!r} then, {wanted[k]!r} now" for k in changed)
            raise LoopError(f"the run was started with other settings ({what}); continue it with the same settings "
                            "or start a new --run folder")
    return settings


def recorded_settings(run: Path) -> dict[str, Any] | None:
    """The settings ``run`` recorded, as written (JSON values; a setting added to ``LoopSettings`` since is absent
    and had its default then); None when the folder records none.

    Raises:
        LoopError: the record is not JSON.
    """
    path = run / SETTINGS_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LoopError(f"{path} is not JSON ({exc}); it records the run's settings") from None
