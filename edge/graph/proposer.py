"""Rule-based binding proposer: Phase A's per-edge judgment without a model (paper §3.2, Eq. 1).

    proposal = RuleProposer().propose(catalog.get("find_dart_corp_code"), catalog.get("get_dart_company_overview"))
    proposal.bound        # {"corp_code": "corp_code"}
    proposal.feasibility  # s_e, anchors the edge's Beta prior

For a candidate edge u → v the paper asks one LLM call for a feasibility s_e, a binding B_e (parameter of v →
output field of u) and candidates D_e for what stays unbound. This module answers the same deterministically,
so Phase A runs offline; an LLM proposer can replace it behind the same ``propose`` signature.

Pair score of an output field f of u and a non-generic parameter p of v (generic ones are the runtime's):
  0 when f's type cannot carry p's value (string → string; integer/number → integer/number/string; boolean →
  boolean/string; a string feeds a number only when both carry a year/date format hint), or when both carry a
  value-format hint and the hints disagree, or when both give an example and one is all digits and the other
  is not ('예: 22' vs '예: 제22대'); otherwise
  0.55·name + 0.35·desc + 0.10·hint, where
    name = 1 for equal names (case-insensitive) or a parameter whose description names the field (its head, up
           to the first bracket or punctuation, is the field's name or its description's head: ``ID`` described
           '판례일련번호' is the field 판례일련번호, not the field ``id`` described '결과 내 순번'), 0.9 where
           the parameter's bracketed explanation ends with the field's description ('제안자(대표발의자 이름)'
           takes a field described '이름'), 0.9 for equal name tokens after splitting snake/camel/UPPER case
           with cd=code, nm=name, dt/de/ymd=date, yy/yr=year (``sigunCd`` ~ ``SIGUN_CD``), else 0.8 × Jaccard
           of the name tokens;
    desc = Dice overlap of the Hangul character 2/3-grams of the two descriptions (examples stripped;
           the shared ``public_apis.ngrams`` analyser and measure);
    hint = 1 when both carry the same hint.
  Hints, first match wins. In the whole description: date_iso (YYYY-MM-DD), date8 (YYYYMMDD, 8자리 날짜),
  date (연월일), yearmonth (YYYYMM, 연월), year (YYYY, 연도/년도), corp8 (고유번호), stock6 (종목코드, 단축코드);
  in its head (up to the first bracket or punctuation): date (일자, 날짜), code (코드), name (…명, 명칭, 이름);
  else from the name's tokens (date, year, code, name). A bare 'date' agrees with date8 and date_iso.
Binding: pairs by (-score, param, field); each required parameter takes its best field scoring ≥ ``bind_min``
  (0.3).
  An optional parameter, or one with an enum, is bound only on a strong match (equal names or name tokens):
  an optional filter bound on weak evidence narrows the call to nothing, and an enum is a surer source of
  valid values than a merely similar field. Equal names are not a strong match where the two descriptions say
  different things (no shared n-gram) and do not both call the value a name: a committee's ``HG_NM``
  '위원장(정당)' holds '차건미 (더불어민주당)', which no member's ``HG_NM`` '의원 이름' equals, while 사업장명 and
  명칭 are both names. A field may feed several parameters.
Plan: one entry per non-generic parameter of v that is required or bound, in v's order. An unbound required
  parameter is CLARIFY with candidates: its default, then its enum, else the examples its description gives
  ('예: 005930', '예: 11 서울, 26 부산' → 11, 26), else a code list ('(B10 서울, C10 부산)') or Y/N. DEFAULT
  (Eq. 1's static lookup) is for generic parameters, which the runtime fills: rule plans never contain it.
Feasibility: s_e = quality × (0.3 + 0.7 × coverage), quality = mean score of the bound parameters, coverage =
  mean over required parameters of 1 (bound), 0.5 (CLARIFY with candidates), 0 (nothing to try); 1 when v has
  no required parameter. Monotone in both, in [0, 1]. No binding at all: ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from mcp_gateway.catalog.spec import FieldSpec, ParamSpec, ToolSpec
from public_apis.ngrams import Analyzer, dice

__all__ = ["BindingProposal", "ParamSource", "RuleProposer", "SourceKind", "candidates", "pair_score", "value_hint"]


class SourceKind(StrEnum):
    UPSTREAM = "upstream"
    DEFAULT = "default"
    CLARIFY = "clarify"


@dataclass(frozen=True)
class ParamSource:
    param: str
    kind: SourceKind
    field: str | None = None  # UPSTREAM: the output field of u
    candidates: tuple[str, ...] = ()  # CLARIFY: values to try


@dataclass(frozen=True)
class BindingProposal:
    source: str
    target: str
    feasibility: float  # s_e in [0, 1]
    plan: tuple[ParamSource, ...]  # one per non-generic parameter of v that is required or bound

    @property
    def bound(self) -> dict[str, str]:
        return {s.param: s.field for s in self.plan if s.kind is SourceKind.UPSTREAM and s.field is not None}


# --- value-format hints -----------------------------------------------------------------------------------

_FORMAT_HINTS = (  # searched in the whole description
    ("date_iso", re.compile(r"YYYY-MM-DD")),
    ("date8", re.compile(r"YYYYMMDD|8자리\s*날짜|날짜\s*8자리")),
    ("date", re.compile(r"[연년]월일")),  # 생년월일 is a date, not a year-month
    ("yearmonth", re.compile(r"YYYYMM|연월|년월")),
    ("year", re.compile(r"YYYY|연도|년도")),
    ("corp8", re.compile(r"고유번호")),
    ("stock6", re.compile(r"종목코드|단축코드")),
)
_NAME_WORD = re.compile(r"(?<![설증])명(?:칭)?(?:\s|$)|이름")
_WORD_HINTS = (  # searched in the head of the description (before the first bracket or punctuation)
    ("date", re.compile(r"일자|날짜")),
    ("code", re.compile(r"코드")),
    ("name", _NAME_WORD),
)
_TOKEN_HINTS = ("date", "year", "code", "name")  # a tuple: the first in this order wins, whatever the hash seed
_AGREE = {frozenset({"date", "date8"}), frozenset({"date", "date_iso"})}
_NUMERIC_HINTS = {"year", "yearmonth", "date8"}
_EXAMPLE = re.compile(r"예\s*[:：]\s*((?:[^()]|\([^()]*\))*)")


@lru_cache(maxsize=65536)  # pure, and called for every (field, parameter) pair of every edge
def value_hint(name: str, description: str) -> str | None:
    """The value format a field or parameter text announces, or None (see the module docstring)."""
    text = _EXAMPLE.sub("", description)
    for hint, pattern in _FORMAT_HINTS:
        if pattern.search(text):
            return hint
    head = re.split(r"[(\[,.:;]", text, maxsplit=1)[0]
    for hint, pattern in _WORD_HINTS:
        if pattern.search(head):
            return hint
    tokens = _name_tokens(name)
    return next((hint for hint in _TOKEN_HINTS if hint in tokens), None)


def _hints_agree(a: str, b: str) -> bool:
    return a == b or frozenset({a, b}) in _AGREE


@lru_cache(maxsize=65536)
def _example_kind(description: str) -> str | None:
    """'digits' or 'text' for the first example a description gives ('예: 22' vs '예: 제22대'), else None."""
    match = _EXAMPLE.search(description)
    values = _example_values(match.group(1)) if match else []
    return None if not values else "digits" if values[0].isdigit() else "text"


# --- text similarity --------------------------------------------------------------------------------------

_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SYNONYM = {"cd": "code", "nm": "name", "dt": "date", "de": "date", "ymd": "date", "yy": "year", "yr": "year"}
_HANGUL_WORD = re.compile(r"[\uac00-\ud7a3]+")


@lru_cache(maxsize=65536)
def _name_tokens(name: str) -> frozenset[str]:
    return frozenset(_SYNONYM.get(t.lower(), t.lower()) for t in _SPLIT.findall(name))


@lru_cache(maxsize=65536)  # pure; called for both sides of every (field, parameter) pair
def _head(description: str) -> str:
    return re.split(r"[(\[,.:;]", _EXAMPLE.sub("", description), maxsplit=1)[0].strip()


def _concept_score(field: FieldSpec, param: ParamSpec) -> float:
    """The name part of the pair score: equal names, or the parameter's description naming the field."""
    head = _head(param.description_ko)
    if head and head in (field.name, _head(field.description_ko)):
        return 1.0
    if _explains(param.description_ko, field.description_ko):
        return _STRONG_NAME
    return _name_score(field.name, param.name)


