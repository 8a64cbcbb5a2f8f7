"""Can an agent that reads only the question reproduce every input of the golden trajectory?

    ungrounded(item, records, catalog)   # ['get_law_text.ID=004307']: golden call inputs nobody told the agent

An identifier argument of a golden call (``user_terms.opaque``: a district code, a bill id, a law id) must be
stated in the question or come out of a record that a golden call at an earlier step returned. Anything else the
agent would have to make up: the question named the thing ("시군명이 성남시인") but no call turned that name into
its code. ``lookups`` adds such calls during synthesis; this check measures what is left (``records``: each golden
call's records, as ``validity.replay_records`` gives them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .item import SynthItem
from .user_terms import opaque

__all__ = ["UNGROUNDED", "ungrounded"]

UNGROUNDED = "a golden call takes an identifier neither the question nor an earlier call gives"


def _values(records: Sequence[dict[str, Any]]) -> set[str]:
    return {str(v).strip() for r in records for v in r.values() if v not in (None, "")}


def ungrounded(item: SynthItem, records: Sequence[Sequence[dict[str, Any]]], catalog: Any) -> list[str]:
    """'tool.param=value' for each identifier input neither the question nor an earlier step's records give."""
    query, actions = item.task.query, item.task.golden_actions
    found: list[str] = []
    returned: dict[int, set[str]] = {}  # each call's values, read once however many later calls look back
    for action in actions:
        spec = catalog.get(action.tool)
        earlier: set[str] | None = None
        for name, value in sorted(action.args.items()):
            text = str(value).strip()
            p = spec.param(name)
            if p is None or p.is_generic or not text or text.startswith("{") or text in query or not opaque(p, text):
                continue
            if earlier is None:
                earlier = set()
                for j, before in enumerate(actions[:len(records)]):
                    if before.step < action.step:
                        if j not in returned:
                            returned[j] = _values(records[j])
                        earlier |= returned[j]
            if text not in earlier:
                found.append(f"{action.tool}.{name}={text}")
    return found
