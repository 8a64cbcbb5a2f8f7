"""Stage 2 of the filter: answerability. The query must not give away what the agent has to find (Appendix F).

    rejection = check_answerability(item)            # None, or Rejection(stage="answerability", reason=...)

Three rules, each explainable from the item alone:

* **no intermediate value** — a value that crosses a junction is what the chain has to discover, so the query
  must not hold it. Intermediate values are the arguments of calls after step 0 that the user did not give:
  not among the step-0 arguments nor the predefined system state, and either the parameter a junction fills
  (``item.junctions``: the target tool's ``param``) or code-like (an id or a code such as an 8-digit DART
  corp code: 4+ characters of letters, digits, '-', '_' with a digit; years are allowed, users say "2025년").
  Generic parameters (API key, paging, output format) are the runtime's and are skipped, as are
  ``{placeholder}`` values. A value of two characters or fewer is never flagged (too many innocent matches).
* **answer not in the query** — no accepted answer occurs in the query (spaces and thousands separators
  ignored; numbers only at number boundaries, so "12" does not match "2012"), unless it is one of the options
  the query offers to compare: golden calls of one tool pass two or more values of one parameter, all named
  in the query, and the answer is one of them ("세원은로직스, 동양시스템 중 … 더 낮은 쪽"), or a comparison's branch
  labels (its recipe's) are all named in the query ("영업상태 영업/정상, 폐업 각각의 …", the calls passing 01 and 03).
* **not solvable by the first call** — a trajectory of a single call is answered by that call. When the
  recipe names the golden calls the answer reads (``recipe["answer_calls"]``: indexes in golden order) and that
  is the first call alone in a multi-call trajectory, the later calls are decorative (Appendix F, Stage 2).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from bench.task import Task
from edge.synth.item import Rejection, SynthItem

__all__ = ["check_answerability", "intermediate_values", "leaked_answer"]

STAGE = "answerability"
_CODE_LIKE = re.compile(r"^(?=.*\d)[A-Za-z0-9_-]{4,}$")  # as bench.taskset.audit: has a digit, 4+ code characters
_YEAR = re.compile(r"^(19|20)\d\d$")
_PLACEHOLDER = re.compile(r"^\{[A-Za-z_][A-Za-z0-9_]*\}$")
_NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?$")
_MIN_CHARS = 3


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return str(value).strip()


def _generic_params(catalog: Any, tool: str) -> set[str]:
    if catalog is None or tool not in catalog:
        return set()
    return {p.name for p in catalog.get(tool).params if p.is_generic}


def intermediate_values(item: SynthItem, catalog: Any = None) -> Iterator[tuple[str, str, str]]:
    """(tool, parameter, value text) of every value a call after step 0 takes from earlier results."""
    task = item.task
    given = {_text(v) for a in task.golden_actions if a.step == 0 for v in a.args.values()}
    given |= {_text(v) for v in task.system_state.predefined.values()}
    fed = {(j.target, j.param) for j in item.junctions}
    for action in task.golden_actions:
        if action.step == 0:
            continue
        generic = _generic_params(catalog, action.tool)
        for name, value in action.args.items():
            text = _text(value)
            if text is None or name in generic or text in given or _PLACEHOLDER.match(text):
                continue
            code_like = bool(_CODE_LIKE.match(text)) and not _YEAR.match(text)
            if (action.tool, name) in fed or code_like:
                yield action.tool, name, text


def _occurs(value: str, query: str, min_chars: int = _MIN_CHARS) -> bool:
    """``value`` in ``query``, spaces ignored; a number only where no digit continues it on either side."""
    squeezed = re.sub(r"\s+", "", value)
    squeezed_query = re.sub(r"\s+", "", query)
    if _NUMBER.match(squeezed.replace(",", "")):
        squeezed = squeezed.replace(",", "")
        if len(squeezed.lstrip("+-")) < min_chars:
            return False
        plain = squeezed_query.replace(",", "")  # "1,234" in the query is 1234
        return re.search(rf"(?<![\d.]){re.escape(squeezed)}(?!\d|\.\d)", plain) is not None
    return len(squeezed) >= min_chars and squeezed.casefold() in squeezed_query.casefold()


def leaked_answer(task: Task, labels: Iterable[str] = ()) -> str | None:
    """The first accepted answer that the query itself holds, or None.

    Answers of two characters count ("서울", "42"); a one-character one ("예", "3") matches by chance too often.
    A judge task's accepted answer is a reference text: leaked only when the query quotes it whole. ``labels``:
    a comparison's branch labels (its recipe's), options too when the query names every one of them (a code said
    in words, "영업/정상, 폐업 중", whose calls pass the codes).
    """
    labels = [str(label) for label in labels]
    options = _options(task) | (set(labels) if len(labels) >= 2 and all(
        _occurs(label, task.query, min_chars=2) for label in labels) else set())
    for answer in task.accepted_answers:
        if _occurs(answer.strip(), task.query, min_chars=2) and answer.strip() not in options:
            return answer
    return None


def _options(task: Task) -> set[str]:
    """Values the query offers as choices: a (tool, parameter) that golden calls pass two or more different
    values of, all named in the query ("A, B 중 어느 쪽"). A comparison's answer is one of them, not a leak."""
    by_param: dict[tuple[str, str], set[str]] = {}
    for action in task.golden_actions:
        for name, value in action.args.items():
            text = _text(value)
            if text is not None and not _PLACEHOLDER.match(text):
                by_param.setdefault((action.tool, name), set()).add(text)
    options: set[str] = set()
    for values in by_param.values():
        if len(values) >= 2 and all(_occurs(v, task.query, min_chars=2) for v in values):
            options |= values
    return options


def check_answerability(item: SynthItem, catalog: Any = None) -> Rejection | None:
    """None when the item passes stage 2, else the first broken rule, naming the leaked value.

    ``catalog``: an ``mcp_gateway.catalog.Catalog``; with it, generic parameters (API key, paging) are skipped.
    """
    task = item.task

    def reject(reason: str) -> Rejection:
        return Rejection(item_id=task.id, stage=STAGE, reason=reason)

    for tool, param, value in intermediate_values(item, catalog):
        if _occurs(value, task.query):
            return reject(f"the query holds the intermediate value {value!r} ({tool}.{param}), "
                          "which the chain has to discover")
    if (answer := leaked_answer(task, [g.get("label", "") for g in item.recipe.get("groups", ())])) is not None:
        return reject(f"the query holds the answer {answer!r}: it is derivable from the query alone")
    if len(task.golden_actions) == 1:
        return reject(f"a single call ({task.golden_actions[0].tool}) answers it: solvable by its first call only")
    answer_calls = item.recipe.get("answer_calls")
    if isinstance(answer_calls, (list, tuple)) and list(answer_calls) == [0]:
        return reject(f"the answer reads only the first call ({task.golden_actions[0].tool}); the later calls "
                      "do not constrain it: solvable by its first call only")
    return None
