"""Evaluation inside the loop: a model (torch, greedy) or a baseline agent over the eval split, on the bench harness.

    rows = evaluate_model(source, split.tasks, seeds=(0, 1, 2), limits=limits, out=run / "eval-base" / "episodes.jsonl")
    rows = evaluate_agent(ListedOrderAgent, split.tasks, seeds=(0, 1, 2), limits=limits, out=...)

Every episode is ``bench.episode.run_episode`` on a strict-replay gateway of the task's bundle (``cassettes/``),
through ``train.episode.run_rollout`` for a model: the same prompt, tool order (seeded per task and seed), limits,
agent step and scorers as ``kopa bench run``. The model plays greedily (``train.engines.trl.generate``), so a seed
changes the episode (its tool order and key tokens), not the decoding; the model is the one training used, read in
torch (fp32, or under bf16 autocast: the loop's ``eval_precision``). ``batch`` episodes run at once and their
generations go through the model as one batch (``GreedyBatch``: decoding reads the weights once per token for the
whole batch), each episode keeping its attention cache from turn to turn (``train.engines.trl.kv_reuse``), so a
turn reads only the tokens it adds. The model's messages give what the bench's
verdicts do not:

* ``calls`` / ``well_formed``: tool calls the model wrote, and those that could be read and name an offered tool;
* ``key_ok``: on a task whose tools take an API key, the model called such a tool and every such call passed the
  episode's key token from its runtime context (None on a task without keyed tools);
* ``answered``: the episode ended with an answer;
* ``actions`` and ``answer`` (its first 300 characters): what the episode did, to see where a model fails (a call's
  tool and arguments; the runtime context's keys and tokens written ``<key>``: no key is written to a result file).

Episodes are appended to ``out`` as they finish, one JSON line each; a killed evaluation continues from the
episodes already there (a truncated last line is dropped).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.limits import EpisodeLimits
from bench.task import Task
from models.toolcalls import INVALID_CALL

from .stages import LoopError

__all__ = ["EpisodeFigures", "evaluate_agent", "evaluate_model", "episode_figures", "read_episodes"]

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class EpisodeFigures:
    """What the loop's report needs of one evaluated episode (module doc)."""

    task_id: str
    domain: str
    seed: int
    passed: bool
    corr: float
    action: float
    calls: int
    well_formed: int
    key_ok: bool | None
    answered: bool
    turns: int
    error: str | None = None
    actions: tuple[dict[str, Any], ...] = ()  # the calls made: {"tool", "args"}, runtime tokens redacted
    answer: str = ""  # its first 300 characters, runtime tokens redacted


def _keyed_tools(names: Iterable[str]) -> dict[str, str]:
    """Tool name → its API-key parameter, for the tools that take one."""
    from mcp_gateway.catalog import load_catalog
    from mcp_gateway.catalog.spec import ParamKind

    catalog = _catalog_cache.setdefault("catalog", load_catalog())
    out = {}
    for name in names:
        key = next((p.name for p in catalog.get(name).params if p.kind is ParamKind.API_KEY), None)
        if key:
            out[name] = key
    return out


_catalog_cache: dict[str, Any] = {}


def episode_figures(task: Task, outcome: Any, messages: Sequence[Mapping[str, Any]] | None,
                    turns: int) -> EpisodeFigures:
    """The figures of one scored episode (``bench.episode.EpisodeOutcome``) and the model's messages (None for a
    baseline agent: its calls are its transcript)."""
    agent_calls = [e for e in outcome.transcript if e.get("by") == "agent"]
    offered = set(task.available_tools)
    if messages is None:
        written = [e["tool"] for e in agent_calls]
    else:
        written = [c.get("function", {}).get("name") for m in messages if m.get("role") == "assistant"
                   for c in m.get("tool_calls") or []]
    well_formed = sum(1 for name in written if name != INVALID_CALL and name in offered)
    keyed = _keyed_tools(offered)
    key_ok: bool | None = None
    if keyed:
        tokens = {v for v in outcome.runtime_context.values() if isinstance(v, str)}
        used = [e for e in agent_calls if e["tool"] in keyed]
        key_ok = bool(used) and all((e.get("args") or {}).get(keyed[e["tool"]]) in tokens for e in used)
    answer = outcome.answer
    secrets = sorted({v for k, v in outcome.runtime_context.items()
                      if isinstance(v, str) and v and ("key" in k.lower() or "token" in k.lower())}, key=len, reverse=True)
    actions = tuple({"tool": e["tool"], "args": _redacted(e.get("args") or {}, secrets)} for e in agent_calls)
    return EpisodeFigures(task_id=task.id, domain=task.domain, seed=outcome.seed, passed=bool(outcome.passed),
                          corr=float(outcome.action.corr), action=float(outcome.action.action), calls=len(written),
                          well_formed=well_formed, key_ok=key_ok, answered=bool(answer and answer.strip()),
                          turns=turns, error=outcome.error, actions=actions,
                          answer=_redacted(answer or "", secrets)[:300])  # cut after: no token is left half-written


def _redacted(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with every one of ``secrets`` (longest first) written ``<key>``, inside strings at any depth."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "<key>")
        return value
    if isinstance(value, Mapping):
        return {k: _redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v, secrets) for v in value]
    return value