def _explains(param_description: str, field_description: str) -> bool:
    """The parameter's bracketed explanation ends with the field's whole description: '제안자(대표발의자 이름)'
    takes a member's ``HG_NM`` '이름' (searched as a part of '차건미의원 등 10인')."""
    word = _explained_word(param_description)
    return word is not None and word == field_description.strip()


@lru_cache(maxsize=65536)
def _explained_word(description: str) -> str | None:
    """The last word of a description's bracketed explanation of two words or more, else None."""
    explanation = re.search(r"\(([^()]*)\)", _EXAMPLE.sub("", description))
    words = explanation.group(1).split() if explanation else []
    return words[-1] if len(words) >= 2 else None


def _strong_name_score(field: FieldSpec, param: ParamSpec, concept: float, overlap: float) -> float:
    """The concept score, 0 where the names agree but the descriptions disagree (no shared n-gram, ``overlap`` 0,
    and not both names; see the module docstring)."""
    if concept < _STRONG_NAME or overlap > 0 or not field.description_ko or not param.description_ko:
        return concept
    return concept if _says_name(field.description_ko) and _says_name(param.description_ko) else 0.0


def _says_name(description: str) -> bool:
    """The description's head calls the value a name (…명, 명칭, 이름)."""
    return bool(_NAME_WORD.search(_head(description)))


