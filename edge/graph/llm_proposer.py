"""LLM binding proposer: Phase A's per-edge judgment asked of any OpenAI-compatible chat endpoint (paper §3.2).

    export KOPA_MODELS__PROPOSER__BASE_URL=http://127.0.0.1:8000/v1 KOPA_MODELS__PROPOSER__MODEL=qwen3.5-122b
    export KOPA_MODELS__PROPOSER__API_KEY=...    # optional; sent as a Bearer token, written nowhere
    kopa edge graph build --sandbox              # uses this proposer; without a base URL, the rule proposer

    proposer = LLMProposer(ProposerProfile(base_url=..., model=...), cache_path="replies.jsonl")
    proposal = proposer.propose(catalog.get("find_dart_corp_code"), catalog.get("get_dart_company_overview"))
    proposals = await proposer.propose_many(pairs, concurrency=16)   # same order as ``pairs``
    proposer.stats     # {"llm": n, "fallback_invalid": n, "fallback_error": n, "cached": n}

One chat request per candidate edge u → v returns Eq. 1's three parts in one JSON object: a feasibility s_e,
the binding B_e (parameter of v ← output field of u) and candidate values D_e for the required parameters
left unbound. The request carries u's output fields and v's non-generic parameters; generic ones (API key,
paging, format: ``ParamSpec.is_generic``, as ``RuleProposer`` skips them) are the runtime's and are never
offered, so a reply that binds one is invalid. Requests ask for temperature 0 and a fixed seed.

The reply is parsed leniently (reasoning in ``<think>`` blocks and ```json fences are stripped, the first
JSON object is taken) and validated strictly against the two tool specs (a JSON schema built per edge):
fields must be u's output fields, parameters v's non-generic parameters, each bound at most once,
feasibility a number in [0, 1], candidate values strings (whole numbers are accepted and written as text).
A reply that fails validation, or an endpoint that fails after the profile's ``max_retries`` re-sends (the
``models.ChatClient`` policy shared by every model endpoint), falls back to the
``RuleProposer``'s answer for that edge, and ``stats`` counts why; one bad reply never stops an admission.
``fallbacks`` keeps the reason per edge. ``stats["cached"]`` counts replies reused from the cache (each is
also counted as ``llm`` or ``fallback_invalid``).

Plan (as the rule proposer's): one entry per non-generic parameter of v that is required or bound, in v's
order; an unbound required parameter is CLARIFY with the model's candidates (an enum parameter keeps only
enum members) followed by those its spec gives (default, enum, examples). A reply that binds nothing
means no edge (``None``).

Replies are cached per (u, v) for the proposer's life and, with ``cache_path``, in a JSON Lines file whose
first line names the model and prompt version: a resumed admission asks only the edges it has no reply
for, and a cache of another model or prompt is refused. Only reply texts are stored, never the key.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import jsonschema

from mcp_gateway.catalog.spec import ParamSpec, ToolSpec
from models.errors import EndpointError
from models.settings import ProposerProfile

from .proposer import BindingProposal, ParamSource, RuleProposer, SourceKind, candidates

if TYPE_CHECKING:
    from models.client import ChatClient

__all__ = ["PROMPT_VERSION", "InvalidReply", "LLMProposer", "LLMProposerError", "edge_message", "parse_reply",
           "proposal_from_reply", "reply_schema", "run_blocking"]

log = logging.getLogger(__name__)

PROMPT_VERSION = "edge-binding-1"  # part of the proposer's identity: change it whenever the prompt changes
_MAX_CANDIDATES = 20
_T = TypeVar("_T")

SYSTEM_PROMPT = """\
You help build a graph of tool chains over Korean public-data APIs. An edge SOURCE -> TARGET exists when a \
record returned by SOURCE can supply input values for a call of TARGET. The user message is a JSON object \
with the SOURCE tool (its output fields) and the TARGET tool (its input parameters); descriptions are in Korean.

Judge only the direction SOURCE -> TARGET, and answer three things:

