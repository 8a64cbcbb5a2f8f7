"""What a user can say for a parameter and its value (paper Appendix J, Tables 18-21).

    label(p.description_ko)            # '휴게소명' for '휴게소명(예: 만남의광장(부산)휴게소), 완전일치'
    code_table(p.description_ko)       # {'01': '영업/정상', '02': '휴업', '03': '폐업'} for '영업상태코드(01 영업/정상, …)'
    spoken_code(p, "03")               # ('영업상태', '폐업'): a code said in words, from the catalog's code table
    yes_no_flag("분교 여부(Y/N)", "N")   # ('분교', False): said as what it asks ('분교에 해당하지 않는'), not as N
    spoken_number("대수(예: 22 = 제22대 국회)", 21)   # '제21대 국회': a number said as its example says it
    position_field("표시 순서")          # True: a place in the list, said as 맨 앞 / 맨 뒤, never as a threshold
    compass("위도(WGS84)")              # {'max': '가장 북쪽에 있는', 'min': '가장 남쪽에 있는'}: never a threshold
    opaque(p, "PRC_C5J6O9N9…")         # True: an identifier no user knows (a bill id, a rest-area code, an ISIN)
    world_name(spec, "SIGUN_CD", "41130", records)   # ('시군명', '성남시'): the world's name for a code

A user writes names, regions, years and words, not a catalog's description ("(예: …)", "6자리", "부분일치"),
not machine identifiers, and not codes whose meaning a code table gives. The realiser (``realise``), the walk's
start inputs (``walk``) and the quality stage's detectors (``edge.filter.user_voice``) share these rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["code_table", "compass", "identifier_param", "label", "name_field", "opaque", "position_field",
           "spoken_code", "spoken_number", "strip_parens", "world_name", "yes_no_flag"]

_PAREN = re.compile(r"\s*\([^()]*\)")
_ENTRY = re.compile(r"^([A-Za-z0-9]{1,10})(?:\s*=\s*|\s+)([가-힣0-9][^=→]*?)\s*$")  # '03 폐업', '22 = 제22대 국회'
_NOT_A_WORD = ("또는", "이후", "이전", "이상", "이하", "이면", "미만")  # '2024 또는 2024-05': a format, not a code
_DIGITS_SPEC = re.compile(r"\s*(앞|뒤)?\s*\d+\s*자리")  # '7자리', '앞 5자리'
_IDENTIFIER_WORDS = ("코드", "ID", "번호", "식별")
_IDENTIFIER_NAME = re.compile(r"(cd|code|id|seq|no|num|sn)$", re.IGNORECASE)
_MACHINE = re.compile(r"^(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9_-]{6,}$")  # 'PRC_C5J6…', '51I7734E', 'KR7005930003'
_HANGUL = re.compile(r"[가-힣]")
# a bus route '6816', an assembly term '21': said as numbers; codes are zero-padded or long
_SMALL_NUMBER = re.compile(r"^[1-9]\d{0,3}$")
_CODE_SUFFIX = re.compile(r"_?(cd|code|id|no|num|seq|gbn)$", re.IGNORECASE)
_NAME_SUFFIX = re.compile(r"_?(nm|name)$", re.IGNORECASE)


def strip_parens(text: str) -> str:
    """``text`` without any parenthetical, nested ones included ('휴게소명(예: 만남의광장(부산)휴게소)' → '휴게소명')."""
    while (shorter := _PAREN.sub("", text)) != text:
        text = shorter
    return text


def code_table(description: str) -> dict[str, str]:
    """The codes a description lists with their words, in parentheses, after a colon or as examples."""
    table: dict[str, str] = {}
    for piece in re.split(r"[(),:;…~]", description):
        piece = re.sub(r"^\s*예\s*", "", piece).strip()
        if (m := _ENTRY.match(piece)) and _HANGUL.search(m.group(2)) and not m.group(2).startswith(_NOT_A_WORD):
            table.setdefault(m.group(1), m.group(2).strip())
    return table


def label(description: str) -> str:
    """A parameter's name as a user says it: the description's head, without examples, formats or digit counts."""
    head = strip_parens(description).split(":")[0]
    head = re.split(r"[,;.—]", head)[0]
    head = _DIGITS_SPEC.sub("", head)
    head = re.sub(r"\s*(부분|완전|앞부분)\s*일치", "", head)
    head = re.sub(r"\s*\b(?:YYYY(?:MM)?(?:DD)?(?:~YYYYMMDD)?|Y/N)\b", "", head)  # formats, not words
    return re.sub(r"\s*예\s*$", "", re.sub(r"\s+", " ", head)).strip(" ,·:")


def identifier_param(param: Any) -> bool:
    """A parameter that takes an identifier or a code: its description says so, or its name does and the description
    does not call it a name ('호선명' under LINE_NUM)."""
    said = label(param.description_ko)
    if any(w in said for w in _IDENTIFIER_WORDS):
        return True
    return bool(_IDENTIFIER_NAME.search(param.name)) and not said.endswith(("명", "이름"))


_FLAG_WORDS = {True: "해당", False: "해당 없음"}  # a flag's value where a sentence needs a word for it (a label)


def yes_no_flag(description: str, value: Any) -> tuple[str, bool] | None:
    """(what the flag asks, whether it holds) for Y or N of a flag described '… 여부': ('예금보험 대상', True) for Y
    of '예금보험 대상 여부(Y 보호, N 비보호)'. None for any other value, and for a flag that asks a clause ('검색할지
    여부'), which no noun phrase can say."""
    said, text = label(description), str(value).strip().upper()
    thing = re.sub(r"\s*여부$", "", said).strip()
    if text not in ("Y", "N") or thing == said or not thing or thing.endswith("지"):
        return None
    return thing, text == "Y"


# an example that shows how a number is said: '예: 22 = 제22대 국회' (the words hold the number)
_NUMBER_SAID = re.compile(r"예\s*:?\s*(\d+)\s*=\s*([^,;()=]*?)(?<!\d)\1(?!\d)([^,;()=]*)")


def spoken_number(description: str, value: Any) -> str | None:
    """A small number as the description's example says one: '제21대 국회' for 21 of '대수(예: 22 = 제22대 국회)'.
    A user names an assembly's term, not '대수가 21인'. None where no example shows words around its number."""
    text = str(value).strip()
    if not _SMALL_NUMBER.match(text) or (m := _NUMBER_SAID.search(description)) is None:
        return None
    before, after = m.group(2).lstrip(), m.group(3).rstrip()
    return f"{before}{text}{after}" if _HANGUL.search(before + after) else None


_COMPASS = {"위도": {"max": "가장 북쪽에 있는", "min": "가장 남쪽에 있는"},
            "경도": {"max": "가장 동쪽에 있는", "min": "가장 서쪽에 있는"}}


def compass(description: str) -> dict[str, str] | None:
    """How a user picks a record by a coordinate field: the northernmost, the westernmost ('max' / 'min' → the
    words). A user selects no bank by "경도가 126.924229를 넘지 않는"; None for any other field."""
    said = label(description)
    return next((words for axis, words in _COMPASS.items() if axis in said), None)


_POSITION = re.compile(r"(?<!일련)(?:순번|순서)$")


def position_field(description: str) -> bool:
    """A field that holds a record's place in the list ('표시 순서', '결과 내 순번', '메뉴 순번'; not '법령일련번호'):
    a user asks for the first or the last one listed, never for 'a display order of 296 or more'."""
    return bool(_POSITION.search(label(description)))


def spoken_code(param: Any, value: Any) -> tuple[str, str] | None:
    """(what it is, the word) for a code the parameter's description explains: ('영업상태', '폐업') for 03, ('법인구분',
    '코스닥') for K, ('분교 여부', '해당 없음') for N of a yes/no flag. The description's table counts on an identifier
    parameter, and on any other where it lists two codes or more (a lone example, '대수(예: 22 = 제22대 국회)', names
    a value, not a code table)."""
    if (flag := yes_no_flag(param.description_ko, value)) is not None:
        return f"{flag[0]} 여부", _FLAG_WORDS[flag[1]]
    table = code_table(param.description_ko)
    word = table.get(str(value).strip())
    if word is None or not (identifier_param(param) or len(table) >= 2):
        return None
    what = re.sub(r"\s+구분코드$|\s*코드$", "", label(param.description_ko)).strip() or label(param.description_ko)
    return what, word


def opaque(param: Any, value: Any) -> bool:
    """An identifier no user knows: an identifier parameter's value no code table explains, or a machine-made token.
    A value with Hangul in it (a case number '2023다38434', a name) or a small number is one a user can cite."""
    text = str(value).strip()
    if not text or _HANGUL.search(text) or _SMALL_NUMBER.match(text) or spoken_code(param, text) is not None:
        return False
    return identifier_param(param) or bool(_MACHINE.match(text))


def _stem(name: str, suffix: re.Pattern[str]) -> str:
    return suffix.sub("", name).replace("_", "").lower()


def world_name(spec: Any, param: str, value: Any, records: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """(the name field's label, the name) the world's records give the code ``value`` of ``param``: the records
    whose field of the same name holds ``value`` agree on one value of a name field of the same stem
    (SIGUN_CD → SIGUN_NM, stdRestCd → stdRestNm, SD_SCHUL_CODE → SCHUL_NM)."""
    found = name_field(spec, param, value, records)
    return None if found is None else found[2:]


def name_field(spec: Any, param: str, value: Any,
               records: Sequence[Mapping[str, Any]]) -> tuple[str, str, str, str] | None:
    """(code field, name field, the name field's label, name): ``world_name``'s answer with the fields a name
    lookup needs."""
    fields = {f.name.lower(): f for f in spec.output}
    code_field = fields.get(param.lower())
    stem = _stem(param, _CODE_SUFFIX)
    if code_field is None or not stem:
        return None
    matching = [r for r in records if str(r.get(code_field.name, "")).strip() == str(value).strip()]
    for f in sorted(spec.output, key=lambda f: f.name):
        other = _stem(f.name, _NAME_SUFFIX)
        if f.name == code_field.name or not _NAME_SUFFIX.search(f.name) or not other:
            continue
        if other == stem or stem.endswith(other) or other.endswith(stem):
            names = {str(r.get(f.name, "")).strip() for r in matching}
            if len(names) == 1 and (name := names.pop()) and _HANGUL.search(name):
                return code_field.name, f.name, label(f.description_ko) or f.name, name
    return None