def _name_score(a: str, b: str) -> float:
    if a.lower() == b.lower():
        return 1.0
    ta, tb = _name_tokens(a), _name_tokens(b)
    if not ta or not tb:
        return 0.0
    return 0.9 if ta == tb else 0.8 * len(ta & tb) / len(ta | tb)


_DESCRIPTION = Analyzer(sizes=(2, 3), word=_HANGUL_WORD, keep_short=True)  # Hangul words' 2/3-grams; '역' itself


@lru_cache(maxsize=65536)
def _ngrams(description: str) -> frozenset[str]:
    return _DESCRIPTION.gram_set(_EXAMPLE.sub("", description))


def _carries(field: FieldSpec, param: ParamSpec, field_hint: str | None, param_hint: str | None) -> bool:
    if field.type == param.type:
        return field.type not in ("array", "object")
    if field.type in ("integer", "number"):
        return param.type in ("integer", "number", "string")
    if field.type == "boolean":
        return param.type == "string"
    # a string feeds a number only where both sides say it is a year or a date
    return (field.type == "string" and param.type in ("integer", "number")
            and field_hint in _NUMERIC_HINTS and param_hint == field_hint)


def pair_score(field: FieldSpec, param: ParamSpec) -> float:
    """How well output ``field`` fills ``param``, in [0, 1]; 0 when types or value formats disagree."""
    return _scores(field, param)[0]


def _scores(field: FieldSpec, param: ParamSpec) -> tuple[float, float]:
    """(``pair_score``, the strong-name score an optional parameter is bound on), each part computed once."""
    field_hint, param_hint = value_hint(field.name, field.description_ko), value_hint(param.name, param.description_ko)
    if not _carries(field, param, field_hint, param_hint):
        return 0.0, 0.0
    if field_hint and param_hint and not _hints_agree(field_hint, param_hint):
        return 0.0, 0.0
    field_example, param_example = _example_kind(field.description_ko), _example_kind(param.description_ko)
    if field_example and param_example and field_example != param_example:
        return 0.0, 0.0  # the examples show different values: '제22대' does not fill a parameter that wants '22'
    same_hint = bool(field_hint and param_hint)
    concept = _concept_score(field, param)
    overlap = dice(_ngrams(field.description_ko), _ngrams(param.description_ko))
    score = round(min(0.55 * concept + 0.35 * overlap + 0.10 * same_hint, 1.0), 4)
    return score, _strong_name_score(field, param, concept, overlap)


