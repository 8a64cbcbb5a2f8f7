"""Deterministic Korean realiser: a user's question for an executed trajectory, from typed phrase templates.

    query, phrasing = realise(trace, catalog, rng)      # phrasing: 'seq.1+count.2', the writer is 'rule:<phrasing>'

The question is built from what the user may know: the start inputs (naturalised: "20230401" → "2023년 4월
1일"), values the user chooses for parameters no junction fills, DRV operators with their pivots, and the
Korean descriptions of tools and fields (parentheticals, English identifiers and procedure words dropped).
A parameter is named by its label, never by its description's examples or formats ("휴게소명", not
"휴게소명(예: …)"); a code the catalog's code table explains is said in words ("영업상태가 폐업인", not
"영업상태코드가 03인"), and an identifier the world's records name is said by that name (``Trace.spoken``), so
that the question cites what a user knows (``user_terms``).
Values that crossed a junction are never written; ``leaks`` finds any that slipped in (a start input can
happen to equal one), and the builder drops such an item. Each junction type and final type has several
phrasings; the generator picks one of each, so the same trace and seed give the same question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .execute import Hop, Trace
from .item import JunctionType
from .user_terms import compass, label, position_field, spoken_code, spoken_number, yes_no_flag

__all__ = ["leaks", "naturalise", "realise", "topic"]

_PAREN = re.compile(r"\s*\(([^()]*)\)")
_ASCII_WORD = re.compile(r"\s*\b[A-Za-z_][A-Za-z0-9_]*\b\s*")
_ENDINGS = re.compile(r"\s*(을|를|이|가)?\s*(조회합니다|찾습니다|제공합니다|돌려줍니다|확인합니다|검색합니다|입니다|검색)\.?$")
_DATE8 = re.compile(r"^((?:19|20)\d{2})-?(\d{2})-?(\d{2})$")
_BY_KEY = re.compile(r"^(.+?)[을를] (\S+별)로$")
# what a description says besides its subject, which a question naming the data drops: the source or the key it is
# looked up by ("국가법령정보센터에서 현행 법령" → "현행 법령"), a platform prefix ("학교알리미 공시: …"), "…를 모두"
_TOPIC_REWRITES = (
    (re.compile(r"^\S+(?:센터|포털)에서 "), ""),
    (re.compile(r"^.+?(?:정보|데이터)로 (?=\S)"), ""),
    (re.compile(r"^.+? 기준으로 (?=\S)"), ""),
    (re.compile(r"^[^:]+: "), ""),
    (re.compile(r"[을를] 모두$"), ""),
    (re.compile(r"^(\S+)명(?:\(또는 [^()]*\))?으로 (\S+)$"), r"\1 \2"),  # "회사명(또는 종목코드)으로 고유번호"
)
_MONTH = re.compile(r"^((?:19|20)\d{2})-?(\d{2})$")


_TRAILING_PAREN = re.compile(r"\s*\([^()]*\)$")
# the final consonant (종성 index, 0 = none) of each digit's reading: 영 일 이 삼 사 오 육 칠 팔 구
_DIGIT_FINAL = {"0": 21, "1": 8, "2": 0, "3": 16, "4": 0, "5": 0, "6": 1, "7": 8, "8": 8, "9": 0}
_RIEUL = 8


def _final(word: str) -> int | None:
    """The final consonant (종성 index; 0: the syllable ends in a vowel) of how ``word`` is read before a particle;
    None when its end is neither Hangul nor a digit. A parenthetical at the end is not read, so the particle
    follows the word before it ("공원면적(㎡)이", "보육아동수(명)가"); a number ending in 0 reads 십, 백, 천 or 만."""
    word = word.rstrip(" '\"")
    while (bare := _TRAILING_PAREN.sub("", word).rstrip(" '\"")) != word and bare:
        word = bare
    if not word:
        return None
    last = word[-1]
    if "가" <= last <= "힣":
        return (ord(last) - 0xAC00) % 28
    if last.isdigit():
        return _DIGIT_FINAL.get(last, 0)
    return None


def _coda(word: str) -> bool | None:
    """Whether ``word``, read aloud, ends in a consonant (None: its end is neither Hangul nor a digit)."""
    final = _final(word)
    return None if final is None else final != 0


def _particle(word: str, with_coda: str, without: str) -> str:
    return word + (with_coda if _coda(word) else without)


def ga(word: str) -> str:
    return _particle(word, "이", "가")


def eul(word: str) -> str:
    return _particle(word, "을", "를")


def eun(word: str) -> str:
    return _particle(word, "은", "는")


def wa(word: str) -> str:
    return _particle(word, "과", "와")


def iraneun(word: str) -> str:
    """'값' → '값이라는', '결과' → '결과라는' (a name quoted in a sentence: the quote comes before the particle)."""
    return _particle(word, "이라는", "라는")


def ro(word: str) -> str:
    """'회사명' → '회사명으로', '기준일' → '기준일로' (a ㄹ final takes 로, as a vowel does)."""
    final = _final(word)
    return word + ("으로" if final not in (None, 0, _RIEUL) else "로")


def _clean(text: str) -> str:
    def paren(match: re.Match[str]) -> str:
        inner = match.group(1)
        keep = (len(inner) <= 10 and "," not in inner and ":" not in inner and not inner.startswith("예")
                and not re.search(r"[A-Za-z0-9]", inner))
        return f"\x00{inner}\x01" if keep else ""  # kept parens hidden, so an enclosing one is judged next

    while (inner_first := _PAREN.sub(paren, text)) != text:  # nested: '(예: 만남의광장(부산)휴게소)' goes whole
        text = inner_first
    text = text.replace("\x00", "(").replace("\x01", ")")
    text = _ASCII_WORD.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip(" ,·:")


# a yearly edition of a statistic: '경기도 외국인주민 현황(2023년)', one tool per year
_EDITION = re.compile(r"\(((?:19|20)\d{2}년)\)")


def topic(spec: Any) -> str:
    """What a tool is about, as a noun phrase ("고속도로 휴게소 위치 목록"); a yearly edition by its year first
    ("2023년 경기도 외국인주민 현황"): the editions of one statistic are tools of their own, named alike but for it."""
    first = re.split(r"(?<=[.])\s", spec.description_ko.strip(), maxsplit=1)[0]
    text = _ENDINGS.sub("", _clean(first)).strip(" .")
    text = _BY_KEY.sub(r"\2 \1", text)  # "…기본정보를 기준일자별로 조회" ends adverbially: "기준일자별 …기본정보"
    for pattern, replacement in _TOPIC_REWRITES:
        text = pattern.sub(replacement, text)
    said = _first_conjunct(text) or spec.name
    edition = _EDITION.search(first)
    return f"{edition.group(1)} {said}" if edition and edition.group(1) not in said else said


# 'A과 B, C' where B, C is a list of nouns (no particle or verb ending after it): what the data holds besides A
_CONJUNCTION = re.compile(r"^(?P<head>.*?(?P<word>[가-힣]+))(?P<particle>과|와) (?P<rest>.+)$")
_CLAUSE = re.compile(r"[을를은는이가의에로]\s|[한된는할될]\s|하는|있는")


def _first_conjunct(text: str) -> str:
    """A topic that lists what its records hold ('국회 위원회 목록과 위원장, 간사, 위원 정수·현원, 교섭단체별 인원',
    '… 목록과 좌표') named by its first part ('국회 위원회 목록'), as a user names the data. Not where the
    particle is inside brackets ('보고서 목록(제목과 길이)'), is part of a word (학과: '학' is no conjunct), or
    joins the objects of a clause ('의원 발의안과 정부 제출안을 포함한 의안 통합 검색')."""
    m = _CONJUNCTION.match(text)
    if m is None or _CLAUSE.search(m["rest"] + " ") or m["head"].count("(") != m["head"].count(")"):
        return text
    takes_gwa = bool(_final(m["word"]))  # 과 after a final consonant, 와 after a vowel: else it is no particle
    if len(m["word"]) < 2 or takes_gwa != (m["particle"] == "과"):
        return text
    # only a list of details is dropped: 'A과 B' with one B may be what tells two tools apart ('유가와 정유사')
    return m["head"] if "," in m["rest"] or m["head"].endswith("목록") else text


def _field_description(spec: Any, name: str) -> str | None:
    return next((f.description_ko for f in spec.output if f.name == name), None)


def field_name(spec: Any, name: str) -> str:
    return _clean(_field_description(spec, name) or name) or name


def param_name(spec: Any, name: str) -> str:
    p = spec.param(name)
    return (_clean(label(p.description_ko)) if p is not None else "") or name


def say(spec: Any, name: str, value: Any, spoken: Mapping[str, tuple[str, str]] | None = None) -> tuple[str, str]:
    """(what, value) as a user says a parameter's value: a code in the words of its code table, an identifier by the
    name the world gives it (``spoken``), a number its description's example puts in words by those words alone
    ('', '제22대 국회'), anything else by the parameter's label and the naturalised value."""
    p = spec.param(name)
    if p is not None and (words := spoken_code(p, value)) is not None:
        return words
    if spoken and (named := spoken.get(str(value).strip())) is not None:
        return named
    if p is not None and (words := spoken_number(p.description_ko, value)) is not None:
        return "", words  # '제22대 국회' names what it is
    return param_name(spec, name), naturalise(value, p.description_ko if p is not None else "")


