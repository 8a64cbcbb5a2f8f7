"""Answer recipes: how an item's answer follows from its golden calls' records, as JSON data.

    recipe = {"op": "count", "calls": [1, 2]}                        # records the calls returned together
    recompute(recipe, records_by_call)  -> "37"                      # records_by_call[i]: golden call i's records
    response_type(recipe)               -> ResponseType.NUMBER

Recipes (``calls`` index the task's golden actions, in their stored order):

* ``count``: how many records ``calls`` returned together (all pages of one result, or FAN branches summed).
* ``field``: the one value ``field`` takes over the records of ``calls`` (``type`` string or number).
* ``compare``: ``groups`` (each a ``label`` and its ``calls``) measured by record count; ``pick`` ``max`` or
  ``min`` answers the label, ``diff`` the largest count minus the smallest. A tie has no answer.
* ``cond``: ``test`` (the record count of its ``calls`` compared with ``threshold`` by ``cmp`` ge/le) decides
  between ``then`` and ``else``; ``taken`` says which branch ran, and a test that now goes the other way
  is an error: the golden trajectory would be the wrong branch.

Numbers are written as ``Draft.answer_number`` writes them, so a recomputed answer equals the stored one.

``arithmetic`` is the calculation an answer takes when it combines counts (branches summed, a largest minus a
smallest count): the golden trajectory closes with an ``evaluate_expression`` call of it, as KOPA-Bench's own
trajectories do (paper §H.2: the evaluator is the one tool training shares with held-out platforms).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.task import ResponseType
from bench.taskset.draft import number_text  # the task set's own number format: one definition of it

from .junctions import as_number, distinct_values

__all__ = ["RecipeError", "arithmetic", "recompute", "recipe_calls", "response_type"]

Records = Sequence[Mapping[str, Any]]


class RecipeError(ValueError):
    """The recipe does not yield one answer from these records (no value, a tie, the other branch)."""


def response_type(recipe: Mapping[str, Any]) -> ResponseType:
    op = recipe["op"]
    if op == "count" or (op == "compare" and recipe["pick"] == "diff"):
        return ResponseType.NUMBER
    if op == "field":
        return ResponseType.NUMBER if recipe.get("type") == "number" else ResponseType.STRING
    if op == "compare":
        return ResponseType.STRING
    if op == "cond":
        return response_type(recipe[recipe["taken"]])
    raise RecipeError(f"unknown recipe op {op!r}")


def recipe_calls(recipe: Mapping[str, Any]) -> list[int]:
    """Every golden call index the recipe reads."""
    op = recipe["op"]
    if op in ("count", "field"):
        return list(recipe["calls"])
    if op == "compare":
        return [i for g in recipe["groups"] for i in g["calls"]]
    if op == "cond":
        return [*recipe["test"]["calls"], *recipe_calls(recipe[recipe["taken"]])]
    raise RecipeError(f"unknown recipe op {op!r}")


def _gather(records_by_call: Sequence[Records], calls: Sequence[int]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for i in calls:
        if not 0 <= i < len(records_by_call):
            raise RecipeError(f"the recipe reads golden call {i}, but there are {len(records_by_call)}")
        out += records_by_call[i]
    return out


def recompute(recipe: Mapping[str, Any], records_by_call: Sequence[Records]) -> str:
    """The answer text the recipe gives over these records.

    Raises:
        RecipeError: no single answer (a field with several values or none, a tie, a flipped condition).
    """
    op = recipe["op"]
    if op == "count":
        return number_text(len(_gather(records_by_call, recipe["calls"])))
    if op == "field":
        values = distinct_values(_gather(records_by_call, recipe["calls"]), recipe["field"])
        if len(values) != 1:
            raise RecipeError(f"field {recipe['field']!r} takes {len(values)} values, not one: {values[:5]}")
        if recipe.get("type") == "number":
            number = as_number(values[0])
            if number is None:
                raise RecipeError(f"field {recipe['field']!r} holds {values[0]!r}, not a number")
            return number_text(number)
        return values[0]
    if op == "compare":
        counts = [(g["label"], len(_gather(records_by_call, g["calls"]))) for g in recipe["groups"]]
        if recipe["pick"] == "diff":
            return number_text(max(c for _, c in counts) - min(c for _, c in counts))
        best = (max if recipe["pick"] == "max" else min)(c for _, c in counts)
        winners = [label for label, c in counts if c == best]
        if len(winners) != 1:
            raise RecipeError(f"a tie at {best} records between {winners}")
        return winners[0]
    if op == "cond":
        test = recipe["test"]
        n = len(_gather(records_by_call, test["calls"]))
        holds = n >= test["threshold"] if test["cmp"] == "ge" else n <= test["threshold"]
        if ("then" if holds else "else") != recipe["taken"]:
            raise RecipeError(f"the condition ({n} records {test['cmp']} {test['threshold']}) now takes the other "
                              f"branch than the recorded {recipe['taken']!r}")
        return recompute(recipe[recipe["taken"]], records_by_call)
    raise RecipeError(f"unknown recipe op {op!r}")


def arithmetic(recipe: Mapping[str, Any], records_by_call: Sequence[Records]) -> str | None:
    """The expression whose value is the answer, when the answer adds or subtracts record counts; else None.

    ``records_by_call`` as for ``recompute``, with one result's records at its first page's index (the other pages
    empty): a sum adds the non-empty results (``"8 + 5"``), a difference is the largest minus the smallest group
    (``"31 - 12"``), a condition takes its branch's. A count of one result, a field and a label need no calculation.
    """
    op = recipe["op"]
    if op == "count":
        terms = [len(records_by_call[i]) for i in recipe["calls"] if records_by_call[i]]
        return " + ".join(map(str, terms)) if len(terms) > 1 else None
    if op == "compare" and recipe["pick"] == "diff":
        counts = [len(_gather(records_by_call, g["calls"])) for g in recipe["groups"]]
        return f"{max(counts)} - {min(counts)}"
    if op == "cond":
        return arithmetic(recipe[recipe["taken"]], records_by_call)
    return None


def remap(recipe: Mapping[str, Any], order: Mapping[int, int]) -> dict[str, Any]:
    """The recipe with draft call indices replaced by golden indices (``order``: draft index → golden index)."""
    def walk(value: Any, key: str | None = None) -> Any:
        if key == "calls":
            return [order[i] for i in value]
        if isinstance(value, Mapping):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value
    return walk(recipe)
