"""Write the task set: run every template through a recording gateway, commit the bundle, pin the tasks to it.

    kopa bench build-tasks [--out bench/tasks/kopa-bench.jsonl] [--cassettes cassettes] [--bundle kopa-default]

1. A record-mode gateway over the sandbox world (default seed and scale) runs each template instance in
   a fresh bench-profile session; every call it makes (golden or exploring) is recorded.
2. The bundle is committed; its version pins every task (``bundle: kopa-default@<version>``).
3. Each draft becomes a ``Task``: platforms, system state (the key actions, ``current_date``), available
   tools (the golden ones plus same-platform distractors up to Table 6's per-domain count), reward basis,
   answers or the golden workspace hash, and ``max_allowed_calls`` from Table 6's headroom.

``rebuild_drafts`` runs the same templates over a replay gateway: the validation test compares what it
writes with the task file, so every annotated answer is re-derived from the recorded data.

Task-set versions: the default file is the current version (``TASK_SET_VERSION``), written by these templates.
An earlier version is kept as ``bench/tasks/kopa-bench-<version>.jsonl`` (``TASK_SETS``), still pinned to the
bundle version it was recorded into; bundle versions are content-addressed folders that a new recording never
touches, so an earlier set keeps replaying exactly as it did. The build refuses to write over an earlier set.
"""

from __future__ import annotations

import functools
import importlib
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.task import Task, parse_task
from mcp_gateway.catalog import key_tool_name
from mcp_gateway.gateway import DEFAULT_HOME, Gateway, open_gateway
from recorder import Capture
from sandbox import InProcessSandbox
from sandbox.memo import REPEAT_CALLERS_MEMO_BYTES

from .draft import HEADROOM, Draft, DraftError, key_name
from .registry import TEMPLATES, Template

__all__ = ["AVAILABLE_TOOLS", "DEFAULT_BUNDLE", "DEFAULT_TASKS", "DOMAIN_PREFIX", "TASK_SETS", "TASK_SET_VERSION",
           "build_task_set", "load_templates", "open_recording_gateway", "open_sandbox_gateway", "rebuild_drafts",
           "to_task", "write_drafts"]

DEFAULT_BUNDLE = "kopa-default"
REPO = Path(__file__).resolve().parents[2]
DEFAULT_TASKS = REPO / "bench" / "tasks" / "kopa-bench.jsonl"
DEFAULT_CASSETTES = REPO / "cassettes"
# v1: 145 tasks, longest 9 calls, pinned to kopa-default@2a28be5538ec8c9ae277 (written by the templates as of
# commit fa06a95). v2: the long tail of Table 6 (longest 13 calls; traffic and politics chains lengthened).
# 2026-12-05, both versions: the files still list the golden tools first, but an episode shows them in a seeded
# shuffle (bench.tool_order); a model's figures from before that change are not comparable with later ones.
TASK_SET_VERSION = "v2"
TASK_SETS = {"v1": REPO / "bench" / "tasks" / "kopa-bench-v1.jsonl", TASK_SET_VERSION: DEFAULT_TASKS}
DOMAIN_PREFIX = {"traffic": "trf", "finance": "fin", "education": "edu", "law": "law", "politics": "pol",
                 "district": "dst"}
AVAILABLE_TOOLS = {"traffic": 7.5, "finance": 6.6, "education": 7.7, "law": 6.7, "politics": 8.7, "district": 8.0}


def load_templates() -> list[Template]:
    """Import every domain's templates (registering them) and return them in domain, then file order."""
    for domain in DOMAIN_PREFIX:
        importlib.import_module(f"bench.taskset.templates.{domain}")
    order = list(DOMAIN_PREFIX)
    return sorted(TEMPLATES, key=lambda t: order.index(t.domain))


def task_ids(templates: Sequence[Template]) -> list[tuple[Template, int, str]]:
    """(template, instance, task id) for every task, numbered per domain in template order."""
    out, counters = [], dict.fromkeys(DOMAIN_PREFIX, 0)
    for tpl in templates:
        for i in range(tpl.count):
            counters[tpl.domain] += 1
            out.append((tpl, i, f"{DOMAIN_PREFIX[tpl.domain]}-{counters[tpl.domain]:03d}"))
    return out