def naturalise(value: Any, description: str = "") -> str:
    """A value as a user writes it: dates and months in Korean, years with 년, the rest as it is."""
    text = str(value).strip()
    if m := _DATE8.match(text):
        return f"{m.group(1)}년 {int(m.group(2))}월 {int(m.group(3))}일"
    if (m := _MONTH.match(text)) and 1 <= int(m.group(2)) <= 12:
        return f"{m.group(1)}년 {int(m.group(2))}월"
    if re.fullmatch(r"\d{4}", text) and any(w in description for w in ("년도", "연도", "년")):
        return f"{text}년"
    return text


def _conditions(spec: Any, args: Mapping[str, Any], spoken: Mapping[str, tuple[str, str]] | None = None) -> str:
    """'노선명이 경부선이고 영업상태가 폐업인', '예금보험 대상에 해당하고 상품명이 …인', '제22대 국회에서 정당명이 …인'
    for a tool's user-given arguments."""
    said: list[tuple[str, str]] = []
    parts: list[tuple[str, str]] = []  # each condition joined to the next, and as the last
    for name in sorted(args):
        p = spec.param(name)
        if p is None or p.is_generic or args[name] in (None, ""):
            continue
        if (part := say(spec, name, args[name], spoken)) in said:  # a code named like a given name: once
            continue
        said.append(part)
        if (flag := yes_no_flag(p.description_ko, args[name])) is not None:
            parts.append(flag_forms(*flag))
        elif (words := spoken_number(p.description_ko, args[name])) is not None:
            parts.append((f"{words}에서", f"{words}의"))  # '제22대 국회의 …', not '대수가 22인 …'
        else:
            parts.append((f"{ga(part[0])} {part[1]}이고", f"{ga(part[0])} {part[1]}인"))
    if not parts:
        return ""
    return " ".join([joined for joined, _ in parts[:-1]] + [parts[-1][1]])


