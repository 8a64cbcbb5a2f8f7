"""The LLM-judge fallback of RESPONSE scoring (Appendix B.2), through any OpenAI-compatible endpoint.

    from bench.scoring.judge import JudgeConfig, LLMJudge, grade_response
    judge = LLMJudge(JudgeConfig(enabled=True, base_url="http://127.0.0.1:8000/v1", model="qwen3.5-27b"))
    score = await grade_response(task, final_reply, judge)   # score.method == "judge" when it decided

The judge is off by default (``JudgeConfig()``, or ``JudgeConfig.from_env()`` without
``KOPA_JUDGE_ENABLED=1``): scoring is then fully deterministic and offline. When it is on:

* string and number answers that the deterministic rules do not pass — no readable answer, or no match —
  go to the judge ("unmatched/failed cases fall back to LLM-as-a-Judge");
* judge-type answers always go to the judge ("we rely solely on LLM-as-a-Judge").

Each judged score records the judge model and its raw reply. A judge reply without a verdict line
counts as a fail (the judge is a model and may ramble); an unreachable or failing endpoint raises
``JudgeError``, because silently failing every judged answer would corrupt a run's scores.

The request is ``POST {base_url}/chat/completions`` with ``base_url`` as the OpenAI clients take it
(ending in ``/v1``), temperature 0 and a fixed seed so a replayed run asks the same question the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from bench.task import ResponseType

from .response import ResponseScore, score_response

if TYPE_CHECKING:
    from bench.task import Task

__all__ = [
    "DEFAULT_MAX_REPLY_CHARS",
    "JudgeConfig",
    "JudgeError",
    "JudgeVerdict",
    "LLMJudge",
    "grade_response",
    "grade_response_sync",
    "judge_messages",
    "parse_verdict",
]

ENV_PREFIX = "KOPA_JUDGE_"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_TOKENS = 1024
DEFAULT_MAX_REPLY_CHARS = 8_000  # the tail of a long reply is kept: the final answer sits at the end


class JudgeError(RuntimeError):
    """The judge endpoint could not be reached or answered with something other than a chat completion."""


class JudgeConfig(BaseModel):
    """Where the judge lives. Off unless ``enabled``; then ``base_url`` and ``model`` are required."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(False, description="use the LLM judge at all; off: deterministic scoring only")
    base_url: str | None = Field(None, description="OpenAI-style base URL, e.g. http://127.0.0.1:8000/v1")
    model: str | None = Field(None, description="model name the endpoint serves")
    api_key: SecretStr | None = Field(None, description="bearer token, if the endpoint wants one")
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, description="per-request timeout")
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, ge=16, description="room for the judge's reasoning and verdict")
    seed: int | None = Field(0, description="sent as the request seed where the endpoint honours it")
    retries: int = Field(1, ge=0, description="extra attempts after a transport error or a 5xx reply")

    @model_validator(mode="after")
    def _complete_when_enabled(self) -> JudgeConfig:
        if self.enabled and not (self.base_url and self.model):
            missing = [name for name in ("base_url", "model") if not getattr(self, name)]
            raise ValueError(f"the judge is enabled but {' and '.join(missing)} is not set "
                             f"(env {', '.join(ENV_PREFIX + m.upper() for m in missing)})")
        return self

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> JudgeConfig:
        """Read ``KOPA_JUDGE_ENABLED`` (1/true/yes), ``_BASE_URL``, ``_MODEL``, ``_API_KEY``, ``_TIMEOUT_S``.

        Raises:
            pydantic.ValidationError: a value is malformed, or the judge is enabled without URL and model.
        """
        env = os.environ if env is None else env
        values: dict[str, Any] = {"enabled": env.get(ENV_PREFIX + "ENABLED", "").strip().lower() in {"1", "true", "yes"}}
        for key in ("base_url", "model", "api_key", "timeout_s"):
            if raw := env.get(ENV_PREFIX + key.upper(), "").strip():
                values[key] = raw
        return cls.model_validate(values)

    @property
    def url(self) -> str:
        return f"{(self.base_url or '').rstrip('/')}/chat/completions"


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
    """A judge behind an OpenAI-compatible chat endpoint."""

    def __init__(self, config: JudgeConfig, *, max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS):
        self.config = config
        self.max_reply_chars = max_reply_chars

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    def _request(self, question: str, response_type: ResponseType | str, accepted: Sequence[str],
                 reply: str) -> tuple[dict[str, str], dict[str, Any]]:
        headers = {"Content-Type": "application/json"}
        if self.config.api_key is not None:
            headers["Authorization"] = f"Bearer {self.config.api_key.get_secret_value()}"
        body: dict[str, Any] = {
            "model": self.config.model, "temperature": 0, "max_tokens": self.config.max_tokens,
            "messages": judge_messages(question, response_type, accepted, reply, self.max_reply_chars)}
        if self.config.seed is not None:
            body["seed"] = self.config.seed
        return headers, body

    def _verdict(self, response: httpx.Response) -> JudgeVerdict:
        if response.status_code != 200:
            raise JudgeError(f"the judge at {self.config.url} answered HTTP {response.status_code}: "
                             f"{response.text[:300]}")
        try:
            content = response.json()["choices"][0]["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise JudgeError(f"the judge at {self.config.url} did not answer with a chat completion "
                             f"(choices[0].message.content): {response.text[:300]}") from exc
        return JudgeVerdict(passed=parse_verdict(content), model=str(self.config.model), raw=content)

    def _check_enabled(self) -> None:
        if not self.config.enabled:
            raise JudgeError("the judge is disabled; enable it with JudgeConfig(enabled=True, base_url=…, model=…) "
                             f"or {ENV_PREFIX}ENABLED=1")

    async def verdict(self, question: str, response_type: ResponseType | str, accepted: Sequence[str],
                      reply: str) -> JudgeVerdict:
        """Ask the judge whether ``reply`` answers ``question`` as one of ``accepted``.

        Raises:
            JudgeError: the judge is disabled, unreachable after the retries, or its answer is not a completion.
        """
        self._check_enabled()
        headers, body = self._request(question, response_type, accepted, reply)
        async with httpx.AsyncClient(timeout=self.config.timeout_s) as client:
            for attempt in range(self.config.retries + 1):
                try:
                    response = await client.post(self.config.url, json=body, headers=headers)
                except httpx.HTTPError as exc:
                    if attempt == self.config.retries:
                        raise JudgeError(f"the judge at {self.config.url} is unreachable: {exc!r}") from exc
                    continue
                if response.status_code < 500 or attempt == self.config.retries:
                    return self._verdict(response)
        raise AssertionError("unreachable")  # the loop always returns or raises

    def verdict_sync(self, question: str, response_type: ResponseType | str, accepted: Sequence[str],
                     reply: str) -> JudgeVerdict:
        """``verdict`` for callers without an event loop.

        Raises:
            JudgeError: as ``verdict``.
        """
        self._check_enabled()
        headers, body = self._request(question, response_type, accepted, reply)
        with httpx.Client(timeout=self.config.timeout_s) as client:
            for attempt in range(self.config.retries + 1):
                try:
                    response = client.post(self.config.url, json=body, headers=headers)
                except httpx.HTTPError as exc:
                    if attempt == self.config.retries:
                        raise JudgeError(f"the judge at {self.config.url} is unreachable: {exc!r}") from exc
                    continue
                if response.status_code < 500 or attempt == self.config.retries:
                    return self._verdict(response)
        raise AssertionError("unreachable")


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
