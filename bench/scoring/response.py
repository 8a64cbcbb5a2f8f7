"""RESPONSE: does the model's final answer match the golden one? (paper Appendix B.2)

    from bench.scoring.response import score_response
    score = score_response(task, final_reply)     # deterministic; the LLM judge lives in judge.py
    score.passed, score.method, score.extracted   # True, "numeric", "215.79"

Three answer types, as the task's ``response_type`` says:

* **string** — the reply ends with ``ANSWER: {…}``. The last ``ANSWER:`` wins; the braces are optional
  (without them the rest of that line is the answer). Answer and accepted values are normalized — NFKC,
  case-folded, whitespace and punctuation/symbols removed (B.2: "removing whitespace and special
  characters") — and the answer passes when it equals any accepted value.
* **number** — the reply puts the value in ``\\boxed{…}`` (the last one; nested braces are fine). Commas
  are dropped, a unit or percent sign around the number is dropped ("missing units can be ignored"),
  LaTeX forms (``\\frac``, ``\\sqrt``, ``\\times``, ``^{…}``) become arithmetic, and the text is read as a
  decimal literal or else evaluated exactly with sympy (``mcp_gateway``'s safe expression evaluator, no
  ``eval``). The comparison is Table 26's decimal rule, made deterministic in ``numbers_match``.
* **judge** — open-ended; only the LLM judge can grade it. Without the judge an answer that equals the
  reference after normalization still passes (the rule-based offline default); anything else is
  ``undecided`` and fails.

A reply without a readable answer fails with method ``no_answer``; nothing here raises on model output.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from bench.task import NUMBER_LITERAL, ResponseType
from mcp_gateway.runtime import ExpressionError, evaluate_expression

if TYPE_CHECKING:
    from bench.task import Task

__all__ = [
    "ParsedNumber",
    "ResponseMethod",
    "ResponseScore",
    "extract_answer",
    "extract_boxed",
    "normalize_string",
    "numbers_match",
    "parse_number",
    "score_answer",
    "score_response",
]

ResponseMethod = Literal["exact", "numeric", "judge", "no_answer", "undecided"]


class ResponseScore(BaseModel):
    """The RESPONSE verdict of one episode, with how it was reached."""

    model_config = ConfigDict(frozen=True)

    passed: bool
    method: ResponseMethod = Field(description=(
        "exact: normalized string match; numeric: \\boxed number compared; judge: the LLM judge decided; "
        "no_answer: no ANSWER/\\boxed could be read; undecided: a judge-type answer with the judge off"))
    extracted: str | None = Field(None, description="the answer as read from the reply (NFKC, not yet normalized)")
    matched: str | None = Field(None, description="the accepted answer it matched")
    detail: str = Field("", description="why it passed or failed, in words")
    judge_model: str | None = Field(None, description="the judge model, when the judge decided")
    judge_verdict: str | None = Field(None, description="the judge's raw reply, when the judge decided")


# ------------------------------------------------------------------------------------------------ string

_ANSWER = re.compile(r"(?<![A-Za-z])ANSWER\s*:", re.IGNORECASE)
_DIGIT_DOT = re.compile(r"(?<=\d)\.(?=\d)")
_KEEP_DOT = "\u0000"  # stands for a decimal point while punctuation is removed


def _balanced(text: str, open_at: int) -> str | None:
    """The text inside the brace group opening at ``open_at``; None when it never closes."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:i]
    return None


def extract_answer(reply: str) -> str | None:
    """The content of the last ``ANSWER: {…}`` in ``reply``; None when there is none or it is empty.

    Braces are optional: ``ANSWER: 서울`` gives the rest of that line. Markdown bold around the marker
    and full-width ``：｛｝`` are accepted.
    """
    text = unicodedata.normalize("NFKC", reply)
    markers = list(_ANSWER.finditer(text))
    if not markers:
        return None
    rest = text[markers[-1].end():].lstrip(" \t*")
    rest = rest.lstrip() if rest.lstrip().startswith("{") else rest
    if rest.startswith("{"):
        inside = _balanced(rest, 0)
        content = inside if inside is not None else rest[1:]
    else:
        content = rest.split("\n", 1)[0]
    content = content.strip().strip("*").strip()
    return content or None