def flag_forms(thing: str, holds: bool) -> tuple[str, str]:
    """A yes/no condition joined to the next and as the last: ('분교에 해당하고', '분교에 해당하는'), and '…에 해당하지
    않고/않는' (one form fits a status, '예금보험 대상', and an act, 'LPG 판매', alike)."""
    verb = "해당하" if holds else "해당하지 않"
    return f"{thing}에 {verb}고", f"{thing}에 {verb}는"


_OPERATOR = {
    "max": ("{f}{i} 가장 큰", "{f}{i} 제일 높은"),
    "min": ("{f}{i} 가장 작은", "{f}{i} 제일 낮은"),
    "ge": ("{f}{i} {p} 이상인", "{f}{i} {pe} 넘거나 같은"),
    "le": ("{f}{i} {p} 이하인", "{f}{i} {pe} 넘지 않는"),
    "eq": ("{f}{i} {p}인", "{f}{i} '{p}'에 해당하는"),
    "date_after": ("{f}{i} {p} 이후인", "{f}{i} {p}보다 늦은"),
    "latest": ("{f}{i} 가장 최근인", "{f}{i} 제일 늦은"),
    "earliest": ("{f}{i} 가장 이른", "{f}{i} 제일 오래된"),
}


def _hop_phrase(hop: Hop, catalog: Any, choice: int, spoken: Mapping[str, tuple[str, str]]) -> str:
    j = hop.junction
    source, target = catalog.get(j.source), catalog.get(j.target)
    what, to = field_name(source, j.field), topic(target)
    given = _conditions(target, hop.given, spoken)
    to = f"{given} {to}" if given else to
    if j.operator == "most_frequent":  # the value selected is the bound one: its field said once
        lead = ("각각", "각자 ", "그 각각에서") if hop.each else ("그중", "", "그 가운데")  # each: every branch's own
        forms = (f"{lead[0]} 가장 자주 나오는 {what}에 해당하는 {to}", f"{lead[1]}제일 많이 나오는 {ro(what)} 찾은 {to}",
                 f"{lead[2]} 가장 흔한 {what}의 {to}")
    elif hop.fanned and j.operator is not None:  # a selection keeping a few in each branch, each one called
        which = _which(j, source, hop, choice)
        forms = (f"각각 그중 {which} 항목들의 {what}마다 {to}", f"각자 {which} 것들의 {what}별 {to}",
                 f"그 각각에서 {which} {what} 하나하나의 {to}")
    elif hop.fanned:  # a fan-out inside each branch: every value of every branch
        forms = (f"각각 거기 나온 {what}마다 {to}", f"그 각각에 나온 {what}별 {to}", f"각자의 {what} 하나하나에 대한 {to}")
    elif hop.each and j.operator is not None:
        which = _which(j, source, hop, choice)
        forms = (f"각각 그중 {which} 항목의 {what}에 해당하는 {to}", f"각자 {which} 것의 {ro(what)} 찾은 {to}",
                 f"그 각각에서 {which} 쪽 {what}의 {to}")
    elif hop.each:  # after a fan-out: every branch goes on with its own value
        forms = (f"각각 거기 나온 {what}에 해당하는 {to}", f"그 각각의 {ro(what)} 본 {to}", f"각 {what}의 {to}")
    elif j.type is JunctionType.SEQ:
        forms = (f"거기 나온 {what}에 해당하는 {to}", f"그 {eul(what)} 기준으로 본 {to}", f"같은 {what}의 {to}")
    elif j.type is JunctionType.FAN:
        forms = (f"거기 나온 {what} 각각의 {to}", f"{what}마다 {to}", f"그 {what}별 {to}")
    else:
        which = _which(j, source, hop, choice)
        many = "들" if len(hop.values) > 1 else ""
        forms = (f"그중 {which} 항목{many}의 {what}에 해당하는 {to}", f"{which} 것{many}의 {ro(what)} 찾은 {to}",
                 f"그 가운데 {which} 쪽{many} {what}의 {to}")
    return forms[choice % len(forms)]


