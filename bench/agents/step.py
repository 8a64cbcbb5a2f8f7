"""One agent step, the only code that drives tool calls: generate → read the calls → run them → append the results.

    step = AgentStep(limits, call)                                # limits: bench.limits.EpisodeLimits
    answer = await step.run(messages, tools, generate)            # extends ``messages`` in place, turn by turn

    async def generate(messages, tools) -> dict | str | AssistantTurn | Generation: ...

The bench's ``openai`` agent (``generate`` = one chat request), the agent endpoint (the same agent, its calls going
to the gateway or to a benchmark episode) and training (``train.episode``: ``generate`` = the policy being trained)
all play their turns here, so a model's reply means the same everywhere and is answered the same way.

One turn:

1. **Budget.** Past ``max_prompt_tokens`` (the conversation's approximate tokens, or the exact ones of a
   ``TokenTrace``) the episode stops: ``BudgetSpent``.
2. **Generate.** ``generate(messages, tools)``, the tools as ``shown_tools`` shapes them (descriptions cut to
   ``max_description_chars``), gives an OpenAI assistant message (chat endpoints), the generated text
   (scripts, policies), an ``AssistantTurn`` already read, or a ``Generation`` (text with its token ids: training).
3. **Read.** Structured ``tool_calls``, else the calls written in the text (qwen3_coder XML or hermes JSON,
   ``models.toolcalls`` with its one value-typing rule); the calls leave the text. A call that cannot be read is an
   ``invalid_tool_call`` call that is not run: its tool message tells the model what was wrong.
4. **Append** the assistant message in the OpenAI wire form (arguments as JSON text, as written). A reply without
   calls is the final answer (``None`` when it has no text; ``retry_empty_without_tools`` asks once more without
   tools first).
5. **Run** the calls of the turn at once (``asyncio.gather``), at most ``max_parallel_calls`` of them and within the
   episode's ``max_calls``; the others are answered "not run" and are not calls of the episode. Each call has a
   backstop of ``tool_timeout_s`` + 5 s (the harness's own limit fires first).
6. **Append** one tool message per call, in the order issued: the tool result as JSON, capped at
   ``max_tool_tokens`` approximate tokens (``cap_tool_response``), with ``arguments_error`` when the arguments were
   not one JSON object.

After ``max_turns`` turns without an answer: ``TurnLimitReached``. With ``max_repeated_turns``, the episode stops
earlier (``RepeatedTurns``) when that many turns in a row made the same calls and got the same results: the model
sees nothing new, and a greedy one repeats them to the turn limit (OpenHands' stuck detector stops the same way).

**Tokens (training).** With ``tokens=TokenTrace(codec)`` the step also keeps the episode as the model's tokens: the
first prompt, then each generation (mask 1) and the messages appended after it (mask 0), through the engine's
``TokenCodec`` (verl's Continuous Token builder, or a tokenizer's chat template). ``generate`` then finds the prompt
ids in ``trace.ids``. When the trace reaches ``max_response_tokens`` the episode ends there, as verl's
``ToolAgentLoop`` does: a generation that fills it is the final message (its calls not run); tool messages that
overflow it raise ``BudgetSpent``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from bench.limits import EpisodeLimits
from mcp_gateway.runtime import Outcome, ToolResult
from models.errors import ErrorKind
from models.toolcalls import INVALID_CALL, AssistantTurn, ToolCallParser, read_message, read_text

__all__ = ["BYTES_PER_TOKEN", "GENERIC_PARAMS", "SCHEMA_PROSE", "AgentError", "AgentStep", "BudgetSpent", "Generate",
           "Generation", "RepeatedTurns", "TokenCodec", "TokenTrace", "ToolCallRequest", "TurnLimitReached",
           "approx_tokens", "assistant_message", "bare_generic", "cap_tool_response", "read_calls", "read_generation",
           "short_text", "short_tool", "shown_tools", "tool_message"]

BYTES_PER_TOKEN = 3
SHORT_VALUE_CHARS = 24  # a text value of a record too large to show whole is cut here (an address keeps its district)
TOOL_TIMEOUT_GRACE_S = 5.0  # the step's backstop fires after the harness's own tool timeout, never before

CallTool = Callable[[str, Any], Awaitable[ToolResult]]


class AgentError(RuntimeError):
    """A model-backed agent stopped without an answer; the message says why, ``kind`` how (the episode's record
    keeps it), ``status`` the endpoint's HTTP code if one answered."""

    kind: ErrorKind | None = None

    def __init__(self, message: str, *, kind: ErrorKind | None = None, status: int | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.status = status


class TurnLimitReached(AgentError):
    """The model was still calling tools when the turn limit came."""

    kind = ErrorKind.TURN_LIMIT


class RepeatedTurns(TurnLimitReached):
    """The model made the same calls, with the same results, ``max_repeated_turns`` turns in a row: it is in a loop,
    and the episode ends there rather than at the turn limit."""


class BudgetSpent(AgentError):
    """The episode's prompt or response budget is spent; it ends without an answer."""

    kind = ErrorKind.BUDGET_SPENT


# ---------------------------------------------------------------------------------------------- tool responses


def approx_tokens(text: str) -> int:
    """Approximate token count of ``text``: UTF-8 bytes / 3, rounded up.

    A Hangul syllable (3 bytes) is about one token in current tokenizers, and ASCII JSON is 3-4 characters per
    token, so the estimate errs towards counting too many.
    """
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def cap_tool_response(content: dict[str, Any], max_tokens: int) -> str:
    """``content`` as JSON text of at most ``max_tokens`` approximate tokens.

    Whole records are dropped from the end (``records_omitted`` says how many). When not even the first record fits
    whole, it is shown shortened rather than not at all: its long text values cut to ``SHORT_VALUE_CHARS``, then its
    last fields left out while it does not fit (``fields_omitted``): the model still sees the record's identifiers
    and first fields, which a next call may need. If even that does not fit, the text itself is cut and marked.
    """
    text = _dumps(content)
    if approx_tokens(text) <= max_tokens:
        return text
    records = content.get("records")
    if isinstance(records, list) and records:
        lo, hi = 0, len(records) - 1  # the largest prefix that fits, by bisection
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if approx_tokens(_dumps(_trimmed(content, records, mid))) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        text = _dumps(_trimmed(content, records, lo))
        if lo == 0 and isinstance(records[0], dict):
            text = _dumps(_first_record_shortened(content, records, max_tokens))
        if approx_tokens(text) <= max_tokens:
            return text
    marker = " …[cut: the tool response exceeded the size limit]"
    budget = max_tokens * BYTES_PER_TOKEN - len(marker.encode("utf-8"))
    return text.encode("utf-8")[:max(budget, 0)].decode("utf-8", errors="ignore") + marker


_SENTENCE_END = re.compile(r"(?<=[.!?。])\s")


def short_text(text: str, max_chars: int) -> str:
    """``text``'s first sentence (or first line), cut to ``max_chars`` characters at a word where it can be
    (marked with ``…``); ``""`` when ``max_chars`` is 0."""
    if max_chars <= 0:
        return ""
    first = _SENTENCE_END.split(text.strip().split("\n", 1)[0], maxsplit=1)[0].strip()
    if len(first) <= max_chars:
        return first
    cut = first[:max_chars - 1]
    if " " in cut[max_chars // 2:]:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip() + "…"


def short_tool(tool: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """An OpenAI ``tools`` entry with its function and parameter descriptions cut by ``short_text`` (dropped at 0);
    names, types, enums and ``required`` stay."""

    def shorten(schema: Any) -> Any:
        if isinstance(schema, list):
            return [shorten(item) for item in schema]
        if not isinstance(schema, dict):
            return schema
        out = {}
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):  # property names are data, not prose
                out[key] = {name: shorten(sub) for name, sub in value.items()}
            elif key == "description" and isinstance(value, str):
                if max_chars > 0:
                    out[key] = short_text(value, max_chars)
            elif key not in ("title", "examples"):
                out[key] = shorten(value)
        return out

    function = dict(tool["function"])
    if isinstance(function.get("description"), str):
        function["description"] = short_text(function["description"], max_chars)
        if not function["description"]:
            del function["description"]
    function["parameters"] = shorten(function.get("parameters", {}))
    return {**tool, "function": function}


GENERIC_PARAMS = ("KEY", "pageNo", "numOfRows")  # every catalog tool's API key, page and page size, alike in each
SCHEMA_PROSE = ("description", "title", "examples", "default")  # a schema's words; names, types and bounds aside


def bare_generic(tool: dict[str, Any]) -> dict[str, Any]:
    """``tool`` with its generic parameters (``GENERIC_PARAMS``) shown by name and type only (enums and bounds
    stay): a quarter of the loop's first-turn prompt was their prose, the same in every tool."""
    function = tool["function"]
    parameters = function.get("parameters", {})
    properties = parameters.get("properties")
    if not isinstance(properties, dict) or not any(name in properties for name in GENERIC_PARAMS):
        return tool
    bare = {name: ({k: v for k, v in schema.items() if k not in SCHEMA_PROSE}
                   if name in GENERIC_PARAMS and isinstance(schema, dict) else schema)
            for name, schema in properties.items()}
    return {**tool, "function": {**function, "parameters": {**parameters, "properties": bare}}}


def shown_tools(tools: Sequence[dict[str, Any]], limits: EpisodeLimits) -> list[dict[str, Any]]:
    """The tools as the model is shown them under ``limits`` (``max_description_chars``, ``bare_generic_params``):
    the one place that shapes them, for the bench, the agent endpoint, training rollouts and EDGE's exported rows
    alike."""
    shown = list(tools)
    if limits.max_description_chars is not None:
        shown = [short_tool(tool, limits.max_description_chars) for tool in shown]
    if limits.bare_generic_params:
        shown = [bare_generic(tool) for tool in shown]
    return shown


def _trimmed(content: dict[str, Any], records: list[Any], keep: int) -> dict[str, Any]:
    return {**content, "records": records[:keep], "records_omitted": len(records) - keep,
            "note": f"only the first {keep} of {len(records)} records of this page fit the size limit"}


def _first_record_shortened(content: dict[str, Any], records: list[Any], max_tokens: int) -> dict[str, Any]:
    """The content with only its first record, shortened to fit (``cap_tool_response``); the shortest form when
    nothing fits."""
    first = {k: _short_value(v) for k, v in records[0].items()}
    fields = list(first)
    for keep in range(len(fields), 0, -1):
        candidate = _shortened(content, records, {k: first[k] for k in fields[:keep]}, len(fields) - keep)
        if approx_tokens(_dumps(candidate)) <= max_tokens:
            return candidate
    return _shortened(content, records, {}, len(fields))


def _short_value(value: Any) -> Any:
    if isinstance(value, str) and len(value) > SHORT_VALUE_CHARS:
        return value[:SHORT_VALUE_CHARS] + "…"
    return value


def _shortened(content: dict[str, Any], records: list[Any], first: dict[str, Any], omitted: int) -> dict[str, Any]:
    return {**content, "records": [first], "records_omitted": len(records) - 1, "fields_omitted": omitted,
            "note": f"only the first of {len(records)} records fits the size limit, shortened (long values cut at …"
                    + (f", its last {omitted} fields left out)" if omitted else ")")}


def tool_message(call_id: str, tool: str, result: ToolResult, *, max_tokens: int, arguments_error: str | None = None,
                 role: Literal["tool", "user"] = "tool") -> dict[str, Any]:
    """The message that gives the model one tool result (also what EDGE's SFT conversations show)."""
    content = result.structured()
    if arguments_error:
        content["arguments_error"] = arguments_error
    text = cap_tool_response(content, max_tokens)
    if role == "user":  # for chat templates that drop tool messages (llama-cpp-python's chatml-function-calling)
        return {"role": "user", "content": f"Result of {tool} ({call_id}):\n{text}"}
    return {"role": "tool", "tool_call_id": call_id, "content": text}


# ---------------------------------------------------------------------------------------------- reading a reply


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call as the model wrote it, read by ``models.toolcalls``.

    ``raw_arguments`` are as written (sent back to the model in the assistant message), ``arguments`` as they
    run (typed by the tool's schema; the raw text when they were not JSON, with ``arguments_problem`` saying so).
    ``problem`` says why the call could not be read at all: then it is not run, and the model is told.
    """

    id: str
    name: str
    raw_arguments: Any
    problem: str | None = None
    arguments: Any = field(default_factory=dict)
    arguments_problem: str | None = None


def read_calls(message: dict[str, Any], turn: int, tools: Sequence[Mapping[str, Any]],
               reader: ToolCallParser | None = None) -> list[ToolCallRequest]:
    """The tool calls of an assistant message: its structured ``tool_calls``, else the calls written in its content
    (read by ``reader``, by default every text format), which then leave ``message["content"]``. Ids are made up
    where the message has none: ``call_<turn>_<i>``."""
    structured = isinstance(message.get("tool_calls"), list) and bool(message["tool_calls"])  # as read_message
    read = read_message(message, tools, reader)
    if not structured and (read.calls or read.problems):
        message["content"] = read.content  # the calls leave the text; they go on as structured tool_calls
    return _requests(read, turn, raw=lambda c: c.raw if structured else c.arguments)


def _requests(turn_read: AssistantTurn, turn: int, raw: Callable[[Any], Any]) -> list[ToolCallRequest]:
    calls = [ToolCallRequest(id=c.id or f"call_{turn}_{i}", name=c.name, raw_arguments=raw(c), arguments=c.arguments,
                             arguments_problem=c.problem) for i, c in enumerate(turn_read.calls)]
    # an unreadable call gets a name chat templates can render: the model sees it answered with the reason
    calls += [ToolCallRequest(id=f"call_{turn}_{len(turn_read.calls) + i}", name=INVALID_CALL, raw_arguments={},
                              problem=problem) for i, problem in enumerate(turn_read.problems)]
    return calls


def read_generation(text: str, tools: Sequence[Mapping[str, Any]], special_tokens: Sequence[str] = ()) -> AssistantTurn:
    """One decoded generation read as the assistant message (``models.toolcalls.read_text``), the tokenizer's special
    tokens removed first (an end-of-turn token after an unclosed last call would read as stray text)."""
    kept = [t for t in special_tokens if t not in ("<tool_call>", "</tool_call>")]
    turn = read_text(_without(text, kept), tools)
    return replace(turn, content=turn.content.strip(), raw=text)


def _without(text: str, special_tokens: Sequence[str]) -> str:
    for token in special_tokens:
        text = text.replace(token, "")
    return text.strip()


def assistant_message(content: str, calls: Sequence[ToolCallRequest]) -> dict[str, Any]:
    """The assistant message in the OpenAI wire form: arguments as JSON text, as the model wrote them."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": _as_text(c.raw_arguments)}} for c in calls]
    return message