async def draft_one(runtime: Any, tpl: Template, variant: int, task_id: str) -> Draft:
    session = f"taskset:{task_id}"
    runtime.reset_session(session)
    draft = Draft(task_id=task_id, domain=tpl.domain, runtime=runtime, session=session,
                  rng=random.Random(f"{tpl.name}:{variant}"), variant=variant, template=tpl.name)
    await tpl.fn(draft)
    if draft.query is None or not draft.calls:
        raise DraftError(f"{task_id} ({tpl.name}): the template asked no question or made no golden call")
    return draft


async def write_drafts(runtime: Any, templates: Sequence[Template], *, only: set[str] | None = None) -> list[Draft]:
    drafts = []
    for tpl, variant, task_id in task_ids(templates):
        if only is None or task_id in only or tpl.name in only:
            drafts.append(await draft_one(runtime, tpl, variant, task_id))
    return drafts


def to_task(draft: Draft, bundle: str, catalog: Any) -> dict[str, Any]:
    """The task file's record for ``draft`` (validated as a ``Task``)."""
    golden = [{"step": c.step, "tool": c.tool, "args": c.args, "value_compare_args": list(c.compare)}
              for c in sorted(draft.calls, key=lambda c: c.step)]
    used = list(dict.fromkeys(c.tool for c in draft.calls))
    actions = [{"name": key_name(p), "tool": key_tool_name(p), "output_field": "api_key"} for p in draft.platforms]
    n_calls = len(golden)
    pages = any(_pages(c.args, catalog.get(c.tool)) for c in draft.calls)
    task: dict[str, Any] = {
        "id": draft.task_id, "query": draft.query, "domain": draft.domain,
        "platforms": draft.platforms or ["internal"],
        "system_state": {"predefined": dict(draft.predefined), "actions": actions},
        "available_tools": _available_tools(draft, used, catalog),
        "golden_actions": golden,
        "reward_basis": draft.reward_basis(),
        "max_allowed_calls": max(n_calls + 1, round(n_calls * HEADROOM[draft.domain])),
        "bundle": bundle,
        "pages": pages,
        "tags": sorted(set(draft.tags) | _shape_tags(golden, pages)),
        "notes": f"template {draft.template}, instance {draft.variant}" + (f"; {draft.notes}" if draft.notes else ""),
    }
    if draft.response_type is not None:
        task["response_type"] = draft.response_type.value
        task["accepted_answers"] = draft.answers
    if draft.writes_state:
        task["golden_state_hash"] = draft.state_hash()
    parse_task(task)  # a draft that does not make a valid task fails here, naming the field
    return task


def _shape_tags(golden: list[dict[str, Any]], pages: bool) -> set[str]:
    """Tags read off the golden trajectory: paging, parallel calls, chained steps."""
    steps = [g["step"] for g in golden]
    tags = {"paging"} if pages else set()
    if len(steps) != len(set(steps)):
        tags.add("parallel")
    if len(set(steps)) > 1:
        tags.add("chain")
    return tags


def _pages(args: dict[str, Any], spec: Any) -> bool:
    page_param = next((p.name for p in spec.params if p.kind.value == "page_no"), None)
    page = args.get(page_param) if page_param else None
    return isinstance(page, int) and page > 1


@functools.lru_cache(maxsize=4)
def _names_by_group(catalog: Any) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The catalog's tool names by platform and by domain, sorted (EDGE builds thousands of tasks on one catalog)."""
    by_platform: dict[str, list[str]] = {}
    by_domain: dict[str, list[str]] = {}
    for name in sorted(catalog.names()):
        spec = catalog.get(name)
        by_platform.setdefault(spec.platform, []).append(name)
        by_domain.setdefault(spec.domain, []).append(name)
    return by_platform, by_domain