_LISTED = {"min": ("목록 맨 앞에 나오는", "맨 처음 나오는"), "max": ("목록 맨 뒤에 나오는", "맨 마지막에 나오는")}


def _which(j: Any, source: Any, hop: Hop, choice: int) -> str:
    """What a DRV selection keeps, in words: '공포일자가 가장 큰', '금액이 1000 이상인'."""
    op_field = field_name(source, hop.op_field or j.field)
    description = _field_description(source, hop.op_field or j.field) or ""
    if j.operator == "eq" and (flag := yes_no_flag(description, j.pivot)) is not None:
        return flag_forms(*flag)[1]  # '대표메뉴에 해당하는', not '대표메뉴 여부가 Y인'
    if j.operator in _LISTED and position_field(description):
        forms = _LISTED[j.operator]
        return forms[choice % len(forms)]  # '목록 맨 앞에 나오는', not '표시 순서가 가장 작은'
    if j.operator in ("max", "min") and (words := compass(description)) is not None:
        return words[j.operator]  # '가장 북쪽에 있는', not '위도(WGS84)가 가장 큰'
    pivot = naturalise(j.pivot, op_field) if j.pivot is not None else ""
    templates = _OPERATOR[j.operator or "max"]
    return templates[choice % len(templates)].format(f=op_field, i=ga(op_field)[len(op_field):], p=pivot,
                                                     pe=eul(pivot))