def _as_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else _dumps(raw if raw is not None else {})


# ---------------------------------------------------------------------------------------------- tokens


@dataclass
class Generation:
    """One generation of a token-level model: its text, and its token ids and log-probs for the ``TokenTrace``."""

    text: str
    token_ids: Sequence[int] = ()
    logprobs: Sequence[float] | None = None


class TokenCodec(Protocol):
    """How an engine turns the conversation into its model's tokens (verl's Continuous Token builder, or a chat
    template). Each method updates ``trace`` in place: ids, and the mask (1: written by the model)."""

    special_tokens: Sequence[str]  # removed from a generation's text before it is read

    async def start(self, trace: TokenTrace, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        """The first prompt: ``trace.ids`` becomes its ids (no mask: it is not part of the response)."""
        ...

    async def add_context(self, trace: TokenTrace, seen: list[dict[str, Any]], messages: list[dict[str, Any]],
                          tools: list[dict[str, Any]]) -> None:
        """The messages after ``seen`` (tool results), appended with mask 0."""
        ...

    async def add_generation(self, trace: TokenTrace, generation: Generation) -> None:
        """The generated tokens, appended with mask 1."""
        ...


@dataclass
class TokenTrace:
    """The episode as token ids (the first prompt, then the response: generations and the context between them),
    the response's mask (1 where the model wrote the token) and log-probs; filled by the step through ``codec``."""

    codec: TokenCodec
    max_response_tokens: int | None = None
    ids: list[int] = field(default_factory=list)
    response_mask: list[int] = field(default_factory=list)
    response_logprobs: list[float] = field(default_factory=list)
    messages_seen: int = 0  # messages rendered into ids (the assistant message appended after a generation too)
    generations: int = 0
    context_rounds: int = 0
    budget_spent: bool = False

    @property
    def prompt_ids(self) -> list[int]:
        return self.ids[:len(self.ids) - len(self.response_mask)]

    @property
    def response_ids(self) -> list[int]:
        return self.ids[len(self.ids) - len(self.response_mask):]

    def full(self) -> bool:
        return self.max_response_tokens is not None and len(self.response_mask) >= self.max_response_tokens


# ---------------------------------------------------------------------------------------------- the step

Reply = dict[str, Any] | str | AssistantTurn | Generation
Generate = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Awaitable[Reply]]
"""``await generate(messages, tools)`` -> the next assistant reply (module doc)."""