def read_episodes(path: Path) -> list[EpisodeFigures]:
    """The episodes written so far (a truncated last line, from a killed run, is dropped).

    Raises:
        LoopError: a line is not an episode, or plays a (task, seed) pair an earlier line played.
    """
    if not path.is_file():
        return []
    rows = []
    first_line: dict[tuple[str, int], int] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        try:
            fields = json.loads(line)
            row = EpisodeFigures(**{**fields, "actions": tuple(fields.get("actions") or ())})
        except (json.JSONDecodeError, TypeError, AttributeError) as exc:
            if number == len(lines):
                break  # cut off mid-write
            raise LoopError(f"{path}:{number}: not an evaluated episode ({exc})") from None
        if (seen := first_line.setdefault((row.task_id, row.seed), number)) != number:
            raise LoopError(f"{path}:{number}: {row.task_id} seed {row.seed} was already played on line {seen}; two "
                             "evaluations wrote to this file, so its figures would count an episode twice")
        rows.append(row)
    return rows


class _Episodes:
    """Appends episodes to ``out`` and knows which (task, seed) pairs are done."""

    def __init__(self, out: Path):
        self.out = out
        self.rows = read_episodes(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in self.rows), encoding="utf-8")
        self.done = {(r.task_id, r.seed) for r in self.rows}

    def add(self, row: EpisodeFigures) -> None:
        with self.out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(asdict(row), ensure_ascii=False) + "\n")
        self.rows.append(row)
        self.done.add((row.task_id, row.seed))


async def _each_episode(tasks: Sequence[Task], seeds: Sequence[int], out: Path, home: Path, cassettes: Path,
                        play: Callable[[Task, int, Any], Any],
                        progress: Callable[[EpisodeFigures], None] | None, width: int = 1,
                        batched: Any = None) -> list[EpisodeFigures]:
    """Play every (task, seed) not yet in ``out``, seed by seed in task order, ``width`` episodes at a time (each
    worker takes the next one as it finishes one, so the schedule depends only on the episodes); ``batched``: the
    ``GreedyBatch`` the workers' episodes generate through."""
    from bench.runner import open_bench_gateway

    episodes = _Episodes(out)
    todo = [(task, seed) for seed in seeds for task in tasks if (task.id, seed) not in episodes.done]
    gateways: dict[str, Any] = {}

    async def worker() -> None:
        try:
            while todo:
                task, seed = todo.pop(0)
                if task.bundle not in gateways:
                    gateways[task.bundle] = open_bench_gateway(task.bundle, cassettes=cassettes, home=home)
                row = await play(task, seed, gateways[task.bundle])
                episodes.add(row)
                if progress is not None:
                    progress(row)
        finally:
            if batched is not None:
                batched.worker_done()

    workers = max(1, min(width, len(todo)))
    if batched is not None:
        batched.expect(workers)
    try:
        await asyncio.gather(*(worker() for _ in range(workers)))
    finally:
        for gateway in gateways.values():
            await gateway.aclose()
    return episodes.rows


def evaluate_model(model: Any, tokenizer: Any, tasks: Sequence[Task], *, seeds: Sequence[int], limits: EpisodeLimits,
                   out: Path, home: Path, cassettes: Path = REPO / "cassettes", max_new_tokens: int = 256,
                   max_response_tokens: int = 4096, batch: int = 1, guide_tool_calls: bool = False,
                   precision: str = "fp32",
                   progress: Callable[[EpisodeFigures], None] | None = None) -> list[EpisodeFigures]:
    """``model`` (a loaded causal LM, adapter or not) played greedily over ``tasks`` × ``seeds`` (module doc);
    ``batch``: that many episodes at once, their generations batched (``GreedyBatch``); ``guide_tool_calls``: a
    call, once opened, decoded under the offered tools' grammar (``train.engines.trl.call_grammar``); ``precision``:
    fp32, or bf16 autocast (``GreedyBatch``)."""
    from bench.agents.step import TokenTrace
    from train.engines.trl.generate import GreedyBatch
    from train.engines.trl.tokens import ChatTemplateTokens
    from train.episode import run_rollout

    batched = GreedyBatch(model, tokenizer, max_new_tokens=max_new_tokens, guide_tool_calls=guide_tool_calls,
                          precision=precision)

    async def play(task: Task, seed: int, gateway: Any) -> EpisodeFigures:
        trace = TokenTrace(ChatTemplateTokens(tokenizer), max_response_tokens=max_response_tokens)
        policy = batched.policy(trace)
        rollout = await run_rollout(task, policy, gateway, limits=limits, seed=seed, tokens=trace)
        return episode_figures(task, rollout.outcome, rollout.messages, rollout.turns)

    return asyncio.run(_each_episode(tasks, seeds, out, home, cassettes, play, progress, width=batch,
                                     batched=batched))


def evaluate_agent(make_agent: Callable[[], Any], tasks: Sequence[Task], *, seeds: Sequence[int],
                   limits: EpisodeLimits, out: Path, home: Path, cassettes: Path = REPO / "cassettes",
                   progress: Callable[[EpisodeFigures], None] | None = None) -> list[EpisodeFigures]:
    """A bench agent (a baseline: ``make_agent()`` per episode) over ``tasks`` × ``seeds``, as ``kopa bench run``
    plays it."""
    from bench.episode import run_episode

    async def play(task: Task, seed: int, gateway: Any) -> EpisodeFigures:
        outcome = await run_episode(task, make_agent(), gateway, seed=seed, timeout_s=limits.episode_timeout_s,
                                    tool_timeout_s=limits.tool_timeout_s)
        calls = sum(1 for e in outcome.transcript if e.get("by") == "agent")
        return episode_figures(task, outcome, None, calls)

    return asyncio.run(_each_episode(tasks, seeds, out, home, cassettes, play, progress))
