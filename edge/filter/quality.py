"""Stage 3 of the filter: quality. Rule checks, near-duplicate removal, and an LLM judge when one is configured.

    result = check_quality(items, catalog=load_catalog(), judge=quality_judge(KopaSettings().models.judge))
    result.kept, result.rejections, result.judge_stats

Rules (each rejection names what it found):

* length between ``MIN_CHARS`` and ``MAX_CHARS`` characters (KOPA-Bench's 145 queries run 48–202);
* Hangul at least ``MIN_HANGUL_RATIO`` of the letters (bench minimum 0.90), and no Han or kana characters
  (Appendix F, Table 8: "전월 대비人口 증감");
* no ASCII identifier: snake_case or camelCase words, or (with a catalog) a tool, parameter or output-field name;
* no procedural wording that narrates the tool chain ("조회한 뒤", "호출", "API"): a user asks for an outcome;
* a user's voice (``user_voice``, Appendix J): no copied parameter description, no opaque identifier, no code
  stated as a code where the catalog's code table gives its word; each is its own reason, so the funnel counts
  them apart (the realiser avoids them; this drops what still slips through).

Near-duplicates: items are taken in id order; one whose character-trigram Jaccard with an earlier kept item is
at least ``DUPLICATE_JACCARD`` is dropped, and the reason names the kept item (deterministic whatever the input
order).

The judge (the ``judge`` model profile, shared with KOPA-Bench's RESPONSE judge: ``KOPA_MODELS__JUDGE__BASE_URL``,
``_MODEL``, ``_API_KEY`` or ``kopa.toml``'s ``[models.judge]``; any OpenAI-compatible endpoint) sees the survivors
only, the costly check last. It answers ``{"ok": bool, "reason": str}`` per query. An endpoint that fails (after
the retries of ``models.ChatClient``) or a reply that does not parse leaves the rule result standing, and
``judge_stats`` counts it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any


from bench.taskset.audit import catalog_identifiers  # the catalog's ASCII names, as the bench audit sees them
from edge.graph.llm_proposer import InvalidReply, parse_reply, run_blocking
from edge.synth.item import Rejection, SynthItem
from models.errors import EndpointError
from models.settings import EndpointProfile

from .ngrams import TRIGRAMS, NgramIndex, char_ngrams
from .user_voice import user_voice_problem

if TYPE_CHECKING:
    from models.client import ChatClient

__all__ = ["DUPLICATE_JACCARD", "MAX_CHARS", "MIN_CHARS", "MIN_HANGUL_RATIO", "PROCEDURAL_WORDS", "QualityJudge",
           "QualityResult", "check_quality", "check_quality_async", "quality_judge", "rule_problem"]

STAGE = "quality"
MIN_CHARS, MAX_CHARS = 15, 400
MIN_HANGUL_RATIO = 0.6
DUPLICATE_JACCARD = 0.8
PROCEDURAL_WORDS = ("조회한 뒤", "조회한 후", "조회 후", "조회해서", "호출", "API", "api", "파라미터", "매개변수",
                    "엔드포인트", "함수를", "도구를")
_HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
_FOREIGN = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\u3400-\u4dbf]")  # kana, CJK ideographs
_LETTER = re.compile(r"[^\W\d_]")
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
_CAMEL = re.compile(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b")
_ASCII_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def rule_problem(query: str, identifiers: frozenset[str] | set[str] = frozenset()) -> str | None:
    """What is wrong with ``query`` by the rules, or None. ``identifiers``: catalog names to refuse."""
    size = len(query.strip())
    if not MIN_CHARS <= size <= MAX_CHARS:
        return f"the query is {size} characters long; allowed {MIN_CHARS}-{MAX_CHARS}"
    if foreign := _FOREIGN.findall(query):
        return f"the query holds foreign-script characters {''.join(dict.fromkeys(foreign))!r}"
    letters = _LETTER.findall(query)
    ratio = sum(1 for c in letters if _HANGUL.match(c)) / max(len(letters), 1)
    if ratio < MIN_HANGUL_RATIO:
        return f"Hangul is {ratio:.0%} of the query's letters; at least {MIN_HANGUL_RATIO:.0%} required"
    if found := _SNAKE.search(query) or _CAMEL.search(query):
        return f"the query holds the identifier {found.group(0)!r}"
    if names := sorted(set(_ASCII_WORD.findall(query)) & set(identifiers)):
        return f"the query names the API identifier {names[0]!r}"
    for word in PROCEDURAL_WORDS:
        if word in query:
            return f"the query narrates the tool chain ({word!r})"
    return None


# ---------------------------------------------------------------------------------------------- the judge


def quality_judge(profile: EndpointProfile) -> QualityJudge | None:
    """The judge of ``profile`` (``KopaSettings().models.judge``), or None when it has no base URL (rules only).

    Raises:
        ValueError: a base URL without a model (the message names the setting).
    """
    return QualityJudge(profile) if profile.configured else None


JUDGE_PROMPT = """\
You review Korean user queries for a tool-calling training set. Each query must read as a natural, fluent \
request a Korean user would write: grammatical Korean, no code or API identifiers, no narration of which tools \
to call, and one clear, answerable question. Answer with one JSON object: {"ok": true or false, "reason": \
"<one short sentence>"}."""


class QualityJudge:
    """An OpenAI-compatible chat endpoint judging each query; ``stats`` counts verdicts and failures."""

    def __init__(self, settings: EndpointProfile):
        self.settings = settings.required("judge")
        self.stats = {"judged": 0, "rejected": 0, "judge_error": 0, "judge_invalid": 0}

    async def _ask(self, client: ChatClient, query: str) -> str | None:
        json_reply = getattr(self.settings, "response_format", "json_object") != "none"
        reply = await client.complete([{"role": "system", "content": JUDGE_PROMPT}, {"role": "user", "content": query}],
                                      response_format={"type": "json_object"} if json_reply else None)
        return reply.content

    async def verdicts(self, items: Sequence[SynthItem]) -> dict[str, tuple[bool, str] | None]:
        """Per item id: (ok, reason), or None where the endpoint failed or the reply did not parse."""
        from models.client import ChatClient  # the openai SDK, imported only when a judge is asked

        limit = asyncio.Semaphore(self.settings.concurrency)
        async with ChatClient(self.settings, role="judge") as client:

            async def one(item: SynthItem) -> tuple[bool, str] | None:
                async with limit:
                    try:
                        reply = parse_reply(await self._ask(client, item.task.query))
                    except EndpointError:
                        self.stats["judge_error"] += 1
                        return None
                    except InvalidReply:
                        self.stats["judge_invalid"] += 1
                        return None
                ok = reply.get("ok")
                if not isinstance(ok, bool):
                    self.stats["judge_invalid"] += 1
                    return None
                self.stats["judged"] += 1
                self.stats["rejected"] += not ok
                return ok, str(reply.get("reason") or "")

            results = await asyncio.gather(*(one(i) for i in items))
        return {i.task.id: r for i, r in zip(items, results, strict=True)}


# ---------------------------------------------------------------------------------------------- the stage


@dataclass
class QualityResult:
    kept: list[SynthItem]
    rejections: list[Rejection]
    judge_stats: dict[str, int] = field(default_factory=dict)


async def check_quality_async(items: Sequence[SynthItem], *, catalog: Any = None,
                              judge: QualityJudge | None = None,
                              threshold: float = DUPLICATE_JACCARD) -> QualityResult:
    """Stage 3 over ``items`` (see the module doc); kept items come back in id order."""
    identifiers = frozenset(catalog_identifiers(catalog)) if catalog is not None else frozenset()
    rejections: list[Rejection] = []
    passed: list[SynthItem] = []
    index = NgramIndex(analyzer=TRIGRAMS, threshold=threshold)
    for item in sorted(items, key=lambda i: i.task.id):  # id order: the first of a duplicate pair is kept
        if problem := rule_problem(item.task.query, identifiers) or user_voice_problem(item, catalog):
            rejections.append(Rejection(item_id=item.task.id, stage=STAGE, reason=problem))
            continue
        grams = char_ngrams(item.task.query)
        if (hit := index.best(grams)) is not None:
            kept_id, score = hit
            rejections.append(Rejection(item_id=item.task.id, stage=STAGE, reason=(
                f"near-duplicate of {kept_id} (character-trigram Jaccard {score:.2f} ≥ {threshold}); {kept_id} is kept")))
            continue
        index.add(item.task.id, grams)
        passed.append(item)
    if judge is None:
        return QualityResult(passed, rejections)
    verdicts = await judge.verdicts(passed)
    kept = []
    for item in passed:
        verdict = verdicts[item.task.id]
        if verdict is not None and not verdict[0]:
            rejections.append(Rejection(item_id=item.task.id, stage=STAGE,
                                        reason=f"the LLM judge ({judge.settings.model}) refused it: {verdict[1]}"))
        else:
            kept.append(item)  # judged ok, or no verdict: the rule result stands
    return QualityResult(kept, rejections, dict(judge.stats))


def check_quality(items: Sequence[SynthItem], *, catalog: Any = None, judge: QualityJudge | None = None,
                  threshold: float = DUPLICATE_JACCARD) -> QualityResult:
    """Synchronous ``check_quality_async``; ``judge``: see ``quality_judge`` (None: rules and duplicates only)."""
    return run_blocking(check_quality_async(items, catalog=catalog, judge=judge, threshold=threshold))