CONTINUE = object()  # a turn's result when the model called tools: the episode goes on


class AgentStep:
    """The tool loop of one episode (module doc): ``run`` plays turns until an answer; ``turn`` plays one.

    ``call(tool, args)`` runs one tool call (the episode's harness, or the agent endpoint's executor). Options:
    ``reader`` reads text-written calls (default: every format); ``read`` replaces the whole reading of an
    assistant message (the agent endpoint records unreadable calls); ``tool_result_role`` ``user`` for chat
    templates that drop tool messages; ``retry_empty_without_tools`` asks an empty reply again once without tools;
    ``on_not_run(turn, call, why)`` hears of each call the budget left unrun; ``tokens`` keeps the token view.
    """

    def __init__(self, limits: EpisodeLimits, call: CallTool, *, reader: ToolCallParser | None = None,
                 read: Callable[[dict[str, Any], int, list[dict[str, Any]]], list[ToolCallRequest]] | None = None,
                 tool_result_role: Literal["tool", "user"] = "tool", retry_empty_without_tools: bool = False,
                 on_not_run: Callable[[int, ToolCallRequest, str], None] | None = None,
                 tokens: TokenTrace | None = None) -> None:
        self.limits, self.call = limits, call
        self.read = read or (lambda message, turn, tools: read_calls(message, turn, tools, reader))
        self.tool_result_role, self.retry_empty_without_tools = tool_result_role, retry_empty_without_tools
        self.on_not_run = on_not_run
        self.tokens = tokens
        self.turns = 0  # generations asked for
        self.turn_no = 0  # the turn being played
        self.calls_run = 0  # calls passed to ``call``
        self._last_turn: str | None = None  # the previous turn's calls and results, as ``_repeats`` compares them
        self._repeats = 0  # turns in a row that made the same calls with the same results

    async def run(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], generate: Generate) -> str | None:
        """Turns until the model answers: the answer text, or None when its reply had no text.

        Raises:
            TurnLimitReached: no answer within ``max_turns`` turns (the last turn's calls are run).
            BudgetSpent: the prompt or response budget ran out first.
            whatever ``generate`` raises (the endpoint failed, the policy stopped).
        """
        tools = shown_tools(tools, self.limits)
        for turn in range(self.limits.max_turns):
            answer = await self.turn(messages, tools, generate, turn)
            if answer is not CONTINUE:
                return answer  # type: ignore[return-value]
        raise TurnLimitReached(f"no final answer within {self.limits.max_turns} assistant turns: the model was still "
                               "calling tools")

    async def turn(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], generate: Generate,
                   turn: int) -> str | None | object:
        """One turn (module doc): the answer (or None), or ``CONTINUE`` when the model called tools."""
        self.turn_no = turn
        await self._before_generation(messages, tools)
        reply = await generate(messages, tools)
        self.turns += 1
        content, calls, final = await self._read(reply, turn, tools)
        if not calls and not content and self.retry_empty_without_tools and tools and not final:
            again = await generate(messages, [])
            self.turns += 1
            content, calls, final = await self._read(again, turn, [])
            calls = []  # offered no tools, it has none to call
        messages.append(assistant_message(content, calls))
        if self.tokens is not None:
            self.tokens.messages_seen = len(messages)
        if final or not calls:
            return content if content.strip() else None
        results = await self.run_calls(calls, turn)
        messages.extend(results)
        self._stop_if_repeating(calls, results)
        return CONTINUE

    def _stop_if_repeating(self, calls: list[ToolCallRequest], results: list[dict[str, Any]]) -> None:
        """``RepeatedTurns`` when this turn is the ``max_repeated_turns``-th in a row with the same calls (names and
        arguments as run, or the same unreadable call) and the same results (the call ids aside)."""
        limit = self.limits.max_repeated_turns
        if limit is None:
            return
        this_turn = _dumps([[c.name, c.arguments, c.problem, m["content"].replace(c.id, "")]
                            for c, m in zip(calls, results, strict=True)])
        self._repeats = self._repeats + 1 if this_turn == self._last_turn else 1
        self._last_turn = this_turn
        if self._repeats >= limit:
            names = ", ".join(dict.fromkeys(c.name for c in calls))
            raise RepeatedTurns(f"the model made the same calls ({names}) with the same results {limit} turns in a "
                                f"row: stopped at turn {self.turn_no + 1} without an answer")

    # ------------------------------------------------------------------------------------ reading

    async def _read(self, reply: Reply, turn: int, tools: list[dict[str, Any]]) -> tuple[str, list[ToolCallRequest], bool]:
        """(text, calls, final): ``final`` when a token budget filled with this generation (its calls not run)."""
        if isinstance(reply, Generation):
            trace = self.tokens
            if trace is None:
                return self._read_turn(read_text(reply.text, tools), turn)
            await trace.codec.add_generation(trace, reply)
            trace.generations += 1
            if trace.full():
                trace.budget_spent = True
                return _without(reply.text, trace.codec.special_tokens), [], True
            return self._read_turn(read_generation(reply.text, tools, trace.codec.special_tokens), turn)
        if isinstance(reply, AssistantTurn):
            return self._read_turn(reply, turn)
        message = {"role": "assistant", "content": reply} if isinstance(reply, str) else reply
        calls = self.read(message, turn, tools)
        content = message.get("content")
        return (content if isinstance(content, str) else ""), calls, False

    def _read_turn(self, read: AssistantTurn, turn: int) -> tuple[str, list[ToolCallRequest], bool]:
        return read.content, _requests(read, turn, raw=lambda c: c.arguments), False

    # ------------------------------------------------------------------------------------ budgets

    async def _before_generation(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        budget, trace = self.limits.max_prompt_tokens, self.tokens
        if trace is not None:
            if trace.budget_spent:
                raise BudgetSpent(f"the response budget of {trace.max_response_tokens} tokens is spent")
            if not trace.ids:
                await trace.codec.start(trace, messages, tools)
            else:
                await trace.codec.add_context(trace, messages[:trace.messages_seen], messages, tools)
                trace.context_rounds += 1
                if trace.full():  # the tool messages do not fit: stop, as verl's ToolAgentLoop does
                    trace.budget_spent = True
                    raise BudgetSpent(f"the tool responses overflow the response budget of "
                                      f"{trace.max_response_tokens} tokens")
            trace.messages_seen = len(messages)
            if budget is not None and len(trace.ids) > budget:
                raise BudgetSpent(f"the prompt of {len(trace.ids)} tokens exceeds the prompt budget of {budget} tokens")
        elif budget is not None:
            size = approx_tokens(_dumps(messages)) + approx_tokens(_dumps(tools))
            if size > budget:
                raise BudgetSpent(f"the conversation (~{size} tokens) exceeds the prompt budget of {budget} tokens")

    # ------------------------------------------------------------------------------------ running calls

    async def run_calls(self, calls: list[ToolCallRequest], turn: int) -> list[dict[str, Any]]:
        """One tool message per call, in the order issued; the calls that fit the budgets run at once."""
        plan: list[tuple[ToolCallRequest, str | None]] = []  # (call, why it is not run)
        width = 0  # calls of this turn that run
        for c in calls:
            why = None if c.problem is not None else self._why_not_run(c, width)
            width += c.problem is None and why is None
            plan.append((c, why))
        self.calls_run += width
        results = iter(await asyncio.gather(*(self._run_one(c) for c, why in plan if why is None)))
        out = []
        for c, why in plan:
            if why is None:
                out.append(self._message(c, next(results), None))
                continue
            if self.on_not_run is not None:
                self.on_not_run(turn, c, why)
            out.append(self._message(c, None, why))
        return out

    def _why_not_run(self, call: ToolCallRequest, width: int) -> str | None:
        """Why ``call`` is not run when ``width`` calls of its turn already run; None: it runs."""
        limits = self.limits
        if limits.max_calls is not None and self.calls_run + width >= limits.max_calls:
            return (f"{call.name}: not run; the call budget of {limits.max_calls} tool calls is spent. Answer with "
                    "what you have")
        if limits.max_parallel_calls is not None and width >= limits.max_parallel_calls:
            return f"{call.name}: not run; at most {limits.max_parallel_calls} tool calls are run per turn"
        return None

    async def _run_one(self, call: ToolCallRequest) -> ToolResult:
        if call.problem is not None:  # the call could not even be read: nothing to run, the model is told why
            return ToolResult(tool=call.name, outcome=Outcome.SCHEMA_MISMATCH, message=call.problem)
        limit = self.limits.tool_timeout_s
        try:
            return await asyncio.wait_for(self.call(call.name, call.arguments), limit + TOOL_TIMEOUT_GRACE_S)
        except TimeoutError:
            return ToolResult(tool=call.name, outcome=Outcome.TIMEOUT,
                              message=f"{call.name}: no result within {limit:g} s; try again or narrow the query")

    def _message(self, call: ToolCallRequest, result: ToolResult | None, not_run: str | None) -> dict[str, Any]:
        if result is None:  # not run: no tool result exists, the model is told why
            text = _dumps({"outcome": "not_run", "message": not_run})
            if self.tool_result_role == "user":
                return {"role": "user", "content": f"Result of {call.name} ({call.id}):\n{text}"}
            return {"role": "tool", "tool_call_id": call.id, "content": text}
        problem = call.arguments_problem
        if problem is None and call.problem is None and not isinstance(call.arguments, Mapping):
            problem = "the arguments were not one JSON object of parameter values"
        return tool_message(call.id, call.name, result, max_tokens=self.limits.max_tool_tokens,
                            arguments_error=problem, role=self.tool_result_role)
