"""A task being written: a template's golden calls run through the gateway, then its query and answer.

    async def busiest_tollbooth(t: Draft) -> None:          # a template (bench.taskset.registry)
        routes = await t.explore("list_tollbooths", {})       # looking around: recorded, not golden
        route = t.rng.choice(sorted({r["routeName"] for r in routes.records}))
        booths = await t.call_all_pages("list_tollbooths", {"routeName": route}, step=0)
        ...
        t.ask(f"{route} 고속도로에서 ...?")
        t.answer_number(value)

Every call goes through the bench-profile ``ToolRuntime`` exactly as an episode's would: the key
parameter is filled with the session's episode token (the golden arguments keep the ``{platform_api_key}``
placeholder that the system state binds), and paging is asked for explicitly. A call that fails raises
``DraftError``: a golden trajectory must run clean. What the template decides from the results (which
entity, which answer) is plain Python over the records, so replaying the same template over the recorded
bundle with the same seed must rebuild the same task — that is how the task set is validated.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bench.task import ResponseType, RewardBasis
from mcp_gateway.catalog import key_tool_name
from mcp_gateway.catalog.spec import ParamKind, ToolSpec
from mcp_gateway.runtime import ToolResult

__all__ = ["HEADROOM", "Draft", "DraftError", "GoldenCall", "key_name", "number_text"]

# Table 6: max_allowed_calls / golden calls per domain; the task set's means follow the paper's
HEADROOM = {"traffic": 2.21, "finance": 2.24, "education": 2.79, "law": 3.63, "politics": 2.10, "district": 1.55}
MAX_PAGE = 100  # the page size golden calls ask for when they page through a result


class DraftError(RuntimeError):
    """A template could not write its task (a golden call failed, nothing to choose from, ...)."""


def key_name(platform: str) -> str:
    """The runtime-context key the system state binds a platform's episode key token to."""
    return f"{platform}_api_key"


@dataclass
class GoldenCall:
    step: int
    tool: str
    args: dict[str, Any]  # as the task stores them: the key as its placeholder
    compare: tuple[str, ...]


