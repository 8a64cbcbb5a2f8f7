"""Filter stage 1, execution validity: every golden call replays from the item's bundle with a semantic
success, and the answer recomputes from the replayed records to the stored one.

    gateway = open_gateway(upstream="replay", profile="bench", home=home, cassettes=cassettes, bundle=ref)
    kept, rejected = await check_validity(items, gateway)      # rejected: Rejection(stage="validity", ...)

Every identifier a golden call takes must be in the question or in an earlier step's replayed records
(``grounding``): an agent cannot reproduce a trajectory that starts from a code nobody gave it.

The replay is strict (a request the bundle lacks is a replay miss), and the calls are made as an episode
makes them: in a fresh bench session, with each platform's episode key from the system state's key action
in place of the ``{<platform>_api_key}`` placeholder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.agents.base import resolve_placeholders
from mcp_gateway.runtime.result import Outcome

from .answer import RecipeError, recompute
from .grounding import UNGROUNDED, ungrounded
from .item import Rejection, SynthItem

__all__ = ["check_validity", "replay_records", "validity_problem"]


async def replay_records(item: SynthItem, gateway: Any) -> tuple[list[list[dict[str, Any]]], str | None]:
    """(records of each golden call, in golden order; the first failure, or None when every call succeeded)."""
    runtime = gateway.runtime
    session = f"edge-validity:{item.task.id}"
    runtime.reset_session(session)
    context: dict[str, Any] = dict(item.task.system_state.predefined)
    for action in item.task.system_state.actions:
        result = await runtime.call(action.tool, dict(action.args), session)
        if result.is_error or not result.records:
            return [], f"key action {action.tool} failed: {result.outcome.value}"
        context[action.name] = result.records[0][action.output_field] if action.output_field else result.records[0]
    records: list[list[dict[str, Any]]] = []
    for i, action in enumerate(item.task.golden_actions):
        result = await runtime.call(action.tool, resolve_placeholders(dict(action.args), context), session)
        if result.outcome is not Outcome.SEMANTIC_SUCCESS:
            return records, (f"golden call {i} ({action.tool}, step {action.step}) replayed as "
                             f"{result.outcome.value}: {result.message}")
        records.append(list(result.records))
    return records, None


async def validity_problem(item: SynthItem, gateway: Any) -> str | None:
    """Why ``item`` fails stage 1, or None when it passes."""
    records, failure = await replay_records(item, gateway)
    if failure is not None:
        return failure
    counts = tuple(len(r) for r in records)
    if counts != item.call_records:
        return f"the golden calls replayed {list(counts)} records, the item recorded {list(item.call_records)}"
    try:
        answer = recompute(item.recipe, records)
    except (RecipeError, KeyError, TypeError) as exc:
        return f"the answer does not recompute from the replayed records: {exc}"
    stored = item.task.accepted_answers[0] if item.task.accepted_answers else None
    if answer != stored:
        return f"the replayed records give the answer {answer!r}, the item says {stored!r}"
    if missing := ungrounded(item, records, gateway.catalog):
        return f"{UNGROUNDED} ({', '.join(missing)})"
    return None


async def check_validity(items: Sequence[SynthItem], gateway: Any) -> tuple[list[SynthItem], list[Rejection]]:
    """(items that pass, a rejection with its reason for each that does not), in the order given."""
    kept, rejected = [], []
    for item in items:
        problem = await validity_problem(item, gateway)
        if problem is None:
            kept.append(item)
        else:
            rejected.append(Rejection(item_id=item.task.id, stage="validity", reason=problem))
    return kept, rejected
