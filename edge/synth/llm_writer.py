"""Optional LLM query writer: any OpenAI-compatible chat endpoint rewrites the rule realiser's question.

    export KOPA_EDGE__WRITER_BASE_URL=http://127.0.0.1:8000/v1 KOPA_EDGE__WRITER_MODEL=qwen3.5-122b
    writer = LLMWriter.from_env()          # None when no base URL is set: the rule realiser writes alone
    run = await synthesize(store, gateway, n, seed, explore=opener, writer=writer)

The model gets the rule question (which already says everything the user may say and nothing more) and
the values it must not write, and answers ``{"query": "..."}``. Its reply is parsed with the Phase A
proposer's lenient parser and accepted only when the question is Korean, of sane length, names no value
that crossed a junction and no English identifier; otherwise, or when the endpoint fails after its
retries, the rule question stands (``stats`` counts why). Requests ask for temperature 0 and a fixed seed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import httpx
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from edge.graph.llm_proposer import InvalidReply, parse_reply, post_chat, run_blocking

from .execute import Trace
from .realise import leaks, realise

__all__ = ["LLMWriter", "WriterSettings", "check_query"]

PROMPT_VERSION = "edge-writer-1"
SYSTEM_PROMPT = """\
You rewrite a Korean question so it reads like something a person would type to a chatbot. Keep its meaning \
exactly: every condition, every number and name it states, and what it asks for. Do not add facts, do not \
mention data sources, tools, systems or field names in English, and never write any of the FORBIDDEN values. \
Reply with one JSON object and nothing else: {"query": "..."}"""
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_IDENTIFIER = re.compile(r"\b[A-Za-z]+_[A-Za-z_]+\b|\b[a-z]+[A-Z][A-Za-z]+\b")


class WriterSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key: SecretStr = SecretStr("")
    timeout_s: float = Field(60.0, gt=0)
    retries: int = Field(2, ge=0)
    retry_backoff_s: float = Field(1.0, ge=0)
    seed: int = 0

    @property
    def url(self) -> str:
        return f"{self.base_url.rstrip('/')}/chat/completions"


class _WriterEnv(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KOPA_EDGE__WRITER_", extra="ignore")

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None


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
    def __init__(self, settings: WriterSettings):
        self.settings = settings
        self.stats: Counter[str] = Counter()

    @classmethod
    def from_env(cls) -> LLMWriter | None:
        env = _WriterEnv()
        if not env.base_url:
            return None
        if not env.model:
            raise ValueError("KOPA_EDGE__WRITER_BASE_URL is set but KOPA_EDGE__WRITER_MODEL is not")
        return cls(WriterSettings(base_url=env.base_url, model=env.model, api_key=SecretStr(env.api_key or "")))

    def __call__(self, trace: Trace, catalog: Any, rng: np.random.Generator) -> tuple[str, str]:
        rule_query, phrasing = realise(trace, catalog, rng)
        allowed = [*trace.start_args.values(), *(v for h in trace.hops for v in h.given.values()),
                   *(v for _, a in trace.others for v in a.values())]
        try:
            content = run_blocking(self._ask(rule_query, trace.bound_values))
            query = check_query(parse_reply(content), trace.bound_values, allowed)
        except InvalidReply as exc:
            self.stats["fallback_invalid"] += 1
            self.stats[f"why: {str(exc)[:80]}"] += 0
            return rule_query, f"rule:{phrasing}"
        except RuntimeError:
            self.stats["fallback_error"] += 1
            return rule_query, f"rule:{phrasing}"
        self.stats["llm"] += 1
        return query, f"llm:{self.settings.model}"

    async def _ask(self, query: str, forbidden: list[str]) -> str | None:
        cfg = self.settings
        key = cfg.api_key.get_secret_value()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        body = {"model": cfg.model, "temperature": 0, "seed": cfg.seed,
                "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                             {"role": "user", "content": json.dumps({"question": query, "FORBIDDEN": forbidden},
                                                                    ensure_ascii=False)}]}
        async with httpx.AsyncClient(headers=headers) as client:
            return await post_chat(client, cfg, body)  # EndpointFailure (a RuntimeError) when no reply came