# --- candidates for what stays unbound ---------------------------------------------------------------------

_CODE_ITEM = re.compile(r"(?:^|[(:,]\s*)([A-Z0-9]{1,8})\s+[\uac00-\ud7a3]")
_YES_NO = re.compile(r"(?<![A-Za-z])Y/N(?![A-Za-z])")
_CODE_TOKEN = re.compile(r"[A-Za-z0-9_.-]+")
_MAX_CANDIDATES = 20


def candidates(param: ParamSpec) -> tuple[str, ...]:
    """Values to try for ``param``: default, enum, else examples in its description, else a code list or Y/N."""
    values = [] if param.default is None else [str(param.default)]
    if param.enum:
        values.extend(param.enum)
    else:
        examples = [value for m in _EXAMPLE.finditer(param.description_ko) for value in _example_values(m.group(1))]
        if examples:
            values.extend(examples)
        elif len(codes := _CODE_ITEM.findall(param.description_ko)) >= 2:
            values.extend(codes)
        elif _YES_NO.search(param.description_ko):
            values.extend(("Y", "N"))
    return tuple(dict.fromkeys(values))[:_MAX_CANDIDATES]


def _example_values(text: str) -> list[str]:
    """'11 서울, 26 부산' → 11, 26 (a code before its label); '삼성전자' → itself; references are skipped."""
    values = []
    for piece in re.split(r"[,;，]", text):
        words = re.split(r"\s+|[=→]", piece.strip())
        words = [w for w in words if w]
        if not words or "..." in piece or "…" in piece:
            continue
        if _CODE_TOKEN.fullmatch(words[0]):
            values.append(words[0])
        elif len(words) <= 3:  # a value such as '대구 중구남구'; longer pieces are prose
            values.append(" ".join(words))
    return values


# --- the proposer --------------------------------------------------------------------------------------------

_STRONG_NAME = 0.9  # equal names or equal name tokens: enough to bind an optional parameter


class RuleProposer:
    """Deterministic binding proposals from names, Korean descriptions, types and value-format hints."""

    def __init__(self, *, bind_min: float = 0.3):
        self.bind_min = bind_min

    def propose(self, source: ToolSpec, target: ToolSpec) -> BindingProposal | None:
        params = [p for p in target.params if not p.is_generic]
        scored = sorted(((*_scores(f, p), p.name, f.name) for p in params for f in source.output),
                        key=lambda s: (-s[0], s[2], s[3]))
        by_name = {p.name: p for p in params}
        binding: dict[str, tuple[str, float]] = {}
        for score, name_score, param, field in scored:
            if param in binding or score < self.bind_min:
                continue
            spec = by_name[param]
            # an enum value must come from the same concept: else the enum itself is the better source
            if name_score >= _STRONG_NAME or (spec.required and not spec.enum):
                binding[param] = (field, score)
        if not binding:
            return None
        plan = []
        for p in params:
            if p.name in binding:
                plan.append(ParamSource(p.name, SourceKind.UPSTREAM, field=binding[p.name][0]))
            elif p.required:
                plan.append(ParamSource(p.name, SourceKind.CLARIFY, candidates=candidates(p)))
        return BindingProposal(source.name, target.name, _feasibility(plan, binding, params), tuple(plan))


def _feasibility(plan: list[ParamSource], binding: dict[str, tuple[str, float]], params: list[ParamSpec]) -> float:
    quality = sum(score for _, score in binding.values()) / len(binding)
    required = {p.name for p in params if p.required}
    if not required:
        return round(quality, 4)
    weight = {s.param: 1.0 if s.kind is SourceKind.UPSTREAM else 0.5 if s.candidates else 0.0 for s in plan}
    coverage = sum(weight[name] for name in required) / len(required)
    return round(min(1.0, quality * (0.3 + 0.7 * coverage)), 4)
