"""`kopa train check | grpo | sft | status | loop`: training on the EDGE dataset (paper Appendix I); engines verl and trl.

    kopa train check [CONFIG] [--engine verl] [--dataset DIR] [--model DIR] [--set NAME=VALUE ...] [--override ...]
    kopa train grpo --config NAME [--engine verl] [--dataset DIR] [--ray ADDRESS] [--model DIR] [--set ...]
    kopa train sft [--config sft] [--engine verl] [--dataset DIR] [--model DIR] [--set ...] [--override ...]
    kopa train sft --engine trl [--dataset DIR] [--model DIR] [--max-steps 20] [--seed 0] [--learning-rate 1e-4]
    kopa train status [--limit 20] [--json]
    kopa train loop [--quick] [--run DIR] [--model smollm2|gemma3|DIR] [--dataset DIR] [--seeds 0,1,2] ...

``check`` first says, for every training engine (``train.engines``), whether this machine can run it and why not,
which engine is the default and why (verl where CUDA, vllm and ray are all present, else trl), and the precision
the trl engine would train in here. ``sft --engine trl`` trains a LoRA adapter with TRL on the CPU or one GPU
(``train.engines.trl.sft``) into ``<home>/train/runs/sft-trl-<stamp>``: ``checkpoint/`` and ``metrics.jsonl``. With CONFIG, a recipe of ``train/engines/verl/configs`` (grpo_9b_paper,
grpo_1gpu_small, sft) or a recipe file, it then composes it against verl's own config dir and checks it on this
machine, no GPU needed (``train.engines.verl.check``). ``grpo`` and ``sft`` check first, then start verl in a run
folder under ``<home>/train/runs`` (``train.runs``; checkpoints inside it), follow its step metrics into
``metrics.jsonl`` there and the metadata DB, and need a CUDA GPU. The dataset folder is EDGE Phase B's export:
``train.parquet`` (+ ``val.parquet``, ``items.jsonl``) for GRPO, ``sft.jsonl`` for SFT. ``--engine`` names the
engine (``verl``, ``trl``; default: ``train.engines.default_engine``); another name is a one-line error listing the
choices. ``loop`` runs EDGE data → SFT → evaluation → GRPO → evaluation staged in one run folder (``train.loop``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from train.engines import ENGINES  # no engine's own modules: those import on use

from .config import KopaSettings

train_app = typer.Typer(help="Training (verl, trl): GRPO and SFT on the EDGE dataset, rollouts on replayed "
                             "cassettes.",
                        no_args_is_help=True)
err = Console(stderr=True, soft_wrap=True)

DatasetOpt = Annotated[Path | None, typer.Option(help="EDGE dataset folder (train.parquet, kept.jsonl, sft.jsonl) "
                                                      "or a train parquet; default: the newest exported folder "
                                                      "under <home>/edge/datasets")]
ModelOpt = Annotated[Path | None, typer.Option(help="local Hugging Face checkpoint folder (the recipe's default "
                                                    "is under <home>/models)")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", help="recipe variable NAME=VALUE (repeatable)")]
OverrideOpt = Annotated[list[str] | None, typer.Option("--override", help="raw Hydra override KEY=VALUE for verl "
                                                                          "(repeatable)")]
EngineOpt = Annotated[str | None, typer.Option("--engine", help=f"training engine (train.engines): "
                                                                 f"{', '.join(ENGINES)}; default: verl where CUDA, "
                                                                 "vllm and ray are present, else trl")]

NO_GPU = ("kopa train {kind} needs a CUDA GPU and none is visible here (torch.cuda.is_available() is false). "
          "Check the recipe on this machine with `kopa train check {recipe}`, and run training on a GPU host with "
          "the `verl` and `vllm` extras installed.")


def _variables(pairs: list[str] | None) -> dict[str, str]:
    out = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise typer.BadParameter(f"{pair!r} is not NAME=VALUE", param_hint="--set")
        out[name.strip()] = value
    return out


def _engine(name: str | None) -> str:
    """``name`` when it is a registered engine (None: the default here); else the one-line error listing the
    choices (exit 2)."""
    from train.engines import UnknownEngine, default_engine, get_engine

    if name is None:
        return default_engine()[0]
    try:
        return get_engine(name).name
    except UnknownEngine as exc:
        err.print(f"[red]error:[/red] --engine {escape(name)}: {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None


def _plan(settings: KopaSettings, config: str, *, dataset: Path | None, model: Path | None, sets: list[str] | None,
          overrides: list[str] | None, run_dir: Path | None = None) -> Any:
    from train.engines.verl.recipes import RecipeError, load_recipe, plan_run

    try:
        recipe = load_recipe(config)
        return plan_run(recipe, home=settings.home_dir, run_dir=run_dir, dataset=dataset or _newest_dataset(settings),
                        model=model, cassettes=_cassettes(settings),
                        agent_loops=run_dir / "agent_loops.yaml" if run_dir else None,
                        variables=_variables(sets), extra=overrides)
    except RecipeError as exc:
        raise typer.BadParameter(str(exc), param_hint="CONFIG") from None


def _newest_dataset(settings: KopaSettings) -> Path | None:
    """The newest folder under <home>/edge/datasets that `kopa edge export` finished (it has train.parquet)."""
    done = [p.parent for p in (settings.home_dir / "edge" / "datasets").glob("*/train.parquet")]
    return max(done, key=lambda p: p.stat().st_mtime) if done else None


def _cassettes(settings: KopaSettings) -> Path:
    """The appliance's cassettes folder (EDGE pins its items there); the repository's shipped one if there is none."""
    from train.engines.verl.recipes import REPO

    return settings.cassettes_dir if settings.cassettes_dir.is_dir() else REPO / "cassettes"


def _report(problems: list[str], what: str) -> None:
    if problems:
        err.print(f"[red]{what}: {len(problems)} problem(s)[/red]")
        for problem in problems:
            err.print(f"  - {problem}")
        raise typer.Exit(1)


def _engines_report() -> None:
    """One line per engine: whether this machine can run it and why not; then the default and why; then the
    precision the trl engine would train in here."""
    from train.engines import default_engine, engine_reports, trl_precision

    reports = engine_reports()
    for report in reports:
        typer.echo(report.line())
    name, why = default_engine()
    default = next(r for r in reports if r.engine == name)
    typer.echo(f"default engine: {name} — {why}" + ("" if default.ready else " (it cannot run here)"))
    precision, why = trl_precision()
    typer.echo(f"trl precision: {precision} — {why}")


@train_app.command("check")
def check(config: Annotated[str | None, typer.Argument(help="recipe name (train/engines/verl/configs) or recipe "
                                                            "file; without it, only the engines are reported")] = None,
          engine: EngineOpt = None, dataset: DatasetOpt = None, model: ModelOpt = None, sets: SetOpt = None,
          overrides: OverrideOpt = None,
          show: Annotated[bool, typer.Option(help="print the Hydra overrides verl would get")] = False) -> None:
    """Say which engines can run here; compose CONFIG against verl's config dir and check batch sizes, lengths,
    paths and bundles (no GPU)."""
    _engine(engine)
    _engines_report()
    if config is None:
        return
    from train.engines.verl.check import check_plan

    plan = _plan(KopaSettings(), config, dataset=dataset, model=model, sets=sets, overrides=overrides)
    problems = check_plan(plan)
    if show:
        typer.echo(" \\\n  ".join([plan.recipe.entrypoint, *plan.args]))
    _report(problems, f"{plan.recipe.name}")
    typer.echo(f"{plan.recipe.name}: ok ({plan.recipe.kind}, model {plan.variables['model']}, "
               f"dataset {plan.variables['dataset']})")


def _cuda() -> bool:
    from train.engines import cuda_missing

    return not cuda_missing()


def _launch(kind: str, engine: str | None, config: str, dataset: Path | None, model: Path | None, sets: list[str] | None,
            overrides: list[str] | None, ray: str | None) -> None:
    from train.engines.verl.check import check_plan
    from train.engines.verl.launch import prepare_run, run
    from train.engines.verl.recipes import RecipeError, load_recipe
    from train.runs import new_run_dir

    if _engine(engine or "verl") != "verl":  # GRPO and recipes are verl's; trl SFT is `_sft_trl`
        err.print(f"[red]error:[/red] --engine {escape(str(engine))}: `kopa train {kind}` with it is not here yet; "
                  "use --engine verl", highlight=False)
        raise typer.Exit(2)
    settings = KopaSettings()
    recipe_name = load_recipe(config).name if Path(config).suffix else config
    if not _cuda():
        err.print(NO_GPU.format(kind=kind, recipe=recipe_name))
        raise typer.Exit(2)
    try:
        recipe_kind = load_recipe(config).kind
    except RecipeError as exc:
        raise typer.BadParameter(str(exc), param_hint="CONFIG") from None
    if recipe_kind != kind:  # before the run folder is made: a wrong recipe leaves nothing behind
        raise typer.BadParameter(f"{config} is a {recipe_kind} recipe; use `kopa train {recipe_kind}`",
                                 param_hint="--config")
    run_dir = new_run_dir(settings.home_dir, recipe_name)
    try:
        plan = _plan(settings, config, dataset=dataset, model=model, sets=sets, overrides=overrides, run_dir=run_dir)
    except typer.BadParameter:
        run_dir.rmdir()  # made empty a moment ago
        raise
    prepare_run(plan, limits=settings.episode)
    _report(check_plan(plan), f"{plan.recipe.name} (run folder {run_dir})")
    engine, run_id = _start_record(settings, plan, run_dir, ray)
    err.print(f"{kind} {plan.recipe.name}: run folder {run_dir}; verl's log in verl.log, steps in metrics.jsonl")

    def on_step(summary: dict[str, Any]) -> None:
        shown = ", ".join(f"{k} {v:.4g}" for k, v in summary.items() if k != "step" and isinstance(v, float))
        err.print(f"step {summary['step']}: {shown}")
        if engine is not None:
            from train.records import add_step

            add_step(engine, run_id, summary)

    code = run(plan, run_dir, ray_address=ray, on_step=on_step)
    if engine is not None:
        from train.records import finish_run

        finish_run(engine, run_id, code)
    if code != 0:
        err.print(f"[red]verl exited with {code}; see {run_dir / 'verl.log'}[/red]")
        raise typer.Exit(code)
    err.print(f"done: {run_dir}")


def _start_record(settings: KopaSettings, plan: Any, run_dir: Path, ray: str | None) -> tuple[Any, int]:
    from .metadb import open_metadb

    try:
        from train.records import ensure_tables, start_run

        engine = open_metadb(settings.metadb_url)
        ensure_tables(engine)
        row = start_run(engine, str(run_dir), recipe=plan.recipe.name, kind=plan.recipe.kind,
                        model=plan.variables["model"], dataset=plan.variables["dataset"], ray_address=ray)
        return engine, int(row.id)
    except Exception as exc:  # noqa: BLE001 - the run goes on with its JSONL log; the DB is an index of it
        err.print(f"[yellow]metadata DB not written ({type(exc).__name__}: {exc}); metrics.jsonl still is[/yellow]")
        return None, 0


@train_app.command("grpo")
def grpo(config: Annotated[str, typer.Option("--config", help="GRPO recipe: grpo_9b_paper, grpo_1gpu_small, "
                                                                "or a file")] = "grpo_1gpu_small",
         dataset: DatasetOpt = None, model: ModelOpt = None,
         ray: Annotated[str | None, typer.Option("--ray", help="Ray cluster address (default: a local Ray)")] = None,
         sets: SetOpt = None, overrides: OverrideOpt = None, engine: EngineOpt = None,
         max_steps: Annotated[int, typer.Option("--max-steps", min=1, help="optimizer steps (trl)")] = 1,
         seed: Annotated[int, typer.Option("--seed", help="seed of the adapter's init and the sampling (trl)")] = 0,
         learning_rate: Annotated[float, typer.Option("--learning-rate", help="learning rate (trl)")] = 1e-5,
         num_generations: Annotated[int, typer.Option("--num-generations", min=2,
                                                      help="rollouts per prompt, compared with each other (trl)")] = 2,
         max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", min=1,
                                                     help="tokens per generation (trl)")] = 256) -> None:
    """GRPO: multi-turn rollouts on replayed cassettes, rewards from the bench scorers; verl (needs CUDA, vLLM, Ray)
    or trl (a LoRA adapter; CPU or one GPU; rollouts are the bench's own episodes)."""
    if _engine(engine) == "trl":
        _grpo_trl(dataset, model, max_steps=max_steps, seed=seed, learning_rate=learning_rate,
                  num_generations=num_generations, max_new_tokens=max_new_tokens)
        return
    _launch("grpo", "verl", config, dataset, model, sets, overrides, ray)


@train_app.command("sft")
def sft(config: Annotated[str, typer.Option("--config", help="SFT recipe or file (verl)")] = "sft",
        dataset: DatasetOpt = None, model: ModelOpt = None, sets: SetOpt = None, overrides: OverrideOpt = None,
        engine: EngineOpt = None,
        max_steps: Annotated[int, typer.Option("--max-steps", min=1, help="optimizer steps (trl)")] = 20,
        seed: Annotated[int, typer.Option("--seed", help="seed of the adapter's init and the data order (trl)")] = 0,
        learning_rate: Annotated[float, typer.Option("--learning-rate", help="learning rate (trl)")] = 1e-4,
        max_length: Annotated[int, typer.Option("--max-length", min=64, help="tokens per conversation; longer ones "
                                                                             "are cut after an assistant turn "
                                                                             "(trl)")] = 8192) -> None:
    """SFT on EDGE's verified trajectories: verl (torchrun; needs CUDA) or trl (a LoRA adapter; CPU or one GPU)."""
    if _engine(engine) == "trl":
        _sft_trl(dataset, model, max_steps=max_steps, seed=seed, learning_rate=learning_rate, max_length=max_length)
        return
    _launch("sft", "verl", config, dataset, model, sets, overrides, None)


def _newest_sft_dataset(settings: KopaSettings) -> Path | None:
    """The newest folder under <home>/edge/datasets with an sft.jsonl."""
    done = [p.parent for p in (settings.home_dir / "edge" / "datasets").glob("*/sft.jsonl")]
    return max(done, key=lambda p: p.stat().st_mtime) if done else None


def _trl_dataset(settings: KopaSettings, dataset: Path | None, needs: str,
                 newest: Callable[[KopaSettings], Path | None]) -> Path:
    """The dataset a trl run reads (``--dataset``, else the newest export with ``needs``), once this machine can run
    the engine; else one line and exit 2."""
    from train.engines import trl_missing

    missing = trl_missing()
    if missing:
        err.print(f"[red]error:[/red] --engine trl: not here — {', '.join(missing)}", highlight=False)
        raise typer.Exit(2)
    found = dataset or newest(settings)
    if found is None:
        err.print(f"[red]error:[/red] --dataset: none given and no exported dataset with {needs} under "
                  f"{escape(str(settings.home_dir / 'edge' / 'datasets'))}", highlight=False)
        raise typer.Exit(2)
    return found


def _sft_trl(dataset: Path | None, model: Path | None, *, max_steps: int, seed: int, learning_rate: float,
             max_length: int) -> None:
    """`kopa train sft --engine trl`: TRL SFT of a LoRA adapter; bad input is one line and exit 2, nothing written."""
    from train.engines import trl_precision

    settings = KopaSettings()
    dataset = _trl_dataset(settings, dataset, "sft.jsonl", _newest_sft_dataset)
    from train.engines.trl.model import ModelInputError
    from train.engines.trl.sft import RECIPE, check_settings, prepare, run_prepared

    try:
        check_settings(max_steps, learning_rate)
        prepared = prepare(dataset, home=settings.home_dir, model=model, seed=seed, max_length=max_length)
    except ModelInputError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None
    rows, source, _model, _tokenizer = prepared
    precision, _why = trl_precision()
    err.print(f"sft trl: {len(rows)} conversations, base {source.base}"
              + (f", adapter {source.adapter}" if source.adapter else "") + f", {precision}, {max_steps} steps")

    db = _trl_record(settings)
    state: dict[str, Any] = {"run_id": 0}

    def on_start(run_dir: Path) -> None:
        err.print(f"run folder {run_dir}; steps in metrics.jsonl")
        if db is not None:
            from train.records import start_run

            state["run_id"] = int(start_run(db, str(run_dir), recipe=RECIPE, kind="sft", model=str(source.base),
                                            dataset=str(dataset)).id)

    def on_step(summary: dict[str, Any]) -> None:
        err.print(f"step {summary['step']}: loss {summary['loss']:.4g}, {summary['tokens']} tokens, "
                  f"{summary['step_time_s']:.2f} s, {summary['tokens_per_s'] or 0:.1f} tokens/s")
        if db is not None and state["run_id"]:
            from train.records import add_step

            add_step(db, state["run_id"], summary)

    code = 1
    try:
        run_dir = run_prepared(prepared, home=settings.home_dir, dataset_dir=dataset, max_steps=max_steps, seed=seed,
                               learning_rate=learning_rate, max_length=max_length, on_start=on_start,
                               on_step=on_step)
        code = 0
    finally:
        if db is not None and state["run_id"]:
            from train.records import finish_run

            finish_run(db, state["run_id"], code)
    typer.echo(str(run_dir))


def _grpo_trl(dataset: Path | None, model: Path | None, *, max_steps: int, seed: int, learning_rate: float,
              num_generations: int, max_new_tokens: int) -> None:
    """`kopa train grpo --engine trl`: TRL GRPO of a LoRA adapter, each rollout a replayed bench episode under the
    ``[episode]`` limits; bad input is one line and exit 2, nothing written."""
    from train.engines import trl_precision

    settings = KopaSettings()
    dataset = _trl_dataset(settings, dataset, "train.parquet", _newest_dataset)
    from train.engines.trl.grpo import GrpoError, check_dataset, run_grpo
    from train.engines.trl.model import ModelInputError, resolve_model
    from train.runs import new_run_dir

    if not learning_rate > 0:
        err.print(f"[red]error:[/red] --learning-rate {learning_rate}: must be a positive number", highlight=False)
        raise typer.Exit(2)
    precision, _why = trl_precision()
    err.print(f"grpo trl: {dataset}, {num_generations} rollouts per prompt, {precision}, {max_steps} steps")
    db = _trl_record(settings)
    state: dict[str, Any] = {"run_id": 0}

    def on_step(summary: dict[str, Any]) -> None:
        shown = ", ".join(f"{k} {v:.4g}" for k, v in summary.items() if k != "step" and isinstance(v, float))
        err.print(f"step {summary.get('step')}: {shown}")
        if db is not None and state["run_id"]:
            from train.records import add_step

            add_step(db, state["run_id"], {"step": summary.get("step", 0), "reward": summary.get("reward_mean"),
                                           "pass_rate": summary.get("pass_rate"),
                                           "step_time_s": summary.get("step_time_s")})

    try:  # every input is read before the run folder exists: bad input leaves nothing behind
        check_dataset(dataset)
        resolve_model(model, home=settings.home_dir)
    except (GrpoError, ModelInputError) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None
    run_dir = new_run_dir(settings.home_dir, "grpo-trl")
    err.print(f"run folder {run_dir}; steps in metrics.jsonl")
    if db is not None:
        from train.records import start_run

        state["run_id"] = int(start_run(db, str(run_dir), recipe="grpo-trl", kind="grpo",
                                        model=str(model or "base"), dataset=str(dataset)).id)
    code = 1
    try:
        run_grpo(dataset, home=settings.home_dir, model=model, max_steps=max_steps, num_generations=num_generations,
                 seed=seed, learning_rate=learning_rate, limits=settings.episode, max_new_tokens=max_new_tokens,
                 cassettes=_cassettes(settings), run_dir=run_dir, on_step=on_step)
        code = 0
    finally:
        if db is not None and state["run_id"]:
            from train.records import finish_run

            finish_run(db, state["run_id"], code)
    typer.echo(str(run_dir))


def _trl_record(settings: KopaSettings) -> Any:
    """The metadata DB to index the run in, or None (then metrics.jsonl alone holds the steps)."""
    from .metadb import open_metadb

    try:
        from train.records import ensure_tables

        engine = open_metadb(settings.metadb_url)
        ensure_tables(engine)
        return engine
    except Exception as exc:  # noqa: BLE001 - the run goes on with its JSONL log; the DB is an index of it
        err.print(f"[yellow]metadata DB not written ({type(exc).__name__}: {exc}); metrics.jsonl still is[/yellow]")
        return None


@train_app.command("status")
def status(limit: Annotated[int, typer.Option(min=1, max=1000)] = 20,
           as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Training runs recorded in the metadata DB, newest first."""
    from train.records import ensure_tables, recent_runs

    from .metadb import open_metadb

    engine = open_metadb(KopaSettings().metadb_url)
    ensure_tables(engine)
    runs = recent_runs(engine, limit)
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in runs], indent=1))
        return
    if not runs:
        typer.echo("no training runs recorded")
        return
    table = Table("id", "recipe", "status", "steps", "reward", "pass rate", "started", "run folder")
    for r in runs:
        table.add_row(str(r.id), r.recipe, r.status, str(r.steps),
                      "" if r.last_reward is None else f"{r.last_reward:.3f}",
                      "" if r.last_pass_rate is None else f"{r.last_pass_rate:.3f}",
                      f"{r.started_at:%Y-%m-%d %H:%M}", r.run_dir)
    Console().print(table)


@train_app.command("loop")
def loop(run: Annotated[Path | None, typer.Option(help="the run folder; an existing one is continued where it "
                                                       "stopped, with its recorded settings (default: a new "
                                                       "<home>/train/loops/loop-<stamp>)")] = None,
         quick: Annotated[bool, typer.Option("--quick", help="every stage on a handful of items with a tiny model "
                                                             "(minutes; what CI runs)")] = False,
         model: Annotated[str | None, typer.Option(help="base model: smollm2, gemma3 or a model folder")] = None,
         dataset: Annotated[Path | None, typer.Option(help="an exported EDGE dataset folder (exported with the "
                                                           "loop's episode limits); default: built by the loop")] = None,
         graph: Annotated[Path | None, typer.Option(help="synthesize from this Phase A run (kopa edge graph build) "
                                                         "instead of building one")] = None,
         items: Annotated[int | None, typer.Option(min=1, help="EDGE items the loop synthesizes")] = None,
         seeds: Annotated[str | None, typer.Option(help="evaluation seeds, comma-separated (default 0,1,2)")] = None,
         sft_steps: Annotated[int | None, typer.Option(min=1)] = None,
         sft_learning_rate: Annotated[float | None, typer.Option(
             help="SFT learning rate (default 2e-4)")] = None,
         probe_every: Annotated[int | None, typer.Option(min=1, help="SFT steps between learning-curve probes "
                                                                     "(default 10)")] = None,
         grpo_steps: Annotated[int | None, typer.Option(min=1)] = None,
         edge_rounds: Annotated[int | None, typer.Option(min=1, help="Phase A rounds when the loop builds its graph "
                                                                    "(default: the paper's 100)")] = None,
         edge_tools: Annotated[str | None, typer.Option(help="build the loop's Phase A graph over these tools only: "
                                                             "'bench' (every tool a KOPA-Bench task offers) or "
                                                             "names, comma-separated (default: the catalog)")] = None,
         guide_tool_calls: Annotated[bool | None, typer.Option(
             "--guide-tool-calls/--free-tool-calls",
             help="evaluation: decode a call, once the model opens one, under the grammar of the task's offered "
                  "tools (name, arguments' schema, end), for every model (default guided)")] = None,
         split: Annotated[str | None, typer.Option(help="eval split name or file (default eval-v1)")] = None,
         reuse: Annotated[Path | None, typer.Option(help="an earlier run: its finished dataset, audit and base "
                                                         "evaluations are copied where these settings would "
                                                         "compute them unchanged")] = None,
         status: Annotated[bool, typer.Option("--status", help="print the --run folder's stages and its figures so "
                                                               "far; run nothing")] = False) -> None:
    """EDGE data → SFT → base and tuned evaluated on the eval split → GRPO → evaluated again; staged and resumable.

    Each stage writes under the run folder and is skipped when its output is there (and checks), so a killed loop
    continues where it stopped. Prints and writes (report/) per model pass@1, Corr, ACTION, well-formed calls, key
    use and answers, with 95 % t-intervals over seeds, beside the "call the listed tools in order" baseline."""
    from datetime import UTC, datetime

    from pydantic import ValidationError

    from train.loop import LoopError, LoopSettings, loop_status, run_loop
    from train.loop.settings import continued_settings, recorded_settings

    settings = KopaSettings()
    if status:
        if run is None:
            err.print("[red]kopa train loop --status: give the run folder with --run[/red]")
            raise typer.Exit(2)
        try:
            states, report = loop_status(run, home=settings.home_dir, cassettes=settings.cassettes_dir)
        except LoopError as exc:
            err.print(f"[red]kopa train loop: {escape(str(exc))}[/red]")
            raise typer.Exit(2) from None
        for name, state in states.items():
            typer.echo(f"{name}: {state}")
        typer.echo(report.table())
        return
    overrides: dict[str, Any] = {k: v for k, v in {"model": model, "dataset": dataset, "edge_graph": graph,
                                                   "edge_items": items,
                                                   "sft_steps": sft_steps, "sft_learning_rate": sft_learning_rate,
                                                   "probe_every": probe_every, "grpo_steps": grpo_steps,
                                                   "edge_rounds": edge_rounds, "guide_tool_calls": guide_tool_calls,
                                                   "split": split}.items() if v is not None}
    try:
        if seeds is not None:
            overrides["seeds"] = tuple(int(s) for s in seeds.split(",") if s.strip())
        if edge_tools is not None:
            from train.loop.settings import bench_tools

            named = tuple(t.strip() for t in edge_tools.split(",") if t.strip())
            overrides["edge_tools"] = bench_tools() if named == ("bench",) else named
        recorded = recorded_settings(run) if run is not None and not quick else None
        if recorded is not None:  # a run goes on with its own settings, whatever the defaults are now
            loop_settings = continued_settings(recorded, overrides)
        else:
            loop_settings = LoopSettings.quick(**overrides) if quick else LoopSettings(**overrides)
    except LoopError as exc:
        err.print(f"[red]kopa train loop: {escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    except ValidationError as exc:  # a setting out of range: name it and say why
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        name = {"edge_items": "--items", "edge_graph": "--graph"}.get(field, "--" + field.replace("_", "-"))
        err.print(f"[red]kopa train loop: bad option {escape(name)}: {escape(first['msg'])}[/red]")
        raise typer.Exit(2) from None
    except ValueError as exc:
        err.print(f"[red]kopa train loop: bad option: {escape(str(exc).splitlines()[0])}[/red]")
        raise typer.Exit(2) from None
    folder = run or settings.home_dir / "train" / "loops" / f"loop-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    try:
        report = run_loop(loop_settings, run=folder, home=settings.home_dir, cassettes=settings.cassettes_dir,
                          log=lambda line: typer.echo(line), reuse=reuse)
    except LoopError as exc:
        err.print(f"[red]kopa train loop: {escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    typer.echo(report.table())
    typer.echo(f"run folder: {folder}")
