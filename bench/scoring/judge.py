"""The LLM-judge fallback of RESPONSE scoring (Appendix B.2), through any OpenAI-compatible endpoint.

    from bench.scoring.judge import LLMJudge, grade_response, judge_from_profile
    judge = judge_from_profile(KopaSettings().models.judge)   # None unless [models.judge] has a base_url
    judge = LLMJudge(JudgeProfile(base_url="http://127.0.0.1:8000/v1", model="qwen3.5-27b"))
    score = await grade_response(task, final_reply, judge)   # score.method == "judge" when it decided

The judge is off by default (the ``judge`` profile of ``KopaSettings().models`` has no base URL): scoring is then
fully deterministic and offline. When it is on (``KOPA_MODELS__JUDGE__BASE_URL`` and ``_MODEL``, or
``kopa.toml``'s ``[models.judge]``):

* string and number answers that the deterministic rules do not pass — no readable answer, or no match —
  go to the judge ("unmatched/failed cases fall back to LLM-as-a-Judge");
* judge-type answers always go to the judge ("we rely solely on LLM-as-a-Judge").

Each judged score records the judge model and its raw reply. A judge reply without a verdict line
counts as a fail (the judge is a model and may ramble); an unreachable or failing endpoint raises
``JudgeError``, because silently failing every judged answer would corrupt a run's scores.

The request goes through ``models.ChatClient`` (the openai SDK: its retries on timeouts, connection errors, 408,
409, 429 and 5xx, none on another 4xx), with the profile's temperature (0) and seed (0), so a replayed run asks
the same question the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from bench.task import ResponseType
from models.errors import EndpointError, ErrorKind
from models.settings import EndpointProfile

from .response import ResponseScore, score_response

if TYPE_CHECKING:
    from bench.task import Task
    from models.client import ChatClient

__all__ = [
    "DEFAULT_MAX_REPLY_CHARS",
    "JudgeError",
    "JudgeVerdict",
    "LLMJudge",
    "grade_response",
    "grade_response_sync",
    "judge_from_profile",
    "judge_messages",
    "parse_verdict",
]

DEFAULT_MAX_REPLY_CHARS = 8_000  # the tail of a long reply is kept: the final answer sits at the end


class JudgeError(RuntimeError):
    """The judge endpoint could not be reached or answered with something other than a chat completion."""


class JudgeVerdict(BaseModel):
    """What the judge said: ``passed`` is None when its reply had no verdict line."""

    model_config = ConfigDict(frozen=True)

    passed: bool | None
    model: str
    raw: str


# ------------------------------------------------------------------------------------------------ prompts

_TEXT_RULES = """\
You check answers for a benchmark of tool-using assistants. You get a user's question, one or more
reference answers, and the assistant's final reply. Decide only whether the reply's final answer says
the same thing as a reference answer; do not work out the answer yourself and do not judge the method.

Accept when:
- the final answer has the same meaning as a reference answer, in any wording, spacing, word order,
  script (Korean or English names) or with a synonym;
- it adds details that neither contradict nor hide the reference answer.
Reject when:
- a fact, name, count, date or value differs from the reference answer, or part of it is missing;
- the reply gives several different final answers or contradicts itself;
- the wording is so broken that the meaning is unclear;
- the reply is mostly the same words or tokens repeated.
"""

_NUMBER_RULES = """\
You check numeric answers for a benchmark of tool-using assistants. You get a user's question, one or
more reference values, and the assistant's final reply. Decide only whether the reply's final value
equals a reference value; do not solve the question and ignore mistakes in the working.

Accept when:
- the final value is numerically the same, written any way: with thousands separators, as a fraction,
  in scientific notation, in LaTeX, or as an expression that computes to it (compute it first);
- the unit is missing or written out (15 and 15% and 15퍼센트 are the same when the question asks for a
  percentage; 1680 and 1,680원 are the same);
- the two values have different numbers of decimal places and the more precise one, rounded to the
  places of the less precise one, gives the less precise one (3.14 and 3.14159 match; 3.14 and 3.16 do not).
Reject when:
- the value differs in any way that changes its meaning (sign, magnitude, a factor of 100, a different
  quantity);
- the reply gives several different final values or contradicts itself;
- the reply is mostly the same words or tokens repeated.
"""

_VERDICT_INSTRUCTION = """
Reason briefly first. Then end with one line that is exactly `VERDICT: PASS` or `VERDICT: FAIL`."""

_VERDICT = re.compile(r"VERDICT\s*:\s*[*_`\"']*\s*(PASS|FAIL)\b", re.IGNORECASE)


def judge_messages(question: str, response_type: ResponseType | str, accepted: Sequence[str],
                   reply: str, max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS) -> list[dict[str, str]]:
    """The chat messages that ask the judge about one reply (our own wording; see the module docstring)."""
    rules = _NUMBER_RULES if ResponseType(response_type) is ResponseType.NUMBER else _TEXT_RULES
    if len(reply) > max_reply_chars:
        reply = "…" + reply[-max_reply_chars:]
    references = "\n".join(f"- {a}" for a in accepted)
    user = (f"<question>\n{question}\n</question>\n\n<reference_answers>\n{references}\n</reference_answers>\n\n"
            f"<assistant_reply>\n{reply}\n</assistant_reply>")
    return [{"role": "system", "content": rules + _VERDICT_INSTRUCTION}, {"role": "user", "content": user}]


def parse_verdict(text: str) -> bool | None:
    """True/False from the last ``VERDICT: PASS|FAIL`` of the judge's reply; None when it has none."""
    verdicts = _VERDICT.findall(text)
    return verdicts[-1].upper() == "PASS" if verdicts else None