1. bindings: the TARGET parameters that can take their value straight from one SOURCE output field. Decide by \
meaning, not by spelling: providers name the same thing differently (SIGUN_CD, sigunCd and rgnCd can all be a \
region code; crtrYr, SUM_YY and YEAR a year), so read the descriptions. Bind only when the field's value is a \
valid value for the parameter as it stands: the same code system, format and unit. A name does not fill a code \
parameter, a year does not fill a full date, one provider's institution code does not fill another's. A \
parameter takes at most one field; a field may feed several parameters. Use only the names listed: keys, \
paging and output-format parameters are filled by the system and are not listed.

2. candidates: for each required TARGET parameter you leave unbound, up to 3 concrete values, different from \
each other, that are likely to return data (for example three regions, or recent years); pick from the enum \
when the parameter has one.

3. feasibility: a number from 0 to 1 for how likely a call of TARGET, filled this way from a real SOURCE \
record, returns meaningful data. Around 0.9 or more: an identifier handed over directly; around 0.7: a clear \
dependency in the same format; around 0.5: plausible but unsure; 0.3 or less: weak; 0: no dependency \
(then give no bindings).

Reply with one JSON object and nothing else:
{"feasibility": 0.0, "reason": "one short sentence", "bindings": [{"param": "TARGET parameter", "field": \
"SOURCE field"}], "candidates": [{"param": "TARGET parameter", "values": ["value", "value", "value"]}]}"""


class LLMProposerError(RuntimeError):
    """The proposer cannot start: its reply cache belongs to another model or prompt, or is unreadable."""


class InvalidReply(ValueError):
    """The model's reply is no acceptable binding proposal for the edge; the message says what was wrong."""


# --- what is sent --------------------------------------------------------------------------------------------


def _bindable(tool: ToolSpec) -> list[ParamSpec]:
    return [p for p in tool.params if not p.is_generic]


def _param_card(p: ParamSpec) -> dict[str, Any]:
    card: dict[str, Any] = {"name": p.name, "type": p.type, "required": p.required, "description": p.description_ko}
    if p.enum:
        card["enum"] = list(p.enum)
    if p.default is not None:
        card["default"] = p.default
    return card


def edge_message(source: ToolSpec, target: ToolSpec) -> str:
    """The user message for one edge: the two tools as JSON (u's output fields, v's non-generic parameters)."""
    return json.dumps({
        "source": {"name": source.name, "description": source.description_ko,
                   "output_fields": [{"name": f.name, "type": f.type, "description": f.description_ko}
                                     for f in source.output]},
        "target": {"name": target.name, "description": target.description_ko,
                   "parameters": [_param_card(p) for p in _bindable(target)]},
    }, ensure_ascii=False, indent=1)


def reply_schema(source: ToolSpec, target: ToolSpec) -> dict[str, Any]:
    """The JSON schema a reply for this edge must meet: only u's fields and v's non-generic parameters."""
    fields = [f.name for f in source.output]
    params = [p.name for p in _bindable(target)]
    value = {"anyOf": [{"type": "string"}, {"type": "integer"}]}  # a model writes years and codes as numbers
    return {
        "type": "object",
        "required": ["feasibility", "bindings"],
        "properties": {
            "feasibility": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string"},
            "bindings": {"type": "array", "items": {
                "type": "object", "required": ["param", "field"],
                "properties": {"param": {"enum": params}, "field": {"enum": fields}}}},
            "candidates": {"type": "array", "items": {
                "type": "object", "required": ["param", "values"],
                "properties": {"param": {"enum": params}, "values": {"type": "array", "items": value}}}},
        },
    }


# --- what comes back ----------------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_reply(content: str | None) -> dict[str, Any]:
    """The JSON object of a reply: reasoning blocks and code fences stripped, the first object taken."""
    if not isinstance(content, str) or not content.strip():
        raise InvalidReply("the reply has no text")
    text = _THINK.sub("", content).strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    start = text.find("{")
    if start < 0:
        raise InvalidReply(f"the reply holds no JSON object: {content[:200]!r}")
    try:
        value, _ = json.JSONDecoder(strict=False).raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise InvalidReply(f"the reply is not valid JSON ({exc}): {content[:200]!r}") from None
    if not isinstance(value, dict):
        raise InvalidReply("the reply's JSON is not an object")
    return value