_COUNT = ("모두 몇 건인가요?", "전부 몇 개예요?", "몇 건이나 되는지 알려 주세요.", "해당하는 게 몇 건 있나요?",
          "건수만 알려 주세요.")
_SUM = ("다 합치면 몇 건인가요?", "모두 더하면 몇 개인지 궁금해요.", "합계가 몇 건인지 알려 주세요.",
        "합쳐서 몇 건이 나오나요?", "전부 더한 건수를 알고 싶어요.")
# How a chain's opening and hops are strung together: {0} the opening, {1} the hops joined by ", 다시 ".
_LEADS = ("{0}에서 {1}까지 따라가면,", "{0}부터 시작해 {1}까지 찾아보면,", "{0}{eul} 보고 {1}까지 이어서 확인하면,",
          "{0}{eul} 기준으로 {1}까지 살펴봤을 때,")
_SEM_JOIN = ("{wa} {eul} 함께 보면,", "{a}에 {b}까지 더해 보면,", "{wa} {eul} 한꺼번에 놓고 보면,")


def _chain_lead(pieces: Sequence[str], choice: int, ids: list[str]) -> str:
    ids.insert(0, f"lead{choice}")
    opening = pieces[0]
    particle = eul(opening)[len(opening):]  # 을 or 를, by the opening's last syllable
    return _LEADS[choice].format(opening, ", 다시 ".join(pieces[1:]), eul=particle)
_FIELD = ("{f}{e} 무엇인가요?", "{f}{e} 어떻게 되나요?", "{f}{i} 궁금해요. 알려 주세요.")
_PICK = {"max": ("어느 쪽이 가장 많나요?", "어디가 제일 많은지 알려 주세요.", "가장 많이 나오는 건 어느 쪽이에요?"),
         "min": ("어느 쪽이 가장 적나요?", "어디가 제일 적은지 알려 주세요.", "가장 적게 나오는 건 어느 쪽이에요?"),
         "diff": ("가장 많은 쪽과 가장 적은 쪽은 몇 건 차이인가요?", "많은 쪽이 적은 쪽보다 몇 건 더 많나요?",
                  "제일 많은 곳과 제일 적은 곳의 차이는 몇 건이죠?")}


def _ask_field(catalog: Any, tool: str, name: str, choice: int) -> str:
    f = field_name(catalog.get(tool), name)
    return _FIELD[choice % 3].format(f=f, e="은" if _coda(f) else "는", i="이" if _coda(f) else "가")


