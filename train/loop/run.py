"""``kopa train loop``: EDGE data → SFT → base and tuned evaluated alike → a few GRPO steps → evaluated again.

    report = run_loop(LoopSettings(), run=Path("~/.kopa/train/loops/l1"), home=home)      # or LoopSettings.quick()

The stages, each in its own folder of the run (``train.loop.stages``: skipped when done, refused when corrupt):

1. ``dataset``  the EDGE dataset: ``--dataset DIR`` (checked: exported with the loop's episode limits) or built here
                by ``kopa edge graph build | synth | filter | export`` under the loop's limits (``--graph RUN``:
                synthesize from an existing Phase A run);
2. ``audit``    the eval split against the training items (``edge.filter.split_audit``): a leak stops the loop;
3. ``eval-listed`` the "call the listed tools in order" baseline (``bench.agents.listed_order``): what following the
                tool list alone earns, so anyone can see the list gives no answer away;
4. ``eval-base`` the base model, greedy, on the split × seeds (``train.loop.evaluate``);
5. ``sft``      TRL SFT of a LoRA adapter (``train.engines.trl.sft``), probing the split's first tasks every
                ``probe_every`` steps (the learning curve: well-formed calls and Corr against examples seen); a
                trainer checkpoint is kept after every step, so a killed SFT continues from its last step;
6. ``eval-sft`` the SFT checkpoint, as the base was evaluated;
7. ``grpo``     TRL GRPO from the SFT checkpoint (``train.engines.trl.grpo``), rollouts on the training items;
8. ``eval-grpo`` the GRPO checkpoint;
9. ``report``   report.json, report.md and report.html (``train.loop.report``), written afresh from the stages
                every time the loop runs.

The settings are written to ``loop.json`` first; a run folder is continued with them (``continued_settings``), and
with other settings is refused, so every figure of a run comes from one set of settings.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from .evaluate import EpisodeFigures, evaluate_agent, evaluate_model, read_episodes
from .report import LoopReport, summarize_model
from .reuse import edge_code
from .settings import SETTINGS_FILE, LoopSettings, continued_settings, recorded_settings, settings_then
from .stages import LoopError, Stage

__all__ = ["EVALUATED", "STAGES", "loop_status", "run_loop"]

STAGES = ("dataset", "audit", "eval-listed", "eval-base", "sft", "eval-sft", "grpo", "eval-grpo", "report")
EVALUATED = {"eval-listed": "listed tools in order", "eval-base": "base", "eval-sft": "tuned (SFT)",
             "eval-grpo": "tuned (SFT + GRPO)"}
EPISODES = "episodes.jsonl"
SFT_RESUME = ("checkpoint-*", "metrics.jsonl", "probes")  # what a killed SFT stage continues from
LOCK_FILE = "loop.lock"  # held by the running loop (fcntl), naming its pid
Log = Callable[[str], None]


def _dump_settings(settings: LoopSettings) -> dict[str, Any]:
    return settings.model_dump(mode="json")


def _check_settings(run: Path, settings: LoopSettings) -> None:
    wanted = _dump_settings(settings)
    had = recorded_settings(run)
    if had is not None:
        # a setting added to LoopSettings after the run started counts as what runs did before it existed
        then = settings_then(had)
        changed = sorted(k for k in set(then) | set(wanted) if then.get(k) != wanted.get(k))
        if changed:
            what = "; ".join(f"{k}: {had[k]!r} then, retired since" if k not in wanted else
                             f"{k}: {had[k]!r} then, {wanted.get(k)!r} now" if k in had else
                             f"{k}: not recorded then ({then.get(k)!r} before it existed), {wanted.get(k)!r} now"
                             for k in changed)
            raise LoopError(f"{run} was started with other settings ({what}); continue it with the same settings "
                            "or start a new --run folder")
        return
    run.mkdir(parents=True, exist_ok=True)
    (run / SETTINGS_FILE).write_text(json.dumps(wanted, indent=1), encoding="utf-8")


class Loop:
    """The stages of one run (module doc)."""

    def __init__(self, settings: LoopSettings, run: Path, home: Path, *, cassettes: Path, log: Log):
        self.settings, self.run, self.home, self.cassettes, self.log = settings, run, home, cassettes, log
        self.times: dict[str, float] = {}

    # ------------------------------------------------------------------------------------------ helpers

    def stage(self, name: str, work: Callable[[Stage], dict[str, Any]], keep: tuple[str, ...] = ()) -> dict[str, Any]:
        stage = Stage(self.run, name)
        record = stage.finished()
        if record is None:
            self.log(f"[{name}] running")
            stage.begin(keep=keep)
            try:
                record = work(stage)
            except LoopError:
                raise
            except _input_errors() as exc:
                raise LoopError(f"stage {name}: {exc}") from None
            self.log(f"[{name}] done in {record['seconds']:.0f} s")
        else:
            self.log(f"[{name}] done before, reused")
        if record.get("seconds") is not None:
            self.times[name] = record["seconds"]
        return record

    def dataset_dir(self) -> Path:
        record = Stage(self.run, "dataset").finished()
        assert record is not None
        return Path(record["figures"]["folder"])

    def split(self) -> Any:
        from bench.splits import load_split

        split = load_split(self.settings.split)
        tasks = split.tasks[:self.settings.split_tasks] if self.settings.split_tasks else split.tasks
        return split, list(tasks)

    def model_arg(self) -> Path:
        """The base model as the trl engine takes it: a packaged name (as a path that does not exist), a folder, or
        the tiny model made once under the home."""
        if self.settings.model == "tiny":
            from models.checkpoints import tiny_checkpoint

            return tiny_checkpoint(self.home / "models" / "smollm2-tiny-loop", layers=2, seed=0)
        return Path(self.settings.model)

    def model_source(self, model: Path) -> Any:
        from train.engines.trl.model import resolve_model

        return resolve_model(model, home=self.home)

    # ------------------------------------------------------------------------------------------ stages

    def build_dataset(self, stage: Stage) -> dict[str, Any]:
        s = self.settings
        if s.dataset is not None:
            folder = Path(s.dataset).expanduser().resolve()
        else:
            folder = stage.dir / "edge"
            graph = Path(s.edge_graph).expanduser().resolve() if s.edge_graph else stage.dir / "graph.duckdb"
            if s.edge_graph is None:
                self._edge(["graph", "build", "--run", str(graph), "--seed", str(s.edge_seed),
                            *(["--rounds", str(s.edge_rounds)] if s.edge_rounds else []),
                            *(["--trials", str(s.edge_trials)] if s.edge_trials else []),
                            *[f"--tool={t}" for t in s.edge_tools]])
            elif not graph.is_file():
                raise LoopError(f"--graph {graph}: no such Phase A run file (kopa edge graph build --run FILE)")
            self._edge(["synth", "--graph", str(graph), "-n", str(s.edge_items),
                        "--seed", str(s.edge_seed), "--out", str(folder)])
            self._edge(["filter", str(folder), "--no-embeddings"])
            self._edge(["export", str(folder), "--slips", str(s.sft_slips)])
        export = self._check_export(folder)
        rows = sum(1 for _ in (folder / "sft.jsonl").open(encoding="utf-8"))
        figures = {"folder": str(folder), "rows": rows, "bundle": export.get("bundle")}
        if s.dataset is None:  # synthesized here: which code made it decides whether a later run may reuse it
            figures["edge_code"] = edge_code()
        (stage.dir / "dataset.json").write_text(json.dumps(figures, indent=1), encoding="utf-8")
        return stage.finish(["dataset.json"], figures)

    def _edge(self, args: list[str]) -> None:
        """One ``kopa edge`` command, its episode limits the loop's (``KOPA_EPISODE``, as JSON)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_EPISODE__")}
        env["KOPA_EPISODE"] = self.settings.limits.model_dump_json()
        self.log("  kopa edge " + " ".join(args))
        done = subprocess.run([sys.executable, "-m", "appliance", "edge", *args], env=env, capture_output=True,
                              text=True)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise LoopError(f"kopa edge {args[0]} failed (exit {done.returncode}): " + " | ".join(tail))

    def _check_export(self, folder: Path) -> dict[str, Any]:
        needed = ("sft.jsonl", "train.parquet", "export.json")
        missing = [n for n in needed if not (folder / n).is_file()]
        if not (folder / "kept.jsonl").is_file() and not (folder / "items.jsonl").is_file():
            missing.append("kept.jsonl")
        if missing:
            raise LoopError(f"--dataset {folder}: {', '.join(missing)} missing; give a folder `kopa edge export` "
                            "wrote")
        export = json.loads((folder / "export.json").read_text(encoding="utf-8"))
        wanted = self.settings.limits.model_dump(mode="json")
        had = export.get("limits")
        if had != wanted:
            raise LoopError(f"--dataset {folder} was exported with episode limits {had}, the loop evaluates with "
                            f"{wanted}: training rows and evaluated prompts would differ; export it with "
                            "KOPA_EPISODE set to the loop's limits (JSON)")
        return export

    def training_items(self) -> list[Any]:
        from edge.dataset.items_io import read_items

        folder = self.dataset_dir()
        return read_items(folder / "kept.jsonl" if (folder / "kept.jsonl").is_file() else folder / "items.jsonl")

    def audit(self, stage: Stage) -> dict[str, Any]:
        from edge.filter.split_audit import audit_split, tool_coverage

        split, evaluated = self.split()
        items = self.training_items()
        result = audit_split(split, items)
        coverage = tool_coverage(split, items, tasks=evaluated)  # golden actions whose tool the data calls
        (stage.dir / "audit.txt").write_text(result.table() + "\n\n" + coverage.table() + "\n", encoding="utf-8")
        if not result.clean:
            raise LoopError(f"the eval split {split.name} leaks into the training data:\n{result.table()}")
        self.log("  " + coverage.table().replace("\n", "\n  "))
        return stage.finish(["audit.txt"], {"split": split.name, "tasks": len(split.tasks), "clean": True,
                                            "training_items": len(items), "tool_coverage": coverage.figures()})

    def evaluate(self, stage: Stage, model: Path | None) -> dict[str, Any]:
        _, tasks = self.split()
        s = self.settings
        out = stage.dir / EPISODES

        def progress(row: EpisodeFigures) -> None:
            self.log(f"  {row.task_id} seed {row.seed}: passed {row.passed} Corr {row.corr:.2f} calls {row.calls} "
                     f"({row.well_formed} well-formed)")

        if model is None:
            from bench.agents.listed_order import ListedOrderAgent

            rows = evaluate_agent(ListedOrderAgent, tasks, seeds=s.seeds, limits=s.limits, out=out, home=self.home,
                                  progress=progress)
        else:
            from train.engines.trl.model import load_for_inference

            loaded, tokenizer = load_for_inference(self.model_source(model))
            rows = evaluate_model(loaded, tokenizer, tasks, seeds=s.seeds, limits=s.limits, out=out, home=self.home,
                                  max_new_tokens=s.max_new_tokens, batch=s.eval_batch,
                                  guide_tool_calls=s.guide_tool_calls, precision=s.eval_precision,
                                  progress=progress)
        return _finish_evaluation(stage, rows)

    def evaluate_grpo(self, stage: Stage) -> dict[str, Any]:
        """The GRPO checkpoint evaluated; when GRPO changed no weight of the SFT adapter (every rollout group's
        rewards were equal, so every advantage and gradient was zero), it is the model eval-sft played greedily
        with the same settings, and that evaluation is taken instead of an hour of playing it again."""
        sft, grpo = self.run / "sft" / "checkpoint", self.run / "grpo" / "checkpoint"
        if same_adapter(sft, grpo):
            self.log("  GRPO left the SFT adapter unchanged: its evaluation is eval-sft's")
            shutil.copyfile(self.run / "eval-sft" / EPISODES, stage.dir / EPISODES)
            return _finish_evaluation(stage, read_episodes(stage.dir / EPISODES), same_weights_as="eval-sft")
        return self.evaluate(stage, grpo)

    def sft(self, stage: Stage) -> dict[str, Any]:
        from train.engines.trl.sft import latest_trainer_checkpoint, run_sft

        s = self.settings
        _, tasks = self.split()
        probe = ProbeCallback(self, tasks[:s.probe_tasks], stage.dir / "probes")
        resumed = latest_trainer_checkpoint(stage.dir)
        if resumed is not None:
            self.log(f"  continuing from {resumed.name}")
        else:  # probes of a killed run that left no checkpoint measured weights that are gone
            shutil.rmtree(stage.dir / "probes", ignore_errors=True)
        select = None
        if s.sft_balance == "domain":  # sft_steps rows (batch 1), as many from each domain as it can give
            from mcp_gateway.catalog import load_catalog
            from train.row_balance import balanced_rows, domain_of_row

            select = partial(balanced_rows, n=s.sft_steps, key=domain_of_row(load_catalog()), seed=s.seed)
        run_sft(self.dataset_dir(), home=self.home, model=self.model_arg(), max_steps=s.sft_steps, seed=s.seed,
                learning_rate=s.sft_learning_rate, max_length=s.max_length, run_dir=stage.dir, callbacks=[probe],
                save_every=1, resume=True, select=select,
                on_step=lambda line: self.log(f"  sft step {line.get('step')}: loss {line.get('loss')}"))
        (stage.dir / "probes.json").write_text(json.dumps(probe.curve, indent=1), encoding="utf-8")
        return stage.finish(["checkpoint", "metrics.jsonl", "probes.json"], {"steps": s.sft_steps})

    def grpo(self, stage: Stage) -> dict[str, Any]:
        from train.engines.trl.grpo import run_grpo

        s = self.settings
        run_grpo(self.dataset_dir(), home=self.home, model=self.run / "sft" / "checkpoint", max_steps=s.grpo_steps,
                 num_generations=s.grpo_generations, seed=s.seed, learning_rate=s.grpo_learning_rate,
                 limits=s.limits, max_new_tokens=s.max_new_tokens, cassettes=self.cassettes, run_dir=stage.dir,
                 on_step=lambda line: self.log(f"  grpo step {line.get('step')}: reward {line.get('reward_mean')}"))
        return stage.finish(["checkpoint", "metrics.jsonl"], {"steps": s.grpo_steps})

    def report(self, stage: Stage) -> LoopReport:
        report = self.build_report()
        (stage.dir / "report.json").write_text(json.dumps(report.to_json(), indent=1, default=str), encoding="utf-8")
        (stage.dir / "report.md").write_text(report.table() + "\n", encoding="utf-8")
        (stage.dir / "report.html").write_text(report.html(), encoding="utf-8")
        stage.finish(["report.json", "report.md", "report.html"])
        return report

    def _label(self, name: str) -> str:
        done = self.run / name / "done.json"
        record = json.loads(done.read_text(encoding="utf-8")) if done.is_file() else {}
        same = record.get("figures", {}).get("same_weights_as")
        return EVALUATED[name] + (f" = {EVALUATED[same]}: no weight changed" if same in EVALUATED else "")

    def build_report(self) -> LoopReport:
        models = [summarize_model(self._label(name), read_episodes(self.run / name / EPISODES)) for name in EVALUATED
                  if (self.run / name / EPISODES).is_file()]
        return LoopReport(models=models, settings=_dump_settings(self.settings),
                          sft_steps=_lines(self.run / "sft" / "metrics.jsonl"),
                          grpo_steps=_lines(self.run / "grpo" / "metrics.jsonl"),
                          probes=json.loads((self.run / "sft" / "probes.json").read_text(encoding="utf-8"))
                          if (self.run / "sft" / "probes.json").is_file() else [],
                          stage_seconds=dict(self.times), tool_coverage=self._coverage())

    def _coverage(self) -> dict[str, Any]:
        done = self.run / "audit" / "done.json"
        record = json.loads(done.read_text(encoding="utf-8")) if done.is_file() else {}
        return record.get("figures", {}).get("tool_coverage", {})