def normalize_string(text: str) -> str:
    """NFKC, case-folded, with whitespace, punctuation and symbols removed (B.2).

    A point between two digits is kept, so ``3.5`` and ``35`` stay different; a comma between digits goes
    (``1,234`` equals ``1234``).
    """
    text = _DIGIT_DOT.sub(_KEEP_DOT, unicodedata.normalize("NFKC", text).casefold())
    kept = "".join(ch for ch in text if ch == _KEEP_DOT or unicodedata.category(ch)[0] not in "PSZC")
    return kept.replace(_KEEP_DOT, ".")


# ------------------------------------------------------------------------------------------------ number

_BOXED = re.compile(r"\\boxed\s*\{")
_LATEX_DROP = re.compile(r"\\(?:left|right|displaystyle|[,;:! ])|\$|~")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_WRAPPERS = {"text", "mathrm", "textbf", "mathbf", "operatorname", "mbox"}  # \text{원}: the content stays
_LATEX_WORDS = {r"\times": "*", r"\cdot": "*", r"\div": "/", r"\pi": "pi", r"\ln": "ln", r"\log": "log",
                r"\exp": "exp", r"\%": "%", r"\approx": "="}
_CHAR_MAP = str.maketrans({"\u2212": "-", "\u2013": "-", "\u00d7": "*", "\u00f7": "/", "\u00b7": "*",
                           "\u2248": "=", "\u20a9": "", "\uffe6": "", "$": "", "\u20ac": "", "\u00a5": ""})