def _available_tools(draft: Draft, used: list[str], catalog: Any) -> list[str]:
    """The golden tools, then distractors from the same platforms (then domain) up to the domain's mean count."""
    target = AVAILABLE_TOOLS[draft.domain]
    rng = random.Random(f"tools:{draft.task_id}")
    want = max(len(used) + 1, int(target) + (1 if rng.random() < target - int(target) else 0))
    tools = list(used)
    platforms = {catalog.get(t).platform for t in used} - {"internal"}
    by_platform, by_domain = _names_by_group(catalog)
    key_tools = _key_tools(catalog)  # never offered: the harness runs them (system state)
    same_platform = sorted(n for p in platforms for n in by_platform.get(p, ()))
    same_domain = list(by_domain.get(draft.domain, ()))
    for pool in (same_platform, same_domain):
        if len(tools) >= want:  # nothing more to draw; the rng is not read after this, so the tools are the same
            break
        taken = set(tools)
        pool = [n for n in pool if n not in taken and n not in key_tools]
        rng.shuffle(pool)
        tools += pool[:want - len(tools)]
    return tools


@functools.lru_cache(maxsize=4)
def _key_tools(catalog: Any) -> frozenset[str]:
    return frozenset(key_tool_name(catalog.get(name).platform) for name in catalog.names())


# body bytes of the sandbox's answers kept for repeated requests, per gateway: EDGE's synthesis makes the same call
# for many items (every recording gateway and every worker's exploring one); `sandbox.memo`
SANDBOX_MEMO_BYTES = REPEAT_CALLERS_MEMO_BYTES


def open_recording_gateway(home: Path | None, cassettes: Path, bundle: str, *, scale: float = 1.0,
                           stamp: str | None = None) -> Gateway:
    """A bench-profile gateway recording the in-process sandbox into a new version of ``bundle`` (``stamp``: a
    fixed recording time, so the same calls give the same version)."""
    home = home or DEFAULT_HOME
    return open_gateway(upstream="sandbox", sandbox=InProcessSandbox(home, scale=scale, memo_bytes=SANDBOX_MEMO_BYTES),
                        profile="bench", mode="record", home=home, cassettes=cassettes, bundle=bundle, inherit=False,
                        record_stamp=stamp)


def open_sandbox_gateway(home: Path | None, *, scale: float = 1.0, record_into: Capture | None = None) -> Gateway:
    """A bench-profile gateway over the in-process sandbox that records nothing (where EDGE's synthesis explores);
    with ``record_into``, one that records as ``open_recording_gateway``'s does, into that capture (a synthesis
    worker's, whose exchanges the recording gateway adds)."""
    home = home or DEFAULT_HOME
    return open_gateway(upstream="sandbox", sandbox=InProcessSandbox(home, scale=scale, memo_bytes=SANDBOX_MEMO_BYTES),
                        profile="bench", mode="live" if record_into is None else "record", home=home,
                        record_into=record_into)


async def build_task_set(*, out: Path = DEFAULT_TASKS, cassettes: Path = DEFAULT_CASSETTES,
                         bundle: str = DEFAULT_BUNDLE, home: Path | None = None, scale: float = 1.0) -> list[Task]:
    """Record every template's calls into a new version of ``bundle`` and write the pinned task file.

    Raises:
        ValueError: ``out`` is an earlier task-set version's file (it stays pinned to its own bundle version).
    """
    frozen = {path.resolve(): version for version, path in TASK_SETS.items() if version != TASK_SET_VERSION}
    if Path(out).resolve() in frozen:
        raise ValueError(f"{out} is task set {frozen[Path(out).resolve()]}, kept as it was recorded; write the "
                         f"current version ({TASK_SET_VERSION}) to {DEFAULT_TASKS} or to a new file")
    templates = load_templates()
    gateway = open_recording_gateway(home, cassettes, bundle, scale=scale)
    try:
        drafts = await write_drafts(gateway.runtime, templates)
        ref = gateway.commit(compress=True)  # shipped in the repository: bodies zstd-compressed
    finally:
        await gateway.aclose()
    if ref is None:
        raise DraftError("nothing was recorded")
    pinned = f"{ref.name}@{ref.version}"
    records = [to_task(d, pinned, gateway.catalog) for d in drafts]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    tmp.replace(out)
    return [parse_task(r) for r in records]


async def rebuild_drafts(gateway: Gateway, *, only: set[str] | None = None) -> list[Draft]:
    """The drafts the templates write over ``gateway`` (a replay of the task set's bundle)."""
    return await write_drafts(gateway.runtime, load_templates(), only=only)
