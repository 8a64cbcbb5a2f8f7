"""Export: verl parquet for GRPO, SFT JSONL in the OpenAI chat format, and the bundle the items replay from.

    gateway = open_bench_gateway(bundle, cassettes=Path("cassettes"))          # strict replay, bench profile
    replays = await replay_items(items, gateway)                                 # golden calls, replayed
    export_verl(items, Path("out/train.parquet"), replays=replays)
    export_sft(items, Path("out/sft.jsonl"), replays=replays)
    ref = bundle_for(items, Path("cassettes"), "kopa-edge")

Both writers validate every task with ``bench.task.validate_against_catalog`` first and refuse the whole export,
naming the item, when one is bad; refuse to replace an existing file unless ``overwrite=True``; and write to a
temporary file in the same folder that is renamed into place, so a reader never sees half a file. Rows are in id
order and every JSON string is written with sorted keys: the same items give byte-identical files.

**Replay.** ``replay_items`` runs each item as a bench episode (``bench.episode.run_episode``, seed 0, rollout 0)
with an oracle that keeps what it sees: the system prompt the bench builds (base instruction, the runtime
context with the episode's key tokens, the answer format), the tools as the model sees them, and each golden
call's result as the OpenAI agent would show it (``cap_tool_response`` of ``ToolResult.structured()``). An item
whose golden trajectory does not replay to a pass is refused, naming it. The episode's key tokens are fixed by
(task, seed, rollout), so a training rollout run as episode seed 0 sees the same tokens the prompt shows.

**Slips** (``slips``, a share of the items; none by default): an item chosen by a seeded hash of its id first makes
its first keyed golden call without its ``KEY`` and gets the gateway's real answer (``missing_field``, telling the
model to pass the key it was given), then makes the golden call. The SFT row shows that call with ``"weight": 0``
(OpenAI's fine-tuning format: shown, not learnt; ``models.templates`` leaves it out of the loss), so a model learns
to read an error and correct its call, not to make the error. A model that only ever saw clean rows repeated its
failed call to the turn limit (run9, ``results/train-loop.md``).

**verl parquet** columns: ``data_source`` ("kopa-edge"), ``prompt`` ([system, user] messages), ``ability``
("tool-calling"), ``reward_model`` ({"style": "rule", "ground_truth": JSON of the answer spec}) and
``extra_info`` (JSON: index, item id, tools, bundle, golden actions, answer spec, task type).

**SFT JSONL**: one object per item: ``id``, ``tools`` (OpenAI function specs) and ``messages``: system, user,
one assistant turn per golden step with its ``tool_calls`` (parallel calls share the turn), the ``tool``
messages with the replayed results, and the final answer as the bench's oracle writes it (``\\boxed{…}`` for a
number, ``ANSWER: {…}`` otherwise).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.agents.base import EpisodeContext, resolve_placeholders
from bench.agents.oracle import format_answer, golden_steps
from bench.agents.step import cap_tool_response, shown_tools
from bench.episode import run_episode
from bench.limits import EpisodeLimits
from bench.task import Task, validate_against_catalog
from bench.tool_order import presented_order
from edge.synth.item import SynthItem
from mcp_gateway.catalog.generic import KEY_NAME
from recorder import CassetteStore
from recorder.cassette.store import BundleRef

__all__ = ["ABILITY", "DATA_SOURCE", "ExportError", "ReplayedCall", "ReplayedItem", "Slip", "answer_spec", "bundle_for",
           "export_sft", "export_verl", "replay_items", "sft_record", "slipped", "verl_rows"]

DATA_SOURCE = "kopa-edge"
ABILITY = "tool-calling"


class ExportError(ValueError):
    """An item cannot be exported (bad against the catalog, not replayable) or the output is in the way."""


@dataclass(frozen=True)
class ReplayedCall:
    tool: str
    arguments: dict[str, Any]  # placeholders resolved: what the model passes
    content: str  # the tool message the model sees


@dataclass(frozen=True)
class Slip:
    """A golden call made once without its key before it is made right, and the gateway's answer (module doc)."""

    before: int  # the index, in golden order, of the call it precedes
    call: ReplayedCall


@dataclass(frozen=True)
class ReplayedItem:
    item_id: str
    system_prompt: str
    tools: tuple[dict[str, Any], ...]  # OpenAI ``tools`` entries, in the order the episode showed them
    calls: tuple[ReplayedCall, ...]  # golden order
    slip: Slip | None = None