_MAGNITUDE = re.compile(r"[십백천만억조]")  # Korean magnitude words change the value: never dropped as a unit
_HANGUL_EDGE = re.compile(r"^[\uac00-\ud7a3]+|[\uac00-\ud7a3]+$")
_UNIT_SUFFIX = re.compile(r"(?:%p|%|퍼센트|포인트)$")
_ASCII_UNIT = re.compile(r"(?<=[0-9)])(?:km|cm|mm|kg|m|g|won|krw|usd)$", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedNumber:
    """A number read from an answer. ``decimals`` is its written precision; None: an exact computed value."""

    value: Decimal
    decimals: int | None
    text: str  # the form that was parsed or evaluated


def extract_boxed(reply: str) -> str | None:
    """The content of the last complete ``\\boxed{…}`` in ``reply`` (nested braces allowed); None if none."""
    for match in reversed(list(_BOXED.finditer(reply))):
        inside = _balanced(reply, match.end() - 1)
        if inside is not None:
            return inside.strip() or None
    return None


def _group(text: str, at: int) -> tuple[str, int] | None:
    """The brace group starting at or after ``at`` (spaces skipped): its content and the index after it."""
    while at < len(text) and text[at] == " ":
        at += 1
    if at >= len(text) or text[at] != "{":
        return None
    inside = _balanced(text, at)
    return None if inside is None else (inside, at + len(inside) + 2)


def _latex_to_expression(text: str) -> str:
    """LaTeX arithmetic as plain arithmetic: \\frac{a}{b}, \\sqrt[n]{a}, \\text{…}, ^{…}, \\times, \\pi …"""
    for word, replacement in _LATEX_WORDS.items():
        text = re.sub(re.escape(word) + r"(?![A-Za-z])", replacement, text)
    out: list[str] = []
    i = 0
    while i < len(text):
        command = _COMMAND.match(text, i)
        name, after = (command.group(1), command.end()) if command else (None, i + 1)
        if name in ("frac", "dfrac", "tfrac") and (num := _group(text, after)) and (
                den := _group(text, num[1])):
            out.append(f"(({_latex_to_expression(num[0])})/({_latex_to_expression(den[0])}))")
            i = den[1]
        elif name == "sqrt":
            index = re.match(r"\s*\[([^\]]*)\]", text[after:])
            at = after + (index.end() if index else 0)
            if (arg := _group(text, at)) is None:
                out.append(text[i:at])
                i = at
                continue
            inner = _latex_to_expression(arg[0])
            out.append(f"(({inner})**(1/({index.group(1)})))" if index else f"sqrt({inner})")
            i = arg[1]
        elif name in _WRAPPERS and (arg := _group(text, after)):
            out.append(_latex_to_expression(arg[0]))
            i = arg[1]
        elif text[i] == "^" and (arg := _group(text, i + 1)):
            out.append(f"**({_latex_to_expression(arg[0])})")
            i = arg[1]
        else:
            out.append(text[i])
            i += 1
    return "".join(out).replace("{", "(").replace("}", ")")


def _literal(text: str) -> ParsedNumber | None:
    if not NUMBER_LITERAL.match(text):
        return None
    value = Decimal(text)
    exponent = value.as_tuple().exponent
    return ParsedNumber(value, max(0, -exponent) if isinstance(exponent, int) else 0, text)


def _evaluated(text: str) -> ParsedNumber | None:
    try:
        result = evaluate_expression(text)
        return ParsedNumber(Decimal(result), None, text)
    except (ExpressionError, InvalidOperation):
        return None  # not a number, a symbolic result, or not computable


def parse_number(content: str) -> ParsedNumber | None:
    """Read a ``\\boxed{…}`` content as a number; None when it is neither a number nor a computable expression.

    Drops commas, spaces, ``$``, currency signs and a unit or percent sign at either end (a Korean unit
    word such as ``원`` or ``명`` too, unless it is a magnitude such as ``만``/``억``, which changes the
    value); takes the right-hand side of ``x = …``; turns LaTeX into arithmetic; then reads a decimal
    literal (keeping its written precision) or evaluates the expression exactly.
    """
    text = unicodedata.normalize("NFKC", content).replace("\\$", "").translate(_CHAR_MAP)
    text = _LATEX_DROP.sub(" ", text)
    text = _latex_to_expression(text)
    text = text.rsplit("=", 1)[-1]
    text = re.sub(r"\s+", "", text.replace(",", ""))
    text = _UNIT_SUFFIX.sub("", text)
    for edge in _HANGUL_EDGE.findall(text):
        if _MAGNITUDE.search(edge):
            return None
    text = _UNIT_SUFFIX.sub("", _HANGUL_EDGE.sub("", text))
    if not text:
        return None
    parsed = _literal(text) or _evaluated(text)
    if parsed is None and (without_unit := _ASCII_UNIT.sub("", text)) != text:
        parsed = _literal(without_unit) or _evaluated(without_unit)
    return parsed


MAX_MAGNITUDE_DIGITS = 1_000  # beyond this, values are compared as they are (rounding would need huge precision)


def _round(value: Decimal, decimals: int) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = max(28, value.adjusted() + decimals + 2)  # enough digits that quantize never overflows
        return value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def _close(a: Decimal, b: Decimal) -> bool:
    # Exact comparison, forgiving only the last digits of a 15-significant-digit evaluation.
    return abs(a - b) <= Decimal("1e-12") * max(Decimal(1), abs(a), abs(b))


def numbers_match(golden: str, predicted: ParsedNumber) -> bool:
    """Table 26's rule: the shorter decimal sets the precision, and the longer one must round to it.

    Deterministic reading: when both numbers are written with a fractional part, both are rounded
    (half away from zero) to the fewer decimal places and compared (3.14 vs 3.14159 → equal at 2 places,
    either way round). A computed expression has exact precision, so it is rounded to the golden's places.
    When either is written as an integer, the values must be equal (a count of 5 is not 5.4, and 216 is
    not 215.79): the rule speaks of comparing decimals.
    """
    gold = _literal(golden.strip())
    if gold is None:
        raise ValueError(f"golden number {golden!r} is not a decimal literal")
    if max(gold.value.adjusted(), predicted.value.adjusted()) > MAX_MAGNITUDE_DIGITS:
        return gold.value == predicted.value
    if predicted.decimals is None:
        return _close(_round(predicted.value, gold.decimals), gold.value) if gold.decimals else _close(
            predicted.value, gold.value)
    assert gold.decimals is not None
    if gold.decimals == 0 or predicted.decimals == 0:
        return gold.value == predicted.value  # two literals: exactly equal (5 == 5.0)
    places = min(gold.decimals, predicted.decimals)
    return _round(gold.value, places) == _round(predicted.value, places)


# ------------------------------------------------------------------------------------------------ scoring


def _no_answer(detail: str, extracted: str | None = None) -> ResponseScore:
    return ResponseScore(passed=False, method="no_answer", extracted=extracted, detail=detail)


def _string_match(answer: str, accepted: Sequence[str]) -> str | None:
    normalized = normalize_string(answer)
    return next((a for a in accepted if normalize_string(a) == normalized), None) if normalized else None


def score_answer(response_type: ResponseType | str, accepted: Sequence[str], reply: str | None) -> ResponseScore:
    """Score a final reply against accepted answers, deterministically.

    Args:
        response_type: string, number or judge.
        accepted: the task's accepted answers (for number: decimal literals).
        reply: the model's final message; None or empty when it gave none.

    Raises:
        ValueError: ``response_type`` is unknown, or a golden number is not a decimal literal (task data).
    """
    kind = ResponseType(response_type)
    if not reply or not reply.strip():
        return _no_answer("the model gave no final reply")
    if kind is ResponseType.NUMBER:
        return _score_number(accepted, reply)
    answer = extract_answer(reply)
    if answer is None:
        return _no_answer("no 'ANSWER: {…}' with content in the final reply")
    if not normalize_string(answer):
        return _no_answer(f"the answer {answer!r} is empty once whitespace and punctuation are removed", answer)
    matched = _string_match(answer, accepted)
    if matched is not None:
        return ResponseScore(passed=True, method="exact", extracted=answer, matched=matched,
                             detail=f"matches accepted answer {matched!r} after normalization")
    if kind is ResponseType.JUDGE:
        return ResponseScore(passed=False, method="undecided", extracted=answer,
                             detail="an open-ended answer that is not the reference verbatim needs the LLM judge, "
                                    "which is off")
    return ResponseScore(passed=False, method="exact", extracted=answer,
                         detail=f"normalized answer {normalize_string(answer)!r} matches none of "
                                f"{[normalize_string(a) for a in accepted]}")


def _score_number(accepted: Sequence[str], reply: str) -> ResponseScore:
    content = extract_boxed(reply)
    if content is None:
        return _no_answer("no \\boxed{…} with content in the final reply")
    parsed = parse_number(content)
    if parsed is None:
        return _no_answer(f"\\boxed{{{content}}} is neither a number nor a computable expression", content)
    shown = str(parsed.value) if parsed.decimals is not None else f"{parsed.text} = {parsed.value}"
    for golden in accepted:
        if numbers_match(golden, parsed):
            return ResponseScore(passed=True, method="numeric", extracted=content, matched=golden,
                                 detail=f"{shown} equals {golden} at the shorter precision")
    return ResponseScore(passed=False, method="numeric", extracted=content,
                         detail=f"{shown} equals none of {list(accepted)}")


def score_response(task: Task, reply: str | None) -> ResponseScore:
    """Score the final reply of an episode of ``task`` (deterministic part of B.2; see judge.py for the rest).

    Raises:
        ValueError: the task has no response type (RESPONSE is not in its reward basis).
    """
    if task.response_type is None:
        raise ValueError(f"task {task.id!r} has no response_type: RESPONSE is not part of its reward basis")
    return score_answer(task.response_type, task.accepted_answers, reply)