def realise(trace: Trace, catalog: Any, rng: np.random.Generator) -> tuple[str, str]:
    """(Korean question, phrasing id) for an executed trace."""
    pick = lambda k: int(rng.integers(k))  # noqa: E731 - one draw per choice, in a fixed order
    start = catalog.get(trace.start)
    spoken = trace.spoken
    opening_args = _conditions(start, trace.start_args, spoken)
    if trace.kind == "chain":
        ids = []
        text = f"{opening_args} {topic(start)}" if opening_args else topic(start)
        pieces = [text]
        for hop in trace.hops:
            c = pick(3)
            ids.append(f"{hop.junction.type.value.lower()}{c}")
            pieces.append(_hop_phrase(hop, catalog, c, spoken))
        lead = _chain_lead(pieces, pick(len(_LEADS)), ids)
        final = trace.final
        c = pick({"count": len(_COUNT), "sum": len(_SUM), "cond_tail": 6}.get(final["kind"], 3))
        if final["kind"] == "count":
            tail = _COUNT[c]
        elif final["kind"] == "field":
            tail = _ask_field(catalog, final["tool"], final["field"], c)
        elif final["kind"] == "sum":
            tail = _SUM[c]
        elif final["kind"] == "compare":
            options = _PICK[final["pick"]]
            tail = "건수를 비교하면 " + options[c % len(options)]
        else:  # cond_tail: a check on the arrived records decides what is asked
            rule = "이상" if final["cmp"] == "ge" else "이하"
            then = (field_name(catalog.get(final["tool"]), final["then"]["field"])
                    if final["then"]["kind"] == "field" else "건수")
            t = final["threshold"]
            forms = (f"그게 {t}건 {rule}이면 {eul(then)} 알려 주시고, 아니면 몇 건인지만 알려 주세요.",
                     f"{t}건 {rule}일 때는 {eul(then)}, 그렇지 않을 때는 건수를 알려 주세요.",
                     f"모두 {t}건 {rule}라면 {eul(then)} 말해 주시고, 아니라면 몇 건인지 알려 주세요.",
                     f"결과가 {t}건 {rule}인지 먼저 보고, 맞으면 {eul(then)}, 아니면 건수를 알려 주세요.",
                     f"{t}건 {rule}에 해당하면 {eul(then)} 알고 싶고, 그렇지 않으면 건수만 알면 돼요.",
                     f"건수가 {t}건 {rule}이라면 {eul(then)}, 아니라면 그 건수를 답해 주세요.")
            tail = forms[c]
        ids.append(f"{final['kind']}{c}")
        return f"{lead} {tail}", "+".join(ids)
    if trace.kind == "sem":
        c = pick(3)
        lead = f"{opening_args} " if opening_args else ""
        joined = _SEM_JOIN[pick(len(_SEM_JOIN))]
        *before, last = [topic(catalog.get(tool)) for tool, _ in trace.others]
        # a third tool joins the list before the last one: 'A와 B, C를 함께 보면'
        b = ", ".join([*before, last])
        both = joined.format(a=topic(start), b=b, wa=wa(topic(start)), eul=eul(b))
        return (f"{lead}{both} {_SUM[c]}", f"sem{c}.{_SEM_JOIN.index(joined)}")
    if trace.kind == "cmp":
        key = trace.final.get("key")
        labels, subjects = [], []
        for _, args in trace.others:
            if key is not None:
                what, value = say(start, key, args[key], spoken)
                labels.append(value)
                subjects.append(what)
            else:
                labels.append(_conditions(start, args, spoken) + " 경우")
        c = pick(2)
        options = _PICK[trace.final["pick"]]
        subject = f"{subjects[0]} " if key is not None and len(set(subjects)) == 1 and subjects[0] else ""
        return (f"{subject}{', '.join(labels)} 각각의 {eul(topic(start))} 비교하면 {options[c % len(options)]}",
                f"cmp{c}")
    # cond
    (then_tool, then_args), (else_tool, else_args) = trace.others
    rule = "이상" if trace.final["cmp"] == "ge" else "이하"
    c = pick(2)
    then_cond = _conditions(catalog.get(then_tool), then_args, spoken)
    else_cond = _conditions(catalog.get(else_tool), else_args, spoken)
    lead = f"{opening_args} " if opening_args else ""
    forms = (f"{lead}{ga(topic(start))} {trace.final['threshold']}건 {rule}이면 {then_cond} "
             f"{ga(topic(catalog.get(then_tool)))} 몇 건인지, 아니면 {else_cond} {ga(topic(catalog.get(else_tool)))} "
             "몇 건인지 알려 주세요.",
             f"먼저 {lead}{eul(topic(start))} 보고 {trace.final['threshold']}건 {_particle(rule, '이라면', '라면')} "
             f"{then_cond} "
             f"{topic(catalog.get(then_tool))}의 건수를, 그렇지 않다면 {else_cond} "
             f"{topic(catalog.get(else_tool))}의 건수를 알려 주세요.")
    return re.sub(r"\s+", " ", forms[c]), f"cond{c}"


def leaks(query: str, values: Iterable[Any], *, allowed: Sequence[Any] = ()) -> list[str]:
    """The junction values (two characters or more) that appear in ``query``, except those the user gave."""
    given = {str(v) for v in allowed}
    return sorted({v for v in map(str, values) if len(v.strip()) >= 2 and v not in given and v.strip() in query})
