"""verl recipes: Hydra override files composed against verl's own config dir.

    recipe = load_recipe("grpo_1gpu_small")                       # train/engines/verl/configs/<name>.yaml, or a path
    plan = plan_run(recipe, home=Path("~/.kopa"), dataset=Path("out/edge"))
    cfg = compose(plan)                                           # verl's config with the plan's overrides

A recipe file holds ``kind`` (grpo | sft), the verl ``entrypoint`` and ``config_name`` (a file of verl's
``trainer/config``), ``vars`` (defaults for the ``{name}`` values it uses) and ``overrides`` (dotted key ->
value). ``plan_run`` fills the ``{name}`` values (``VARIABLES``) and renders the Hydra override strings;
``compose`` runs Hydra's ``compose`` over verl's config dir (found without importing verl: only hydra-core is
needed, no torch), so a key verl does not have is an error here, not at the trainer's start. What verl only
finds at run time, or never, is checked by ``train.engines.verl.check``.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["CONFIG_DIR", "REPO", "VARIABLES", "Plan", "Recipe", "RecipeError", "compose", "list_recipes",
           "load_recipe", "plan_run", "verl_config_dir"]

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
REPO = Path(__file__).resolve().parents[3]
VARIABLES = ("home", "repo", "run_dir", "run_name", "dataset", "model", "cassettes", "agent_loops", "val_files")
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


