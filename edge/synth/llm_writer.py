"""Optional LLM query writer: any OpenAI-compatible chat endpoint rewrites the rule realiser's question.

    export KOPA_MODELS__WRITER__BASE_URL=http://127.0.0.1:8000/v1 KOPA_MODELS__WRITER__MODEL=qwen3.5-122b
    writer = query_writer(KopaSettings().models.writer)   # None without a base URL: the rule realiser writes alone
    run = await synthesize(store, gateway, n, seed, explore=opener, writer=writer)

The model gets the rule question (which already says everything the user may say and nothing more) and
the values it must not write, and answers ``{"query": "..."}``. Its reply is parsed with the Phase A
proposer's lenient parser and accepted only when the question is Korean, of sane length, names no value
that crossed a junction and no English identifier; otherwise, or when the endpoint fails after its
retries (``models.ChatClient``), the rule question stands (``stats`` counts why). Requests ask for the profile's
temperature (0) and seed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import numpy as np

from edge.graph.llm_proposer import InvalidReply, parse_reply
from models.errors import EndpointError
from models.settings import EndpointProfile

from .execute import Trace
from .realise import leaks, realise

__all__ = ["LLMWriter", "check_query", "query_writer"]

PROMPT_VERSION = "edge-writer-1"
SYSTEM_PROMPT = """\
You rewrite a Korean question so it reads like something a person would type to a chatbot. Keep its meaning \
exactly: every condition, every number and name it states, and what it asks for. Do not add facts, do not \
mention data sources, tools, systems or field names in English, and never write any of the FORBIDDEN values. \
Reply with one JSON object and nothing else: {"query": "..."}"""
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_IDENTIFIER = re.compile(r"\b[A-Za-z]+_[A-Za-z_]+\b|\b[a-z]+[A-Z][A-Za-z]+\b")


def check_query(reply: dict[str, Any], forbidden: list[str], allowed: list[Any]) -> str:
    """The reply's question, or ``InvalidReply`` saying why it cannot stand."""
    query = reply.get("query")
    if not isinstance(query, str) or not query.strip():
        raise InvalidReply("the reply has no 'query' text")
    query = query.strip()
    if not _HANGUL.search(query) or not 10 <= len(query) <= 600:
        raise InvalidReply(f"not a Korean question of 10-600 characters: {query[:80]!r}")
    if leaked := leaks(query, forbidden, allowed=allowed):
        raise InvalidReply(f"the question names junction values {leaked}")
    if found := _IDENTIFIER.findall(query):
        raise InvalidReply(f"the question names identifiers {found[:3]}")
    return query


class LLMWriter:
    """Rewrites each rule question through the ``writer`` profile's endpoint; ``stats`` counts the outcomes."""

    def __init__(self, settings: EndpointProfile):
        self.settings = settings.required("writer")
        self.stats: Counter[str] = Counter()

    def __call__(self, trace: Trace, catalog: Any, rng: np.random.Generator) -> tuple[str, str]:
        rule_query, phrasing = realise(trace, catalog, rng)
        allowed = [*trace.start_args.values(), *(v for h in trace.hops for v in h.given.values()),
                   *(v for _, a in trace.others for v in a.values())]
        try:
            content = self._ask(rule_query, trace.bound_values)
            query = check_query(parse_reply(content), trace.bound_values, allowed)
        except InvalidReply as exc:
            self.stats["fallback_invalid"] += 1
            self.stats[f"why: {str(exc)[:80]}"] += 0
            return rule_query, f"rule:{phrasing}"
        except EndpointError:
            self.stats["fallback_error"] += 1
            return rule_query, f"rule:{phrasing}"
        self.stats["llm"] += 1
        return query, f"llm:{self.settings.model}"

    def _ask(self, query: str, forbidden: list[str]) -> str | None:
        from models.client import ChatClient  # the openai SDK, imported only when a model is asked

        messages = [{"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": json.dumps({"question": query, "FORBIDDEN": forbidden},
                                                           ensure_ascii=False)}]
        with ChatClient(self.settings, role="writer") as client:
            return client.complete_sync(messages).content


def query_writer(profile: EndpointProfile) -> LLMWriter | None:
    """The writer of ``profile`` (``KopaSettings().models.writer``), or None when it has no base URL.

    Raises:
        ValueError: a base URL without a model (the message names the setting).
    """
    return LLMWriter(profile) if profile.configured else None
