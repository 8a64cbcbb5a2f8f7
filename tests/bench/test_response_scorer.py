"""RESPONSE scoring (Appendix B.2): ANSWER/\\boxed extraction, normalization, the Table 26 number rule, the judge.

The judge tests talk HTTP to ``StandInJudge``: a small OpenAI-format server on a loopback port that
stands in for a hosted judge model. It is not a model: it answers PASS when a reference answer, with
whitespace and punctuation removed, appears in the reply, or whatever verdict a test scripts. It lets the
tests check the wire format, the fallback policy and what is recorded, not the quality of any judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from models.settings import JudgeProfile
from bench.scoring.judge import (
    JudgeError,
    JudgeVerdict,
    LLMJudge,
    grade_response,
    grade_response_sync,
    judge_from_profile,
    judge_messages,
    parse_verdict,
)
from bench.scoring.response import (
    ParsedNumber,
    ResponseScore,
    extract_answer,
    extract_boxed,
    normalize_string,
    numbers_match,
    parse_number,
    score_answer,
    score_response,
)
from bench.task import load_tasks
from sandbox.loopback import LoopbackServer, free_port

TASKS = {t.id: t for t in load_tasks(Path(__file__).parent / "data" / "tasks_small.jsonl")}
NUMBER_TASK, STRING_TASK, JUDGE_TASK = TASKS["fin-001"], TASKS["fin-002"], TASKS["law-001"]


# ------------------------------------------------------------------------------------------------ string


@pytest.mark.parametrize(("reply", "expected"), [
    ("조회 결과 회사는 라이트론입니다.\nANSWER: {라이트론}", "라이트론"),
    ("ANSWER: {서울특별시 중구}", "서울특별시 중구"),
    ("**ANSWER:** {부산}", "부산"),
    ("ANSWER: 대구광역시\n(참고: 2026년 기준)", "대구광역시"),  # no braces: the rest of the line
    ("ANSWER：｛인천｝", "인천"),  # full-width colon and braces
    ("ANSWER: {set {a} of b}", "set {a} of b"),  # nested braces
    ("처음엔 ANSWER: {광주}라고 했지만 다시 보니\nANSWER: {대전}", "대전"),  # the last one wins
    ("Answer: {울산}", "울산"),
    ("정답을 모르겠습니다.", None),
    ("ANSWER: {}", None),
    ("ANSWER: {   }", None),
    ("MYANSWER: {x}", None),  # part of a longer word is not the marker
])
def test_extract_answer_takes_the_last_answer_marker(reply, expected):
    assert extract_answer(reply) == expected


@pytest.mark.parametrize(("a", "b"), [
    ("서울특별시 중구", "서울특별시중구"),
    ("  라이트론 ( 주 ) ", "라이트론(주)"),
    ("「도로교통법」 제44조", "도로교통법 제44조"),
    ("Ｌｉｇｈｔｒｏｎ", "lightron"),  # NFKC and case folding
    ("1,234건", "1234건"),
    ("\"국회운영위원회\".", "국회운영위원회"),
])
def test_normalization_ignores_spacing_case_and_punctuation(a, b):
    assert normalize_string(a) == normalize_string(b)


def test_normalization_keeps_letters_digits_and_a_decimal_point():
    assert normalize_string("제 3.5 조, 서울!") == "제3.5조서울"
    assert normalize_string("3.5%") != normalize_string("35%")


def test_a_string_answer_passes_when_it_matches_any_accepted_value():
    assert score_answer("string", ["라이트론", "Lightron"], "ANSWER: {LIGHTRON}") == ResponseScore(
        passed=True, method="exact", extracted="LIGHTRON", matched="Lightron",
        detail="matches accepted answer 'Lightron' after normalization")
    assert score_response(STRING_TASK, "회사명은 다음과 같습니다. ANSWER: {라 이 트 론.}").passed


def test_a_wrong_string_answer_fails_with_what_was_compared():
    score = score_answer("string", ["라이트론", "Lightron"], "ANSWER: {라이트론스}")
    assert (score.passed, score.method, score.extracted) == (False, "exact", "라이트론스")
    assert score.detail == "normalized answer '라이트론스' matches none of ['라이트론', 'lightron']"


@pytest.mark.parametrize(("reply", "detail"), [
    ("라이트론입니다.", "no 'ANSWER: {…}' with content in the final reply"),
    ("", "the model gave no final reply"),
    (None, "the model gave no final reply"),
    ("ANSWER: {…?!}", "the answer '...?!' is empty once whitespace and punctuation are removed"),  # NFKC: … is ...
])
def test_a_missing_answer_is_a_no_answer_fail(reply, detail):
    score = score_answer("string", ["라이트론"], reply)
    assert (score.passed, score.method, score.detail) == (False, "no_answer", detail)


# ------------------------------------------------------------------------------------------------ number


@pytest.mark.parametrize(("content", "value", "decimals"), [
    ("42", "42", 0),
    ("1,234,567.50", "1234567.50", 2),
    ("-17.5", "-17.5", 1),
    ("\u22127", "-7", 0),  # the Unicode minus sign
    ("15%", "15", 0),
    (r"15\%", "15", 0),
    ("1.5e3", "1500", 0),  # precision as written in fixed point: to the unit
    ("2.5E-3", "0.0025", 4),
    ("1,680원", "1680", 0),
    ("약 215.79퍼센트", "215.79", 2),
    (r"42\text{ 명}", "42", 0),
    ("3 km", "3", 0),
    ("x = 12.5", "12.5", 1),
    (r"\$1,000", "1000", 0),
])
def test_number_literals_keep_their_written_precision(content, value, decimals):
    parsed = parse_number(content)
    assert parsed is not None and (parsed.value, parsed.decimals) == (Decimal(value), decimals)


@pytest.mark.parametrize(("content", "value"), [
    ("1/2", "0.5"),
    (r"\frac{1}{2}", "0.5"),
    (r"-\dfrac{3}{4}", "-0.75"),
    (r"\frac{\frac{1}{2}}{4}", "0.125"),
    ("2^10", "1024"),
    ("2^{10}", "1024"),
    (r"1.5 \times 10^{3}", "1500"),
    (r"\sqrt{16} + 1", "5"),
    (r"\sqrt[3]{27}", "3"),
    ("100 * (1680 - 532) / 532", "215.789473684211"),
    (r"\left(-5\right)", "-5"),
])
def test_expressions_are_evaluated_exactly(content, value):
    parsed = parse_number(content)
    assert parsed is not None and (parsed.value, parsed.decimals) == (Decimal(value), None)


@pytest.mark.parametrize("content", ["abc", "2pi", "3억", "1만 2천", "x+1", "", "1/0", "__import__('os')"])
def test_non_numbers_and_korean_magnitudes_are_not_read(content):
    assert parse_number(content) is None  # 3억 is 300,000,000, never 3: a magnitude is not a unit


def _match(golden: str, content: str) -> bool:
    parsed = parse_number(content)
    assert parsed is not None
    return numbers_match(golden, parsed)


@pytest.mark.parametrize(("golden", "content", "expected"), [
    ("3.14", "3.14159", True),  # Table 26's example: the golden is the shorter decimal
    ("3.14159", "3.14", True),  # and the other way round
    ("3.14", "3.1", True),  # 3.14 rounds to 3.1
    ("3.14", "3.15", False),
    ("3.14", "3.146", False),  # 3.146 rounds to 3.15
    ("2.345", "2.35", True),  # half rounds away from zero
    ("-2.345", "-2.35", True),
    ("-2.345", "-2.34", False),
    ("215.79", "100 * (1680 - 532) / 532", True),  # an expression is rounded to the golden's places
    ("215.78", "100 * (1680 - 532) / 532", False),  # truncation is not rounding
    ("0.5", "1/2", True),
    ("1024", "2^10", True),
    ("1500", r"1.5 \times 10^{3}", True),
    ("1500", "1.5e3", True),
    ("5", "5.0", True),
    ("5", "5.4", False),  # an integer on either side: the values must be equal
    ("216", "215.79", False),
    ("215.8", "216", False),
    ("1234567", "1,234,567", True),
    ("-17", "-17", True),
    ("-17", "17", False),
    ("15", "15%", True),
    ("0.15", "15%", False),  # % is a unit sign, not a division by 100
    ("0.0025", "2.5e-3", True),
    ("1000000000000", "1000000000001", False),  # literals compare exactly, at any size
    ("1.5", "1" + "0" * 40 + ".25", False),  # rounding a 41-digit value needs more than the default precision
    ("1" + "0" * 40 + ".3", "1" + "0" * 40 + ".25", True),
    ("1.5", "10^999", False),  # a huge computed value is compared, not rounded
    ("1.5", "1e999999", False),
])
def test_the_shorter_decimal_sets_the_precision(golden, content, expected):
    assert _match(golden, content) is expected


def test_a_golden_that_is_not_a_decimal_literal_is_a_data_error():
    with pytest.raises(ValueError, match="golden number '1,000' is not a decimal literal"):
        numbers_match("1,000", ParsedNumber(Decimal(1000), 0, "1000"))


def test_a_boxed_number_passes_against_any_accepted_value():
    reply = r"어제 종가 1,680원, 하한가 532원이므로 \boxed{\frac{100 \times (1680 - 532)}{532}}"
    assert score_answer("number", ["215.79", "2.1579"], reply) == ResponseScore(
        passed=True, method="numeric", extracted=r"\frac{100 \times (1680 - 532)}{532}", matched="215.79",
        detail="((100*(1680-532))/(532)) = 215.789473684211 equals 215.79 at the shorter precision")
    assert score_response(NUMBER_TASK, "답: \\boxed{215.8}").passed


def test_the_last_boxed_value_counts():
    assert extract_boxed(r"먼저 \boxed{100}을 구하고 최종 답은 \boxed{{215.79}} 입니다") == "{215.79}"
    assert extract_boxed(r"\boxed{1} 그리고 \boxed{2") == "1"  # an unclosed box is skipped
    assert score_answer("number", ["215.79"], r"\boxed{215.79} 아니 \boxed{216}").passed is False


@pytest.mark.parametrize(("reply", "detail"), [
    ("답은 215.79입니다", "no \\boxed{…} with content in the final reply"),
    ("ANSWER: {215.79}", "no \\boxed{…} with content in the final reply"),
    (r"\boxed{}", "no \\boxed{…} with content in the final reply"),
    (r"\boxed{약 3억}", "\\boxed{약 3억} is neither a number nor a computable expression"),
])
def test_a_number_reply_without_a_readable_box_is_a_no_answer_fail(reply, detail):
    score = score_answer("number", ["215.79"], reply)
    assert (score.passed, score.method, score.detail) == (False, "no_answer", detail)


def test_a_judge_type_answer_without_the_judge_passes_only_verbatim():
    reference = JUDGE_TASK.accepted_answers[0]
    verbatim = score_response(JUDGE_TASK, f"ANSWER: {{{reference}}}")
    assert (verbatim.passed, verbatim.method) == (True, "exact")
    paraphrase = score_response(JUDGE_TASK, "ANSWER: {음주 운전을 금지합니다}")
    assert (paraphrase.passed, paraphrase.method) == (False, "undecided")
    assert score_response(JUDGE_TASK, "음주 운전 금지").method == "no_answer"


def test_a_task_without_response_scoring_is_refused():
    env_only = STRING_TASK.model_copy(update={"response_type": None})
    with pytest.raises(ValueError, match="task 'fin-002' has no response_type"):
        score_response(env_only, "ANSWER: {x}")


# ------------------------------------------------------------------------------------------------ judge


class StandInJudge:
    """A loopback HTTP server in the OpenAI chat-completions format, standing in for a hosted judge model."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.script: list[tuple[int, str]] = []  # (status, content) answered first, in order
        app = Starlette(routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])])
        self.server = LoopbackServer(app)

    @property
    def base_url(self) -> str:
        return f"{self.server.origin}/v1"

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.script:
            status, content = self.script.pop(0)
            if status != 200:
                return JSONResponse({"error": {"message": content}}, status_code=status)
        else:
            user = body["messages"][-1]["content"]
            references = re.search(r"<reference_answers>\n(.*?)\n</reference_answers>", user, re.S).group(1)
            reply = re.search(r"<assistant_reply>\n(.*)\n</assistant_reply>", user, re.S).group(1)
            found = any(normalize_string(r[2:]) in normalize_string(reply) for r in references.splitlines())
            content = f"참조 답이 {'들어 있다' if found else '없다'}.\nVERDICT: {'PASS' if found else 'FAIL'}"
        return JSONResponse({"id": "chatcmpl-standin", "object": "chat.completion", "model": body["model"],
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": content}}]})


@pytest.fixture(scope="module")
def standin() -> Iterator[StandInJudge]:
    judge = StandInJudge()
    with judge.server:
        yield judge


@pytest.fixture
def judge(standin: StandInJudge) -> LLMJudge:
    standin.requests.clear()
    standin.headers.clear()
    standin.script.clear()
    return LLMJudge(JudgeProfile(base_url=standin.base_url, model="judge-standin", api_key="sk-test"))


async def test_the_judge_is_off_by_default_and_never_called(standin, judge):
    off = judge_from_profile(JudgeProfile(model="judge-standin"))  # no base URL: no judge
    score = await grade_response(STRING_TASK, "ANSWER: {라이트론 주식회사}", off)
    assert (score.passed, score.method, score.judge_model) == (False, "exact", None)
    assert await grade_response(STRING_TASK, "ANSWER: {라이트론 주식회사}") == score
    assert standin.requests == []


async def test_a_deterministic_pass_needs_no_judge(standin, judge):
    score = await grade_response(NUMBER_TASK, r"\boxed{215.79}", judge)
    assert (score.passed, score.method) == (True, "numeric")
    assert standin.requests == []


async def test_an_unmatched_string_falls_back_to_the_judge_and_is_recorded(standin, judge):
    score = await grade_response(STRING_TASK, "ANSWER: {라이트론 주식회사}", judge)
    assert score == ResponseScore(
        passed=True, method="judge", extracted="라이트론 주식회사", judge_model="judge-standin",
        judge_verdict="참조 답이 들어 있다.\nVERDICT: PASS",
        detail="the judge accepted the answer (deterministic check: exact: normalized answer '라이트론주식회사' "
               "matches none of ['라이트론', 'lightron'])")
    [request] = standin.requests
    assert request["model"] == "judge-standin" and request["temperature"] == 0 and request["seed"] == 0
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert STRING_TASK.query in request["messages"][1]["content"]
    assert "- 라이트론\n- Lightron" in request["messages"][1]["content"]
    assert standin.headers[0]["authorization"] == "Bearer sk-test"


async def test_a_number_without_a_box_goes_to_the_judge_with_the_number_rules(standin, judge):
    standin.script.append((200, "1,680과 532로 계산하면 215.79%이다.\nVERDICT: PASS"))
    score = await grade_response(NUMBER_TASK, "어제 종가는 하한가보다 약 215.79% 높습니다.", judge)
    assert (score.passed, score.method, score.extracted) == (True, "judge", None)
    assert "decimal places" in standin.requests[0]["messages"][0]["content"]


async def test_a_judge_type_answer_always_goes_to_the_judge(standin, judge):
    reference = JUDGE_TASK.accepted_answers[0]
    score = await grade_response(JUDGE_TASK, f"ANSWER: {{{reference}}}", judge)
    assert (score.passed, score.method) == (True, "judge")
    assert len(standin.requests) == 1  # even a verbatim answer: judge-type tasks rely on the judge alone
    standin.script.append((200, "요지가 다르다.\nVERDICT: FAIL"))
    rejected = await grade_response(JUDGE_TASK, "ANSWER: {과속을 금지한다}", judge)
    assert (rejected.passed, rejected.method, rejected.judge_verdict) == (False, "judge",
                                                                          "요지가 다르다.\nVERDICT: FAIL")
    assert rejected.detail == "the judge rejected the answer"


async def test_a_judge_reply_without_a_verdict_counts_as_a_fail(standin, judge):
    standin.script.append((200, "잘 모르겠습니다."))
    score = await grade_response(STRING_TASK, "ANSWER: {엘티}", judge)
    assert (score.passed, score.method, score.judge_verdict) == (False, "judge", "잘 모르겠습니다.")
    assert score.detail.startswith("the judge's reply has no VERDICT line; counted as a fail")


async def test_an_empty_reply_is_not_sent_to_the_judge(standin, judge):
    score = await grade_response(JUDGE_TASK, "", judge)
    assert (score.passed, score.method) == (False, "no_answer")
    assert standin.requests == []


async def test_a_server_error_is_retried_then_raised(standin, judge):
    standin.script.extend([(503, "overloaded"), (200, "VERDICT: PASS")])
    assert (await grade_response(STRING_TASK, "ANSWER: {엘티}", judge)).passed  # one retry by default
    standin.script.extend([(500, "boom"), (500, "boom again")])
    with pytest.raises(JudgeError, match=r"answered HTTP 500: .*boom again"):
        await grade_response(STRING_TASK, "ANSWER: {엘티}", judge)
    standin.script.append((400, "bad model"))
    with pytest.raises(JudgeError, match="answered HTTP 400"):  # a client error is not retried
        await grade_response(STRING_TASK, "ANSWER: {엘티}", judge)
    assert len(standin.requests) == 5


async def test_an_unreachable_judge_raises_a_judge_error():
    judge = LLMJudge(JudgeProfile(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", timeout_s=5))
    with pytest.raises(JudgeError, match="is unreachable"):
        await grade_response(STRING_TASK, "ANSWER: {엘티}", judge)


def test_the_sync_path_gives_the_same_score(standin, judge):
    score = grade_response_sync(STRING_TASK, "ANSWER: {라이트론 주식회사}", judge)
    assert (score.passed, score.method, score.judge_model) == (True, "judge", "judge-standin")
    assert judge.verdict_sync("질문", "string", ["가"], "가") == JudgeVerdict(
        passed=True, model="judge-standin", raw="참조 답이 들어 있다.\nVERDICT: PASS")


def test_a_disabled_judge_refuses_to_be_asked():
    with pytest.raises(JudgeError, match="the judge is disabled"):
        LLMJudge(JudgeProfile()).verdict_sync("q", "string", ["a"], "a")


@pytest.mark.parametrize(("text", "expected"), [
    ("생각해 보면...\nVERDICT: PASS", True),
    ("VERDICT: FAIL", False),
    ("verdict: **pass**", True),
    ("처음엔 VERDICT: PASS 같았지만\nVERDICT: FAIL", False),  # the last verdict counts
    ("Decision: ACCEPT", None),
    ("", None),
])
def test_parse_verdict(text, expected):
    assert parse_verdict(text) is expected


def test_a_long_reply_reaches_the_judge_by_its_tail():
    reply = "가" * 10_000 + "ANSWER: {끝}"
    user = judge_messages("질문", "judge", ["끝"], reply, max_reply_chars=100)[1]["content"]
    assert "ANSWER: {끝}" in user and user.count("가") == 100 - len("ANSWER: {끝}")


def test_the_judge_comes_from_its_profile_and_names_what_is_missing():
    judge = judge_from_profile(JudgeProfile(base_url="http://127.0.0.1:8000/v1", model="qwen", api_key="sk-secret"))
    assert (judge.enabled, judge.model) == (True, "qwen")
    assert "sk-secret" not in repr(judge.profile)
    assert judge_from_profile(JudgeProfile()) is None
    with pytest.raises(ValueError, match=r"judge model endpoint needs model: set KOPA_MODELS__JUDGE__MODEL"):
        judge_from_profile(JudgeProfile(base_url="http://x/v1"))