def _finish_evaluation(stage: Stage, rows: list[EpisodeFigures], **extra: Any) -> dict[str, Any]:
    """The evaluation stage recorded as done, with its episodes' figures (means over seeds)."""
    summary = summarize_model(EVALUATED[stage.name], rows)
    return stage.finish([EPISODES], {"episodes": len(rows), **extra, **{k: v.mean for k, v in summary.figures.items()}})


def same_adapter(first: Path, second: Path) -> bool:
    """Whether two LoRA adapter folders hold the same adapter: equal configs and every tensor equal."""
    from safetensors.torch import load_file

    def config(folder: Path) -> Any:
        data = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))
        if isinstance(data.get("target_modules"), list):  # a set to peft, written in no fixed order
            data["target_modules"] = sorted(data["target_modules"])
        return data

    weights = "adapter_model.safetensors"
    if not all((f / weights).is_file() and (f / "adapter_config.json").is_file() for f in (first, second)):
        return False
    if config(first) != config(second):
        return False
    a, b = load_file(first / weights), load_file(second / weights)
    return a.keys() == b.keys() and all(a[k].shape == b[k].shape and bool((a[k] == b[k]).all()) for k in a)


def _input_errors() -> tuple[type[Exception], ...]:
    """What the stages' parts raise for bad input (a dataset, a model, a split): one line each, no traceback."""
    from bench.splits import SplitError
    from edge.dataset.items_io import DatasetFileError
    from train.engines.trl.grpo import GrpoError
    from train.engines.trl.model import ModelInputError

    return (SplitError, DatasetFileError, GrpoError, ModelInputError)


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class ProbeCallback:
    """A ``transformers`` trainer callback: the model being trained evaluated on the probe tasks (seed 0) before
    the first step and every ``probe_every`` steps (and after the last); ``curve`` has a point per probe.

    A probe runs once its step's checkpoint is saved (``on_save``), so a run killed during a probe continues it with
    the same weights, from the episodes already played; a resumed run reads the earlier probes from their files."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from transformers import TrainerCallback

        class _Probe(TrainerCallback):  # type: ignore[misc,valid-type]
            def __init__(self, loop: Loop, tasks: list[Any], folder: Path):
                self.loop, self.tasks, self.folder, self.curve = loop, tasks, folder, []
                self.tokenizer = None

            def due(self, step: int, max_steps: int) -> bool:
                return step == 0 or step % self.loop.settings.probe_every == 0 or step >= max_steps

            def probe(self, model: Any, step: int) -> None:
                if any(p["step"] == step for p in self.curve):
                    return
                out = self.folder / f"step-{step:05d}.jsonl"
                if model is None:  # an earlier step's probe, finished before the checkpoint resumed from
                    rows = read_episodes(out)
                else:
                    rows = evaluate_model(model, self.tokenizer, self.tasks, seeds=(0,),
                                          limits=self.loop.settings.limits, out=out, home=self.loop.home,
                                          max_new_tokens=self.loop.settings.max_new_tokens,
                                          batch=self.loop.settings.eval_batch,
                                          guide_tool_calls=self.loop.settings.guide_tool_calls,
                                          precision=self.loop.settings.eval_precision)
                summary = summarize_model(f"step {step}", rows)
                point = {"step": step, "examples_seen": step,  # batch 1: one row per step
                         "well-formed": summary.figures["well-formed"].mean, "Corr": summary.figures["Corr"].mean}
                self.curve.append(point)
                self.loop.log(f"  probe at step {step}: well-formed {point['well-formed']} Corr {point['Corr']}")

            def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                               processing_class: Any = None, **kw: Any) -> None:
                self.tokenizer = processing_class
                for step in range(state.global_step + 1):  # a resumed run: the probes of its earlier steps
                    if self.due(step, state.max_steps):
                        self.probe(model if step == state.global_step else None, step)

            def on_save(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
                if self.due(state.global_step, state.max_steps):
                    self.probe(model, state.global_step)

        return _Probe(*args, **kwargs)


def run_loop(settings: LoopSettings, *, run: Path, home: Path, cassettes: Path,
             log: Log = print, reuse: Path | None = None) -> LoopReport:
    """Every stage not yet done, in order; the report (module doc). ``reuse``: an earlier run whose finished stages
    these settings would compute unchanged are copied first (``train.loop.reuse``).

    Raises:
        LoopError: bad settings or dataset, a corrupt stage, a leaking split, a failed EDGE command.
    """
    run = Path(run).expanduser().resolve()
    _check_settings(run, settings)
    with _only_loop_on(run):
        if reuse is not None:
            from .reuse import reuse_stages

            reuse_stages(reuse, run, settings, log=log)
        return _run_stages(settings, run, home=home, cassettes=cassettes, log=log)


@contextmanager
def _only_loop_on(run: Path) -> Iterator[None]:
    """Hold ``run``'s lock while the loop runs: a second ``kopa train loop`` on the same folder would play the same
    episodes again and append them beside the first's (it happened once, by hand), so it is refused."""
    with open(run / LOCK_FILE, "a+", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            raise LoopError(f"{run} is in use by another kopa train loop ({holder}); wait for it to end or stop it "
                            "first (kopa train loop --status reads the folder meanwhile)") from None
        lock.truncate(0)
        lock.write(f"pid {os.getpid()}\n")
        lock.flush()
        try:
            yield
        finally:
            lock.truncate(0)


def _run_stages(settings: LoopSettings, run: Path, *, home: Path, cassettes: Path, log: Log) -> LoopReport:
    loop = Loop(settings, run, Path(home).expanduser(), cassettes=Path(cassettes).expanduser(), log=log)
    loop.stage("dataset", loop.build_dataset)
    loop.stage("audit", loop.audit)
    loop.stage("eval-listed", lambda st: loop.evaluate(st, None), keep=(EPISODES,))
    loop.stage("eval-base", lambda st: loop.evaluate(st, loop.model_arg()), keep=(EPISODES,))
    loop.stage("sft", loop.sft, keep=SFT_RESUME)
    loop.stage("eval-sft", lambda st: loop.evaluate(st, run / "sft" / "checkpoint"), keep=(EPISODES,))
    loop.stage("grpo", loop.grpo)
    loop.stage("eval-grpo", loop.evaluate_grpo, keep=(EPISODES,))
    stage = Stage(run, "report")
    stage.begin()
    report = loop.report(stage)
    log(f"[report] {stage.dir / 'report.md'}")
    return report


def loop_status(run: Path, *, home: Path, cassettes: Path) -> tuple[dict[str, str], LoopReport]:
    """What a run folder holds now, running nothing: each stage's state (done, started and not finished, not
    started, or refused with the reason) and the report of the episodes played so far (an evaluation still running
    counts with the episodes it has).

    Raises:
        LoopError: the folder is not a loop run.
    """
    run = Path(run).expanduser().resolve()
    if not (run / "loop.json").is_file():
        raise LoopError(f"{run} is not a loop run folder (no loop.json)")
    settings = continued_settings(recorded_settings(run) or {}, {})
    loop = Loop(settings, run, Path(home).expanduser(), cassettes=Path(cassettes).expanduser(), log=lambda _: None)
    states = {}
    for name in STAGES[:-1]:
        try:
            record = Stage(run, name).finished()
        except LoopError as exc:
            states[name] = f"refused: {exc}"
            continue
        if record is not None:
            loop.times[name] = record.get("seconds") or 0.0
        states[name] = ("done" if record is not None else "started, not finished" if (run / name).is_dir()
                        else "not started")
    return states, loop.build_report()