def slipped(item_id: str, share: float, seed: int = 0) -> bool:
    """Whether the item's row shows a slip: a seeded hash of its id under ``share`` (stable across runs)."""
    digest = hashlib.sha256(f"slip:{seed}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


class _KeepingOracle:
    """The bench oracle that also keeps the prompt, the tools and every golden call's result."""

    name = "oracle"

    def __init__(self, limits: EpisodeLimits, *, slip: bool = False) -> None:
        self.limits, self.slip = limits, slip
        self.seen: ReplayedItem | None = None
        self.failures: list[str] = []

    async def run(self, context: EpisodeContext) -> str | None:
        calls: list[ReplayedCall] = []
        slip: Slip | None = None
        for actions in golden_steps(context.task):
            args = [resolve_placeholders(a.args, context.runtime_context) for a in actions]
            for action, arguments in zip(actions, args, strict=True):
                if self.slip and slip is None and KEY_NAME in arguments:
                    slip = await self._slip(context, action.tool, arguments, len(calls))
                # one at a time, in golden order: the transcript order (and so the file) is then fixed
                result = await context.call(action.tool, arguments)
                if result.is_error:
                    self.failures.append(f"{action.tool} (step {action.step}): {result.outcome.value}: {result.message}")
                calls.append(ReplayedCall(action.tool, arguments, self._shown(result)))
        self.seen = ReplayedItem(context.task.id, context.system_prompt,
                                 tuple(shown_tools([t.as_openai() for t in context.tools], self.limits)),
                                 tuple(calls), slip)
        return None if self.failures else format_answer(context.task)

    async def _slip(self, context: EpisodeContext, tool: str, arguments: dict[str, Any], before: int) -> Slip:
        keyless = {k: v for k, v in arguments.items() if k != KEY_NAME}
        result = await context.call(tool, keyless)
        if not result.is_error:
            self.failures.append(f"{tool}: a call without its {KEY_NAME} was answered {result.outcome.value}")
        return Slip(before, ReplayedCall(tool, keyless, self._shown(result)))

    def _shown(self, result: Any) -> str:
        return cap_tool_response(result.structured(), self.limits.max_tool_tokens)


async def replay_items(items: Sequence[SynthItem], gateway: Any, *, seed: int = 0,
                       limits: EpisodeLimits | None = None, slips: float = 0.0) -> dict[str, ReplayedItem]:
    """Each item's golden trajectory replayed through ``gateway`` (bench profile), by item id, its tools and tool
    results shaped as an agent step under ``limits`` shows them (``max_description_chars``, ``max_tool_tokens``;
    default ``EpisodeLimits()``): train with the limits you evaluate with. A ``slips`` share of the items (``slipped``)
    first make their first keyed call without the key (module doc).

    Raises:
        ExportError: an item whose golden calls fail or whose episode does not pass, naming it and why.
    """
    if not 0.0 <= slips <= 1.0:
        raise ExportError(f"slips is a share of the items, from 0 to 1; got {slips}")
    out: dict[str, ReplayedItem] = {}
    for item in sorted(items, key=lambda i: i.task.id):
        agent = _KeepingOracle(limits or EpisodeLimits(), slip=slipped(item.task.id, slips, seed))
        outcome = await run_episode(item.task, agent, gateway, seed=seed)
        if agent.failures or not outcome.passed or agent.seen is None:
            why = "; ".join(agent.failures) or outcome.error or "the golden answer did not pass the bench scorers"
            raise ExportError(f"item {item.task.id!r} does not replay: {why}")
        out[item.task.id] = agent.seen
    return out


# ---------------------------------------------------------------------------------------------- rows


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def answer_spec(task: Task) -> dict[str, Any]:
    """What the reward checks: response type, accepted answers, golden actions, reward basis (and state hash)."""
    dumped = task.model_dump(mode="json")
    spec = {k: dumped[k] for k in ("response_type", "accepted_answers", "golden_actions", "reward_basis")}
    if task.golden_state_hash is not None:
        spec["golden_state_hash"] = task.golden_state_hash
    return spec


def verl_rows(items: Sequence[SynthItem], replays: Mapping[str, ReplayedItem]) -> list[dict[str, Any]]:
    """The parquet rows, in id order."""
    rows = []
    for index, item in enumerate(sorted(items, key=lambda i: i.task.id)):
        task, replay = item.task, _replay_of(item, replays)
        spec = answer_spec(task)
        rows.append({
            "data_source": DATA_SOURCE,
            "prompt": [{"role": "system", "content": replay.system_prompt}, {"role": "user", "content": task.query}],
            "ability": ABILITY,
            "reward_model": {"style": "rule", "ground_truth": _dumps(spec)},
            "extra_info": _dumps({"index": index, "item_id": task.id,
                                  "tools": presented_order(task.id, task.available_tools, 0),  # as the prompt shows
                                  "bundle": task.bundle, "golden_actions": spec["golden_actions"],
                                  "answer_spec": spec, "task_type": item.task_type.value,
                                  # the whole task: a training rollout needs its system state and call budget
                                  "task": task.model_dump(mode="json")}),
        })
    return rows


def sft_record(item: SynthItem, replay: ReplayedItem) -> dict[str, Any]:
    """One SFT conversation in the OpenAI chat format."""
    task = item.task
    messages: list[dict[str, Any]] = [{"role": "system", "content": replay.system_prompt},
                                      {"role": "user", "content": task.query}]
    position = 0
    for actions in golden_steps(task):
        if replay.slip is not None and position <= replay.slip.before < position + len(actions):
            messages += _slip_messages(replay.slip.call)
        turn = replay.calls[position:position + len(actions)]
        ids = [f"call_{position + k}" for k in range(len(actions))]
        position += len(actions)
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": call.tool, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
            for call_id, call in zip(ids, turn, strict=True)]})
        messages += [{"role": "tool", "tool_call_id": call_id, "content": call.content}
                     for call_id, call in zip(ids, turn, strict=True)]
    messages.append({"role": "assistant", "content": format_answer(task)})
    return {"id": task.id, "task_type": item.task_type.value, "tools": list(replay.tools), "messages": messages}


