"""verl's checks of a recipe plan: what verl only finds at run time, or never, found before a launch (no GPU).

    plan = plan_run(load_recipe("grpo_1gpu_small"), home=Path("~/.kopa"), dataset=Path("out/edge"))
    problems = check_plan(plan)                                   # [] when it can start; else one line each

``check_plan`` composes the plan against verl's config dir (``train.engines.verl.recipes.compose``: a key verl
does not have is a problem) and adds:

* batch sizes: ``ppo_mini_batch_size`` <= and divides ``train_batch_size``; the mini-batch times ``rollout.n``
  splits over the GPUs, and into micro-batches when ``use_dynamic_bsz`` is off; the rollout's tensor-parallel
  size divides the GPU count; GRPO needs ``rollout.n`` >= 2;
* lengths: prompt + response <= the rollout's ``max_model_len`` (or the model's ``max_position_embeddings``), and
  <= the per-GPU token budget with dynamic batch sizes;
* the multi-turn loop: enabled, ``qwen3_coder`` calls, our ``kopa_tool_agent`` loop;
* paths: the dataset files, the reward function, the dataset class and agent-loop files, and the model folder
  (a local checkpoint: nothing is downloaded; ``train.data_checks``);
* the data: every row's bundle is in the cassettes folder, and every row's task can be found
  (``train.data_checks.dataset_problems``, as for any engine).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from train.data_checks import dataset_problems, model_problems, path_problems
from .recipes import Plan, RecipeError, compose

__all__ = ["AGENT_LOOP", "check_plan"]

AGENT_LOOP = "kopa_tool_agent"


def _select(cfg: Any, key: str) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.select(cfg, key, default=None)


def _batch_problems(cfg: Any) -> list[str]:
    problems = []
    n_gpus = int(_select(cfg, "trainer.n_gpus_per_node") or 1) * int(_select(cfg, "trainer.nnodes") or 1)
    tbs = int(_select(cfg, "data.train_batch_size"))
    mini = int(_select(cfg, "actor_rollout_ref.actor.ppo_mini_batch_size"))
    n = int(_select(cfg, "actor_rollout_ref.rollout.n") or 1)
    sp = int(_select(cfg, "actor_rollout_ref.actor.ulysses_sequence_parallel_size") or 1)
    dynamic = bool(_select(cfg, "actor_rollout_ref.actor.use_dynamic_bsz"))
    if mini > tbs:
        problems.append(f"actor_rollout_ref.actor.ppo_mini_batch_size ({mini}) is larger than data.train_batch_size "
                        f"({tbs}); it counts prompts and must be <= the prompts per step")
    elif tbs % mini:
        problems.append(f"data.train_batch_size ({tbs}) is not a multiple of actor_rollout_ref.actor.ppo_mini_batch_size "
                        f"({mini}); each step is split into whole mini-batches")
    dp = max(n_gpus // sp, 1)
    if (mini * n) % dp:
        problems.append(f"ppo_mini_batch_size x rollout.n = {mini} x {n} = {mini * n} trajectories do not split over "
                        f"{dp} data-parallel GPU(s)")
    if (tbs * n) % n_gpus:
        problems.append(f"data.train_batch_size x rollout.n = {tbs * n} trajectories do not split over {n_gpus} GPU(s)")
    if not dynamic:
        micro = _select(cfg, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu")
        if micro is None:
            problems.append("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu is required when "
                            "actor_rollout_ref.actor.use_dynamic_bsz is false")
        elif (mini * n // dp) % int(micro):
            problems.append(f"each GPU's mini-batch of {mini * n // dp} trajectories is not a multiple of "
                            f"ppo_micro_batch_size_per_gpu ({micro})")
        for section in ("rollout", "ref"):
            if section == "ref" and not _select(cfg, "actor_rollout_ref.actor.use_kl_loss"):
                continue
            if _select(cfg, f"actor_rollout_ref.{section}.log_prob_micro_batch_size_per_gpu") is None and \
                    not _select(cfg, f"actor_rollout_ref.{section}.log_prob_use_dynamic_bsz"):
                problems.append(f"actor_rollout_ref.{section}.log_prob_micro_batch_size_per_gpu is required when "
                                "dynamic batch sizes are off")
    tp = int(_select(cfg, "actor_rollout_ref.rollout.tensor_model_parallel_size") or 1)
    if n_gpus % tp:
        problems.append(f"actor_rollout_ref.rollout.tensor_model_parallel_size ({tp}) does not divide the {n_gpus} GPU(s)")
    if _select(cfg, "algorithm.adv_estimator") == "grpo" and n < 2:
        problems.append(f"GRPO compares rollouts of one prompt: actor_rollout_ref.rollout.n is {n}, needs >= 2")
    return problems


def _model_max_positions(model: Path) -> int | None:
    try:
        config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    text = config.get("text_config") or {}
    value = config.get("max_position_embeddings") or text.get("max_position_embeddings")
    return int(value) if value else None


def _length_problems(cfg: Any, model: Path) -> list[str]:
    problems = []
    prompt = int(_select(cfg, "data.max_prompt_length"))
    response = int(_select(cfg, "data.max_response_length"))
    limit = _select(cfg, "actor_rollout_ref.rollout.max_model_len")
    where = "actor_rollout_ref.rollout.max_model_len"
    if limit is None:
        limit, where = _model_max_positions(model), f"the model's max_position_embeddings ({model / 'config.json'})"
    if limit is not None and prompt + response > int(limit):
        problems.append(f"data.max_prompt_length + data.max_response_length = {prompt} + {response} = "
                        f"{prompt + response} exceeds {where} ({limit})")
    positions = _model_max_positions(model)
    if positions is not None and limit is not None and int(limit) > positions:
        problems.append(f"actor_rollout_ref.rollout.max_model_len ({limit}) exceeds the model's "
                        f"max_position_embeddings ({positions})")
    if _select(cfg, "actor_rollout_ref.actor.use_dynamic_bsz"):
        budget = int(_select(cfg, "actor_rollout_ref.actor.ppo_max_token_len_per_gpu"))
        if budget < prompt + response:
            problems.append(f"actor_rollout_ref.actor.ppo_max_token_len_per_gpu ({budget}) is below one whole "
                            f"trajectory ({prompt + response} tokens)")
    return problems


def _loop_problems(cfg: Any) -> list[str]:
    problems = []
    if not _select(cfg, "actor_rollout_ref.rollout.multi_turn.enable"):
        problems.append("actor_rollout_ref.rollout.multi_turn.enable must be true (multi-turn tool rollouts)")
    if _select(cfg, "actor_rollout_ref.rollout.multi_turn.format") != "qwen3_coder":
        problems.append("actor_rollout_ref.rollout.multi_turn.format must be qwen3_coder (Qwen3.5's tool calls; "
                        "hermes parses nothing of them)")
    if _select(cfg, "actor_rollout_ref.rollout.agent.default_agent_loop") != AGENT_LOOP:
        problems.append(f"actor_rollout_ref.rollout.agent.default_agent_loop must be {AGENT_LOOP} (the replayed "
                        "bench episodes); verl's tool_agent knows nothing of the cassettes")
    return problems


def _path_problems(plan: Plan, cfg: Any) -> list[str]:
    files: list[tuple[str, Any]] = []
    if plan.recipe.kind == "grpo":
        files += [("data.train_files", _select(cfg, "data.train_files")), ("data.val_files", _select(cfg, "data.val_files")),
                  ("reward.custom_reward_function.path", _select(cfg, "reward.custom_reward_function.path")),
                  ("actor_rollout_ref.rollout.agent.agent_loop_config_path",
                   _select(cfg, "actor_rollout_ref.rollout.agent.agent_loop_config_path"))]
    else:
        files.append(("the EDGE SFT file", str(Path(plan.variables["dataset"]) / "sft.jsonl")))
    files.append(("data.custom_cls.path", _select(cfg, "data.custom_cls.path")))
    model = _select(cfg, "actor_rollout_ref.model.path" if plan.recipe.kind == "grpo" else "model.path")
    return path_problems(files) + model_problems(model)


def _data_problems(plan: Plan, cfg: Any) -> list[str]:
    return dataset_problems(Path(str(_select(cfg, "data.train_files"))), dataset_dir=Path(plan.variables["dataset"]),
                            cassettes=Path(plan.variables["cassettes"]), setting="data.train_files")


def check_plan(plan: Plan) -> list[str]:
    """Every problem found composing and checking ``plan`` (module doc); [] when it can start."""
    try:
        cfg = compose(plan)
    except RecipeError as exc:
        return [str(exc)]
    problems = _path_problems(plan, cfg)
    if plan.recipe.kind == "grpo":
        model = Path(str(_select(cfg, "actor_rollout_ref.model.path"))).expanduser()
        problems += _batch_problems(cfg) + _length_problems(cfg, model) + _loop_problems(cfg) + _data_problems(plan, cfg)
    return problems