@dataclass
class Draft:
    """One task under construction; ``runtime`` is a bench-profile ToolRuntime and ``session`` its session id."""

    task_id: str
    domain: str
    runtime: Any
    session: str
    rng: random.Random
    variant: int = 0
    template: str = ""
    calls: list[GoldenCall] = field(default_factory=list)
    query: str | None = None
    response_type: ResponseType | None = None
    answers: list[str] = field(default_factory=list)
    platforms: list[str] = field(default_factory=list)
    predefined: dict[str, str] = field(default_factory=dict)
    writes_state: bool = False
    tags: list[str] = field(default_factory=list)
    notes: str | None = None
    _tokens: dict[str, str] = field(default_factory=dict)

    def pick(self, values: Any, *, offset: int = 0) -> Any:
        """Instance ``variant``'s value of a fixed shuffle of ``values`` (distinct across a template's instances).

        Raises:
            DraftError: nothing to pick from.
        """
        pool = sorted(set(values), key=str)
        if not pool:
            raise DraftError(f"{self.task_id}: nothing to choose from")
        random.Random(f"{self.template}:{len(pool)}").shuffle(pool)
        return pool[(self.variant + offset) % len(pool)]

    # ------------------------------------------------------------------------------------- calls

    def spec(self, tool: str) -> ToolSpec:
        return self.runtime.catalog.get(tool)

    async def explore(self, tool: str, args: dict[str, Any] | None = None, *, page: int | None = None,
                      size: int | None = None) -> ToolResult:
        """A call that is not part of the golden trajectory (choosing entities, neighbours): recorded all the same."""
        return await self._run(tool, dict(args or {}), page=page, size=size)

    async def call(self, tool: str, args: dict[str, Any] | None = None, *, step: int,
                   compare: tuple[str, ...] | list[str] | None = None, page: int | None = None,
                   size: int | None = None) -> ToolResult:
        """A golden call at ``step`` (calls sharing a step are parallel). ``compare`` defaults to every
        non-generic argument given; pass () when the values may differ (a free-text report, an expression)."""
        args = dict(args or {})
        self._golden(tool, args, step=step, compare=compare, page=page, size=size)
        return await self._run(tool, args, page=page, size=size)

    def _golden(self, tool: str, args: dict[str, Any], *, step: int, compare: tuple[str, ...] | list[str] | None,
                page: int | None, size: int | None) -> None:
        """What a golden call adds to the task: the call as the task keeps it, its platform, whether it writes."""
        spec = self.spec(tool)
        stored = _with_generics(spec, args, "{" + key_name(spec.platform) + "}", page, size)  # as the task keeps it
        if _param(spec, ParamKind.API_KEY) and spec.platform not in self.platforms:
            self.platforms.append(spec.platform)
        self.calls.append(GoldenCall(step, tool, stored, tuple(args) if compare is None else tuple(compare)))
        self.writes_state = self.writes_state or spec.writes_state

    async def explore_all(self, tool: str, args: dict[str, Any] | None = None, *, size: int = 1000) -> list[dict[str, Any]]:
        """Every record of a result, read page by page while exploring (not golden)."""
        args = dict(args or {})
        first = await self.explore(tool, args, page=1, size=size)
        records, page = list(first.records), 2
        while len(records) < (first.total_count or 0):
            more = await self.explore(tool, args, page=page, size=size)
            if not more.records:
                break
            records += more.records
            page += 1
        return records

    async def evaluate(self, expression: str, *, step: int) -> float:
        """A golden ``evaluate_expression`` call (its wording may vary, so no argument is compared); its value."""
        result = await self.call("evaluate_expression", {"expression": expression}, step=step, compare=())
        return float(result.records[0]["value"])

    async def call_all_pages(self, tool: str, args: dict[str, Any], *, step: int,
                             compare: tuple[str, ...] | list[str] | None = None,
                             size: int | None = None) -> tuple[list[dict[str, Any]], int]:
        """Every record of a result: page 1 at ``step``, the other pages together at ``step + 1``.

        ``size`` defaults to the tool's largest page (the fewest calls: the optimal trajectory), so a
        result pages only when it holds more records than one call can return.
        Returns (records, the next free step). A result that fits one page takes one step.
        """
        spec = self.spec(tool)
        size = size or (spec.endpoint.max_page_size if spec.endpoint is not None else MAX_PAGE)
        first = await self.call(tool, args, step=step, compare=compare, page=1, size=size)
        records = list(first.records)
        pages = math.ceil((first.total_count or 0) / size)
        for page in range(2, pages + 1):
            records += (await self.call(tool, args, step=step + 1, compare=compare, page=page, size=size)).records
        return records, step + (2 if pages > 1 else 1)

    async def _run(self, tool: str, args: dict[str, Any], *, page: int | None, size: int | None) -> ToolResult:
        spec = self.spec(tool)
        token = await self._token(spec.platform) if _param(spec, ParamKind.API_KEY) else None
        result = await self.runtime.call(tool, _with_generics(spec, args, token, page, size), self.session)
        if result.is_error:
            raise DraftError(f"{self.task_id}: {tool}({args}) failed: {result.outcome.value}: {result.message}")
        return result

    async def _token(self, platform: str) -> str:
        if platform not in self._tokens:
            result = await self.runtime.call(key_tool_name(platform), {}, self.session)
            self._tokens[platform] = result.records[0]["api_key"]
        return self._tokens[platform]

    async def retry(self, body: Callable[[int], Awaitable[None]], tries: int = 8) -> None:
        """Run ``body(attempt)`` until the data it picks make a clean task (no tie, no missing value).

        A failed attempt (``DraftError``) is rolled back: its golden calls are dropped (they stay in the
        recording as exploring calls) and the platforms, system state, tags and workspace are restored.
        Deterministic: the recorded data decide every retry.

        Raises:
            DraftError: no attempt succeeded; the message lists why each failed.
        """
        errors = []
        for attempt in range(tries):
            workspace = self.runtime.session(self.session).workspace
            saved = (len(self.calls), list(self.platforms), dict(self.predefined), list(self.tags),
                     self.writes_state, copy.deepcopy(workspace.snapshot()))
            try:
                await body(attempt)
                return
            except DraftError as exc:
                errors.append(str(exc))
                mark, self.platforms, self.predefined, self.tags, self.writes_state, state = saved
                del self.calls[mark:]
                workspace.watchlists, workspace.reports, workspace.notes = (
                    state["watchlists"], state["reports"], state["notes"])
        raise DraftError(f"{self.task_id}: no clean instance in {tries} attempts: {errors}")

    # ------------------------------------------------------------------------------- the question

    def ask(self, query: str) -> None:
        self.query = query

    def today(self, date: str) -> None:
        """A fixed ``current_date`` in the system state (YYYY-MM-DD), as the paper's Figure 5."""
        self.predefined["current_date"] = date

    def answer_number(self, value: float | int | str, *also: str) -> None:
        self.response_type = ResponseType.NUMBER
        self.answers = [number_text(value), *also]

    def answer_string(self, value: str, *also: str) -> None:
        self.response_type = ResponseType.STRING
        self.answers = [str(value), *(a for a in also if a != value)]

    def answer_judge(self, reference: str) -> None:
        self.response_type = ResponseType.JUDGE
        self.answers = [reference]

    def state_only(self) -> None:
        """The task is scored on the final workspace state alone (no RESPONSE)."""
        self.response_type = None
        self.answers = []

    def state_hash(self) -> str:
        return self.runtime.session(self.session).workspace.state_hash()

    def reward_basis(self) -> list[str]:
        basis = [RewardBasis.ACTION.value]
        if self.response_type is not None:
            basis.append(RewardBasis.RESPONSE.value)
        if self.writes_state:
            basis.append(RewardBasis.ENVIRONMENT.value)
        return basis


def _param(spec: ToolSpec, kind: ParamKind) -> str | None:
    return next((p.name for p in spec.params if p.kind is kind), None)


def _with_generics(spec: ToolSpec, args: dict[str, Any], key: str | None, page: int | None,
                   size: int | None) -> dict[str, Any]:
    """``args`` plus the generic parameters: the key (a token, or the task's placeholder), page and size."""
    out = dict(args)
    for kind, value in ((ParamKind.API_KEY, key), (ParamKind.PAGE_NO, page), (ParamKind.PAGE_SIZE, size)):
        name = _param(spec, kind)
        if name is not None and value is not None:
            out[name] = value
    return out


def number_text(value: float | int | str) -> str:
    """A number as an accepted answer: integers without a decimal point, others to 2 decimals (Table 26)."""
    if isinstance(value, str):
        return value
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}"