def _slip_messages(call: ReplayedCall) -> list[dict[str, Any]]:
    """The slipped call, shown but not learnt (``"weight": 0``), and the gateway's answer to it."""
    return [{"role": "assistant", "content": "", "weight": 0, "tool_calls": [
                {"id": "call_slip", "type": "function",
                 "function": {"name": call.tool, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}]},
            {"role": "tool", "tool_call_id": "call_slip", "content": call.content}]


def _replay_of(item: SynthItem, replays: Mapping[str, ReplayedItem]) -> ReplayedItem:
    replay = replays.get(item.task.id)
    if replay is None:
        raise ExportError(f"item {item.task.id!r} has no replay: run replay_items over it first")
    if len(replay.calls) != len(item.task.golden_actions):
        raise ExportError(f"item {item.task.id!r}: its replay has {len(replay.calls)} calls for "
                          f"{len(item.task.golden_actions)} golden actions")
    return replay


# ---------------------------------------------------------------------------------------------- writing


def _check(items: Sequence[SynthItem], path: Path, overwrite: bool, catalog: Any) -> None:
    if not items:
        raise ExportError("no items to export")
    ids = [i.task.id for i in items]
    if dup := sorted({i for i in ids if ids.count(i) > 1}):
        raise ExportError(f"item id(s) {dup} appear more than once")
    if catalog is None:
        from mcp_gateway.catalog import load_catalog

        catalog = load_catalog()
    if problems := validate_against_catalog([i.task for i in items], catalog):
        shown = "\n  ".join(problems[:20])
        raise ExportError(f"{len(problems)} problem(s) against the tool catalog; nothing was written:\n  {shown}")
    if path.exists() and not overwrite:
        raise ExportError(f"{path} exists; pass overwrite=True to replace it")


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


_VERL_SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
    ("ability", pa.string()),
    ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
    ("extra_info", pa.string()),
])


def export_verl(items: Sequence[SynthItem], path: Path | str, *, replays: Mapping[str, ReplayedItem],
                catalog: Any = None, overwrite: bool = False) -> Path:
    """Write the verl parquet (module doc); returns its path.

    Raises:
        ExportError: a bad or unreplayed item (named), duplicate ids, or ``path`` exists without ``overwrite``.
    """
    path = Path(path)
    _check(items, path, overwrite, catalog)
    table = pa.Table.from_pylist(verl_rows(items, replays), schema=_VERL_SCHEMA)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    _write_atomic(path, sink.getvalue().to_pybytes())
    return path


def export_sft(items: Sequence[SynthItem], path: Path | str, *, replays: Mapping[str, ReplayedItem],
               catalog: Any = None, overwrite: bool = False) -> Path:
    """Write the SFT JSON Lines file (module doc); returns its path. Raises as ``export_verl``."""
    path = Path(path)
    _check(items, path, overwrite, catalog)
    lines = [_dumps(sft_record(item, _replay_of(item, replays)))
             for item in sorted(items, key=lambda i: i.task.id)]
    _write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))
    return path


# ---------------------------------------------------------------------------------------------- the bundle


def bundle_for(items: Sequence[SynthItem], cassettes_dir: Path | str, name: str) -> BundleRef:
    """One bundle holding every interaction the items need.

    The items' golden answers hold for the bundles they are pinned to (``task.bundle``). When they all share one,
    that bundle is verified (every part's checksum) and returned as it is: ``name`` is not used, nothing is
    copied. When they span several, a new version of ``name`` is written holding every interaction of each of
    them (their union, in the order of the sorted refs; an interaction whose fingerprint an earlier bundle
    already holds is left out, so each request keeps one answer). The union is a superset of what the golden
    calls need, never less; narrowing it to the exact calls would need a recording replay of every item.

    Raises:
        ExportError: no items; recorder errors when a pinned bundle is missing or corrupt.
    """
    if not items:
        raise ExportError("no items: no bundle to assemble")
    store = CassetteStore(Path(cassettes_dir))
    refs = sorted({i.task.bundle for i in items})
    bundles = [store.open(ref, verify=True) for ref in refs]  # verify: a corrupt pinned bundle stops here
    if len(refs) == 1:
        return store.resolve(refs[0])
    seen: set[str] = set()
    merged = []
    for bundle in bundles:
        fresh = [i for i in bundle.interactions() if i.fingerprint not in seen]
        seen |= {i.fingerprint for i in fresh}
        merged += fresh
    return store.write(name, merged, parent=None, note=f"kopa-edge: union of {', '.join(refs)}")