# ------------------------------------------------------------------------------------------------ client


class LLMJudge:
    """A judge behind an OpenAI-compatible chat endpoint (the ``judge`` profile); off when it has no base URL."""

    def __init__(self, profile: EndpointProfile, *, max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS):
        self.profile = profile
        self.max_reply_chars = max_reply_chars

    @property
    def enabled(self) -> bool:
        return self.profile.configured

    @property
    def model(self) -> str:
        return str(self.profile.model)

    def _messages(self, question: str, response_type: ResponseType | str, accepted: Sequence[str],
                  reply: str) -> list[dict[str, str]]:
        if not self.enabled:
            raise JudgeError("the judge is disabled; configure it with KOPA_MODELS__JUDGE__BASE_URL and "
                             "KOPA_MODELS__JUDGE__MODEL (kopa.toml [models.judge])")
        return judge_messages(question, response_type, accepted, reply, self.max_reply_chars)

    def _client(self) -> ChatClient:
        from models.client import ChatClient  # the openai SDK, imported only when a judge is asked

        try:
            return ChatClient(self.profile, role="judge")
        except ValueError as exc:
            raise JudgeError(str(exc)) from None

    def _failed(self, exc: EndpointError) -> JudgeError:
        if exc.kind in (ErrorKind.ENDPOINT_TIMEOUT, ErrorKind.ENDPOINT_UNREACHABLE):
            return JudgeError(f"the judge at {exc.url} is unreachable: {exc}")
        if exc.kind is ErrorKind.ENDPOINT_BAD_REPLY:
            return JudgeError(f"the judge did not answer with a chat completion (choices[0].message.content): {exc}")
        return JudgeError(f"the judge: {exc}")

    def _verdict(self, content: str | None) -> JudgeVerdict:
        return JudgeVerdict(passed=parse_verdict(content or ""), model=self.model, raw=content or "")

    async def verdict(self, question: str, response_type: ResponseType | str, accepted: Sequence[str],
                      reply: str) -> JudgeVerdict:
        """Ask the judge whether ``reply`` answers ``question`` as one of ``accepted``.

        Raises:
            JudgeError: the judge is disabled, unreachable after the retries, or its answer is not a completion.
        """
        messages = self._messages(question, response_type, accepted, reply)
        try:
            async with self._client() as client:
                return self._verdict((await client.complete(messages)).content)
        except EndpointError as exc:
            raise self._failed(exc) from None

    def verdict_sync(self, question: str, response_type: ResponseType | str, accepted: Sequence[str],
                     reply: str) -> JudgeVerdict:
        """``verdict`` for callers without an event loop.

        Raises:
            JudgeError: as ``verdict``.
        """
        messages = self._messages(question, response_type, accepted, reply)
        try:
            with self._client() as client:
                return self._verdict(client.complete_sync(messages).content)
        except EndpointError as exc:
            raise self._failed(exc) from None


def judge_from_profile(profile: EndpointProfile) -> LLMJudge | None:
    """The judge of ``profile`` (``KopaSettings().models.judge``); None when it has no base URL (rules only).

    Raises:
        ValueError: a base URL without a model (the message names the setting).
    """
    if not profile.configured:
        return None
    return LLMJudge(profile.required("judge"))


# ------------------------------------------------------------------------------------------------ grading


def _needs_judge(task: Task, score: ResponseScore, reply: str | None, judge: LLMJudge | None) -> bool:
    if judge is None or not judge.enabled or not reply or not reply.strip():
        return False  # no judge, or nothing for it to read
    return task.response_type is ResponseType.JUDGE or not score.passed


def _judged(score: ResponseScore, verdict: JudgeVerdict) -> ResponseScore:
    if verdict.passed is None:
        detail = "the judge's reply has no VERDICT line; counted as a fail"
    else:
        detail = f"the judge {'accepted' if verdict.passed else 'rejected'} the answer"
    if score.method != "undecided":
        detail += f" (deterministic check: {score.method}: {score.detail})"
    return ResponseScore(passed=verdict.passed is True, method="judge", extracted=score.extracted, detail=detail,
                         judge_model=verdict.model, judge_verdict=verdict.raw)


async def grade_response(task: Task, reply: str | None, judge: LLMJudge | None = None) -> ResponseScore:
    """RESPONSE for one episode: the deterministic rules, then the judge where B.2 calls for it.

    Args:
        task: the task (its response type and accepted answers).
        reply: the model's final message; None when it gave none.
        judge: the judge; None or disabled keeps scoring deterministic.

    Raises:
        ValueError: the task has no response type.
        JudgeError: the judge was needed and could not be asked.
    """
    score = score_response(task, reply)
    if not _needs_judge(task, score, reply, judge):
        return score
    assert judge is not None and reply is not None
    return _judged(score, await judge.verdict(task.query, task.response_type or "", task.accepted_answers, reply))


def grade_response_sync(task: Task, reply: str | None, judge: LLMJudge | None = None) -> ResponseScore:
    """``grade_response`` for callers without an event loop.

    Raises:
        ValueError: the task has no response type.
        JudgeError: the judge was needed and could not be asked.
    """
    score = score_response(task, reply)
    if not _needs_judge(task, score, reply, judge):
        return score
    assert judge is not None and reply is not None
    return _judged(score, judge.verdict_sync(task.query, task.response_type or "", task.accepted_answers, reply))