def proposal_from_reply(reply: dict[str, Any], source: ToolSpec, target: ToolSpec) -> BindingProposal | None:
    """The proposal a parsed reply makes for u → v; ``InvalidReply`` when it does not fit the two specs."""
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(reply_schema(source, target))
                                             .iter_errors(reply))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the reply"
        raise InvalidReply(f"{source.name} → {target.name}: {where}: {error.message}")
    binding: dict[str, str] = {}
    for item in reply["bindings"]:
        if item["param"] in binding and binding[item["param"]] != item["field"]:
            raise InvalidReply(f"{source.name} → {target.name}: parameter {item['param']!r} is bound twice "
                               f"({binding[item['param']]!r} and {item['field']!r})")
        binding[item["param"]] = item["field"]
    if not binding:
        return None  # the model sees no dependency: no edge, as the rule proposer's None
    offered: dict[str, list[str]] = {}
    for item in reply.get("candidates", ()):
        offered.setdefault(item["param"], []).extend(_as_text(v) for v in item["values"])
    plan = []
    for p in _bindable(target):
        if p.name in binding:
            plan.append(ParamSource(p.name, SourceKind.UPSTREAM, field=binding[p.name]))
        elif p.required:
            # the model's values first; an enum parameter accepts nothing else (the runtime would refuse it)
            values = [v for v in offered.get(p.name, ()) if v and (not p.enum or v in p.enum)]
            merged = tuple(dict.fromkeys([*values, *candidates(p)]))[:_MAX_CANDIDATES]
            plan.append(ParamSource(p.name, SourceKind.CLARIFY, candidates=merged))
    return BindingProposal(source.name, target.name, round(float(reply["feasibility"]), 4), tuple(plan))


def _as_text(value: str | int | float) -> str:
    if isinstance(value, float):  # JSON Schema's integer admits 2023.0
        value = int(value)
    return str(value).strip()


# --- the proposer -----------------------------------------------------------------------------------------------


