"""Training recipes: Hydra override files composed against verl's own config dir, and checked before a launch.

    recipe = load_recipe("grpo_1gpu_small")                       # train/configs/<name>.yaml, or a path
    plan = plan_run(recipe, home=Path("~/.kopa"), dataset=Path("out/edge"))
    problems = check_plan(plan)                                   # [] when it can start; else one line each

A recipe file holds ``kind`` (grpo | sft), the verl ``entrypoint`` and ``config_name`` (a file of verl's
``trainer/config``), ``vars`` (defaults for the ``{name}`` values it uses) and ``overrides`` (dotted key ->
value). ``plan_run`` fills the ``{name}`` values (``VARIABLES``) and renders the Hydra override strings;
``compose`` runs Hydra's ``compose`` over verl's config dir (found without importing verl: only hydra-core is
needed, no torch), so a key verl does not have is an error here, not at the trainer's start. ``check_plan`` adds
what verl only finds at run time, or never:

* batch sizes: ``ppo_mini_batch_size`` <= and divides ``train_batch_size``; the mini-batch times ``rollout.n``
  splits over the GPUs, and into micro-batches when ``use_dynamic_bsz`` is off; the rollout's tensor-parallel
  size divides the GPU count; GRPO needs ``rollout.n`` >= 2;
* lengths: prompt + response <= the rollout's ``max_model_len`` (or the model's ``max_position_embeddings``), and
  <= the per-GPU token budget with dynamic batch sizes;
* the multi-turn loop: enabled, ``qwen3_coder`` calls, our ``kopa_tool_agent`` loop;
* paths: the dataset files, the model folder (a local checkpoint: nothing is downloaded), the reward function,
  the dataset class and agent-loop files;
* the data: every row's bundle is in the cassettes folder, and every row's task can be found (``train.tasks``).
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["CONFIG_DIR", "REPO", "VARIABLES", "Plan", "Recipe", "RecipeError", "check_plan", "compose",
           "list_recipes", "load_recipe", "plan_run", "verl_config_dir"]

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
REPO = Path(__file__).resolve().parent.parent
VARIABLES = ("home", "repo", "run_dir", "run_name", "dataset", "model", "cassettes", "agent_loops", "val_files")
AGENT_LOOP = "kopa_tool_agent"
_VAR = re.compile(r"\{([a-z_]+)\}")


class RecipeError(ValueError):
    """A recipe file is missing or malformed, or a value names an unknown ``{variable}``."""


@dataclass(frozen=True)
class Recipe:
    name: str
    path: Path
    kind: str  # grpo | sft
    entrypoint: str
    config_name: str
    vars: dict[str, str]
    overrides: dict[str, Any]


def list_recipes() -> list[str]:
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml") if p.stem != "agent_loops")


def load_recipe(name: str | Path) -> Recipe:
    """``name`` of a shipped recipe (``list_recipes()``) or the path of a recipe file.

    Raises:
        RecipeError: no such recipe, or the file lacks a field.
    """
    path = Path(name)
    if not path.suffix:
        path = CONFIG_DIR / f"{name}.yaml"
    if not path.is_file():
        raise RecipeError(f"no recipe {str(name)!r}: {path} does not exist; shipped recipes: {', '.join(list_recipes())}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path}: not valid YAML: {exc}") from None
    missing = [k for k in ("kind", "entrypoint", "config_name", "overrides") if not isinstance(raw, dict) or k not in raw]
    if missing:
        raise RecipeError(f"{path}: missing {', '.join(missing)}")
    if raw["kind"] not in ("grpo", "sft"):
        raise RecipeError(f"{path}: kind must be grpo or sft, not {raw['kind']!r}")
    return Recipe(path.stem, path, raw["kind"], raw["entrypoint"], raw["config_name"], dict(raw.get("vars") or {}),
                  dict(raw["overrides"]))


def verl_config_dir() -> Path:
    """verl's ``trainer/config`` folder, found without importing verl (which would import torch and ray).

    Raises:
        RecipeError: verl is not installed (``pip install -e '.[verl]'``).
    """
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        raise RecipeError("verl is not installed: pip install --no-deps verl==0.9.1 (and hydra-core) to compose "
                          "recipes; the `verl` extra for training")
    return Path(list(spec.submodule_search_locations)[0]) / "trainer" / "config"


def _fill(text: str, variables: dict[str, str], where: str) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            raise RecipeError(f"{where}: unknown variable {{{name}}}; known: {', '.join(sorted(variables))}")
        return variables[name]

    for _ in range(4):  # vars may name other vars ({home}/models/...)
        text = _VAR.sub(one, text)
    return text


def _hydra_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_hydra_value(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if re.fullmatch(r"[\w./~+\-:@]*", text) and text:
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass
class Plan:
    """A recipe with every value filled in: what ``kopa train`` runs (and ``check_plan`` checks)."""

    recipe: Recipe
    variables: dict[str, str]
    overrides: dict[str, Any]  # dotted key -> value, variables filled
    extra: list[str] = field(default_factory=list)  # raw Hydra overrides given on the command line

    @property
    def args(self) -> list[str]:
        return [f"{k}={_hydra_value(v)}" for k, v in self.overrides.items()] + list(self.extra)

    def get(self, key: str, default: Any = None) -> Any:
        return self.overrides.get(key, default)


def plan_run(recipe: Recipe, *, home: Path, run_dir: Path | None = None, dataset: Path | None = None,
             model: Path | None = None, cassettes: Path | None = None, agent_loops: Path | None = None,
             variables: dict[str, str] | None = None, extra: list[str] | None = None) -> Plan:
    """Fill the recipe's ``{name}`` values (module doc). ``dataset`` may be a folder or a train parquet file.

    Raises:
        RecipeError: a value names an unknown variable.
    """
    home = Path(home).expanduser()
    run_dir = Path(run_dir) if run_dir else home / "train" / "runs" / f"{recipe.name}-check"
    values: dict[str, str] = {"home": str(home), "repo": str(REPO), "run_dir": str(run_dir), "run_name": run_dir.name,
                              "cassettes": str(cassettes or REPO / "cassettes"),
                              "agent_loops": str(agent_loops or CONFIG_DIR / "agent_loops.yaml")}
    values.update({k: str(v) for k, v in recipe.vars.items()})
    values.update({k: str(v) for k, v in (variables or {}).items()})
    if model is not None:
        values["model"] = str(model)
    if dataset is not None:
        values["dataset"] = str(dataset)
    values = {k: _fill(v, values, f"{recipe.path}: vars.{k}") for k, v in values.items()}
    data = Path(values.get("dataset", ""))
    if data.suffix == ".parquet":  # a file given: its folder is the dataset's
        values["dataset"] = str(data.parent)
    values.setdefault("val_files", "")
    if not values["val_files"]:
        val = Path(values["dataset"]) / "val.parquet"
        values["val_files"] = str(val if val.exists() else
                                  (data if data.suffix == ".parquet" else Path(values["dataset"]) / "train.parquet"))
    filled: dict[str, Any] = {}
    for key, value in recipe.overrides.items():
        filled[key] = _fill(value, values, f"{recipe.path}: overrides.{key}") if isinstance(value, str) else value
    if data.suffix == ".parquet" and "data.train_files" in filled:
        filled["data.train_files"] = str(data)
    return Plan(recipe, values, filled, list(extra or []))


def compose(plan: Plan) -> Any:
    """verl's config with the plan's overrides (an OmegaConf ``DictConfig``).

    Raises:
        RecipeError: verl is missing, or Hydra refuses an override (a key verl has no, a bad value).
    """
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    config_dir = verl_config_dir()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base=None):
            return hydra_compose(config_name=plan.recipe.config_name, overrides=plan.args)
    except (HydraException, OmegaConfBaseException) as exc:
        raise RecipeError(f"verl's config ({config_dir.name}/{plan.recipe.config_name}.yaml) refuses the "
                          f"overrides: {str(exc).splitlines()[0]}") from None
    finally:
        GlobalHydra.instance().clear()


# ---------------------------------------------------------------------------------------------- checks


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
    problems = []
    files: list[tuple[str, Any]] = []
    if plan.recipe.kind == "grpo":
        files += [("data.train_files", _select(cfg, "data.train_files")), ("data.val_files", _select(cfg, "data.val_files")),
                  ("reward.custom_reward_function.path", _select(cfg, "reward.custom_reward_function.path")),
                  ("actor_rollout_ref.rollout.agent.agent_loop_config_path",
                   _select(cfg, "actor_rollout_ref.rollout.agent.agent_loop_config_path"))]
    else:
        files.append(("the EDGE SFT file", str(Path(plan.variables["dataset"]) / "sft.jsonl")))
    files.append(("data.custom_cls.path", _select(cfg, "data.custom_cls.path")))
    for key, value in files:
        for one in (value if isinstance(value, (list, tuple)) or type(value).__name__ == "ListConfig" else [value]):
            if one and not Path(str(one)).expanduser().exists():
                problems.append(f"{key}: {one} does not exist")
    model = _select(cfg, "actor_rollout_ref.model.path" if plan.recipe.kind == "grpo" else "model.path")
    model_dir = Path(str(model)).expanduser()
    if not model_dir.is_dir():
        problems.append(f"model path {model} is not a folder; give a local Hugging Face checkpoint (--set model=DIR): "
                        "nothing is downloaded from a hub")
    elif not (model_dir / "config.json").is_file():
        problems.append(f"model path {model} has no config.json; it is not a Hugging Face checkpoint folder")
    return problems


def dataset_tasks_files(dataset_dir: Path) -> list[Path]:
    """Files in the dataset folder that hold whole tasks (for rows that name their item only)."""
    return [p for p in (dataset_dir / "kept.jsonl", dataset_dir / "items.jsonl", dataset_dir / "tasks.jsonl")
            if p.is_file()]


def _data_problems(plan: Plan, cfg: Any) -> list[str]:
    import pyarrow.parquet as pq

    from recorder import CassetteStore

    from .tasks import TaskIndex, TaskNotFound, decode_json

    train = Path(str(_select(cfg, "data.train_files"))).expanduser()
    if not train.is_file():
        return []
    try:
        rows = pq.read_table(train, columns=["extra_info"]).to_pylist()
    except Exception as exc:  # noqa: BLE001 - any unreadable file is a problem to show, not a crash
        return [f"data.train_files: {train} cannot be read as parquet with an extra_info column: {exc}"]
    problems = []
    cassettes = Path(plan.variables["cassettes"])
    store = CassetteStore(cassettes)
    index = TaskIndex.from_files(dataset_tasks_files(Path(plan.variables["dataset"])))
    bundles: dict[str, str | None] = {}
    missing_tasks: list[str] = []
    for row in rows:
        info = decode_json(row.get("extra_info")) or {}
        try:
            task = index.task_for(info)
        except TaskNotFound as exc:
            missing_tasks.append(str(exc))
            bundle = info.get("bundle")
        else:
            bundle = task.bundle
        if bundle and bundle not in bundles:
            try:
                store.resolve(bundle)
                bundles[bundle] = None
            except Exception as exc:  # noqa: BLE001 - the recorder's own message names what is missing
                bundles[bundle] = str(exc)
    problems += [f"bundle {b} is not in {cassettes}: {why}" for b, why in bundles.items() if why]
    if missing_tasks:
        problems.append(f"{len(missing_tasks)} of {len(rows)} row(s) have no task to play; first: {missing_tasks[0]}")
    if not rows:
        problems.append(f"data.train_files: {train} has no rows")
    return problems


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