class LLMProposer:
    """Binding proposals from a chat model, validated per edge, with the rule proposer as the fallback."""

    def __init__(self, settings: ProposerProfile, *, fallback: RuleProposer | None = None,
                 cache_path: Path | str | None = None):
        self.settings = settings.required("proposer")
        self.fallback = fallback or RuleProposer()
        self.stats = {"llm": 0, "fallback_invalid": 0, "fallback_error": 0, "cached": 0}
        self.fallbacks: dict[tuple[str, str], str] = {}  # (u, v) → why the rule proposer answered
        self._cache = _ReplyCache(Path(cache_path) if cache_path else None, self.identity)

    @property
    def identity(self) -> dict[str, str]:
        """What a run records as its proposer (never the endpoint's key)."""
        return {"kind": "llm", "model": self.settings.model, "prompt": PROMPT_VERSION}

    def describe(self) -> str:
        return f"llm {self.settings.model} at {self.settings.base_url}"

    def propose(self, source: ToolSpec, target: ToolSpec) -> BindingProposal | None:
        return run_blocking(self.propose_many([(source, target)]))[0]

    async def propose_many(self, pairs: Sequence[tuple[ToolSpec, ToolSpec]], *,
                           concurrency: int | None = None) -> list[BindingProposal | None]:
        """One proposal per pair, in the order of ``pairs``; each distinct (u, v) is asked at most once."""
        distinct = {(u.name, v.name): (u, v) for u, v in pairs}
        limit = asyncio.Semaphore(concurrency or self.settings.concurrency)
        from models.client import ChatClient  # the openai SDK, imported only when a model is asked

        async with ChatClient(self.settings, role="proposer") as client:

            async def one(u: ToolSpec, v: ToolSpec) -> BindingProposal | None:
                async with limit:
                    return await self._propose_one(client, u, v)

            answers = await asyncio.gather(*(one(u, v) for u, v in distinct.values()))
        by_edge = dict(zip(distinct, answers))
        return [by_edge[(u.name, v.name)] for u, v in pairs]

    async def _propose_one(self, client: ChatClient, source: ToolSpec,
                           target: ToolSpec) -> BindingProposal | None:
        edge = (source.name, target.name)
        content = self._cache.get(edge)
        if content is not None:
            self.stats["cached"] += 1
        else:
            try:
                content = await self._ask(client, source, target)
            except EndpointError as exc:
                return self._fall_back(edge, "fallback_error", str(exc), source, target)
            self._cache.put(edge, content)
        try:
            proposal = proposal_from_reply(parse_reply(content), source, target)
        except InvalidReply as exc:
            return self._fall_back(edge, "fallback_invalid", str(exc), source, target)
        self.stats["llm"] += 1
        return proposal

    def _fall_back(self, edge: tuple[str, str], why: str, reason: str, source: ToolSpec,
                   target: ToolSpec) -> BindingProposal | None:
        self.stats[why] += 1
        self.fallbacks[edge] = reason
        log.debug("%s → %s: rule proposer answers (%s): %s", *edge, why, reason)
        return self.fallback.propose(source, target)

    async def _ask(self, client: ChatClient, source: ToolSpec, target: ToolSpec) -> str | None:
        """The reply text for one edge (None: a reply without text); ``EndpointError`` when none came."""
        if self.settings.response_format == "json_object":
            response_format: dict[str, Any] | None = {"type": "json_object"}
        elif self.settings.response_format == "json_schema":
            response_format = {"type": "json_schema", "json_schema": {
                "name": "binding_proposal", "schema": reply_schema(source, target)}}
        else:
            response_format = None
        reply = await client.complete([{"role": "system", "content": SYSTEM_PROMPT},
                                       {"role": "user", "content": edge_message(source, target)}],
                                      response_format=response_format)
        return reply.content  # no text: an invalid reply, not an endpoint fault


class _ReplyCache:
    """Reply texts per (u, v), in memory and optionally appended to a JSON Lines file (a kill loses one line)."""

    def __init__(self, path: Path | None, identity: dict[str, str]):
        self.path, self.identity = path, identity
        self.replies: dict[tuple[str, str], str] = {}
        if path is not None and path.exists() and path.stat().st_size:
            self._load(path)

    def _load(self, path: Path) -> None:
        lines = path.read_text(encoding="utf-8").splitlines()
        try:
            header = json.loads(lines[0])
        except json.JSONDecodeError:
            raise LLMProposerError(f"{path} is not a binding-reply cache (its first line is not JSON)") from None
        if header != self.identity:
            raise LLMProposerError(f"{path} holds replies of {header}, this proposer is {self.identity}: "
                                   "give another cache path or remove the file")
        for line in lines[1:]:
            try:
                entry = json.loads(line)
                self.replies[(entry["source"], entry["target"])] = entry["content"]
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # the last line of a killed run may be cut short: that edge is asked again

    def get(self, edge: tuple[str, str]) -> str | None:
        return self.replies.get(edge)

    def put(self, edge: tuple[str, str], content: str | None) -> None:
        if content is None:
            return  # nothing to reuse: ask again next time
        self.replies[edge] = content
        if self.path is None:
            return
        fresh = not self.path.exists() or not self.path.stat().st_size
        if fresh:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            if fresh:
                out.write(json.dumps(self.identity, ensure_ascii=False) + "\n")
            out.write(json.dumps({"source": edge[0], "target": edge[1], "content": content},
                                 ensure_ascii=False) + "\n")


def run_blocking(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` to completion from sync code, also when called inside a running event loop (``build_graph``
    admits the skeleton synchronously from its coroutine): then it runs on its own loop in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
