"""Does a query read as a user wrote it? Three defects the paper's rules forbid (Appendix J, Tables 18-21).

    defects = query_defects(item, catalog)       # [(DESCRIPTION_COPY, "'(예: …)'"), (OPAQUE_ID, "BILL_ID=PRC_…")]
    problem = user_voice_problem(item, catalog)  # the first as a rejection reason, or None

* ``DESCRIPTION_COPY`` — the query copies a parameter's description: an example ("예: …"), a digit count ("7자리"),
  a code listing ("01 영업/정상, 02 휴업"), a "코드: …" head, or a parenthetical of a parameter's description
  ("(완전일치)", "(현행 버전)");
* ``OPAQUE_ID`` — the query cites an identifier no user knows: a golden call's value the query states on an
  identifier parameter no code table explains ("의안ID가 PRC_…인", "휴게소 표준코드가 000022인"), or without a
  catalog any machine-made token (letters and digits mixed, six characters or more);
* ``RAW_CODE`` — the query states a code whose word the catalog's code table gives ("영업상태코드가 03인" where
  03 is 폐업), or a number without the words its description's example says it in ("대수가 22인" for 제22대 국회).

The quality stage (``quality.check_quality_async``) and the synthesis screen drop an item for the first, each
defect being its own funnel reason; ``defect_counts`` counts every defect of a set (the before/after measure).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from edge.synth.item import SynthItem
from edge.synth.user_terms import opaque, spoken_code, spoken_number

__all__ = ["DEFECTS", "DESCRIPTION_COPY", "OPAQUE_ID", "RAW_CODE", "defect_counts", "query_defects",
           "user_voice_problem"]

DESCRIPTION_COPY = "the query copies a parameter description"
OPAQUE_ID = "the query cites an opaque identifier"
RAW_CODE = "the query states a code as a code"
DEFECTS = (DESCRIPTION_COPY, OPAQUE_ID, RAW_CODE)

_COPIED = (
    re.compile(r"(?:^|[\s(])예\s*[:：)](?!\s*['\"‘“])"),  # '(예: 만남의광장(부산)휴게소)'; a quoted example is the user's
    re.compile(r"\d+\s*자리(?:가|이)\s"),  # '의안번호 7자리가 …' (not '6자리 종목코드로', a format the user asks for)
    re.compile(r"[A-Za-z0-9]{1,8} [가-힣][가-힣/·]*, [A-Za-z0-9]{1,8} [가-힣]"),  # '01 영업/정상, 02 휴업'
    re.compile(r"(?:코드|구분)\s*[:：]"),  # '학교급코드: 02 초등학교'
)
_MACHINE = re.compile(r"(?<![A-Za-z0-9_])(?=[A-Za-z0-9_-]*[A-Za-z])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{6,}")


def _appears(value: str, query: str) -> bool:
    """``value`` stands in ``query`` as a token of its own (not inside a longer run of letters or digits)."""
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", query) is not None


def _user_args(item: SynthItem) -> Iterator[tuple[str, str, Any]]:
    """(tool, parameter, value) of every golden call's non-placeholder argument."""
    for action in item.task.golden_actions:
        for name, value in sorted(action.args.items()):
            text = str(value)
            if value not in (None, "") and not (text.startswith("{") and text.endswith("}")):
                yield action.tool, name, value


def _parentheticals(description: str) -> list[str]:
    """The top-level parenthetical remarks of a description, examples ('(예: …)', whatever they nest) aside."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(description):
        if ch == "(":
            depth, start = depth + 1, (k if depth == 0 else start)
        elif ch == ")" and depth:
            depth -= 1
            inner = description[start + 1:k].strip() if depth == 0 else ""
            if len(inner) >= 2 and re.search(r"[가-힣]", inner) and not inner.startswith("예"):
                out.append(f"({inner})")
    return out


def query_defects(item: SynthItem, catalog: Any = None) -> list[tuple[str, str]]:
    """Every defect of ``item``'s query: (kind, what was found), kinds in ``DEFECTS`` order, one of each at most."""
    query = item.task.query
    found: dict[str, str] = {}
    for pattern in _COPIED:
        if m := pattern.search(query):
            found.setdefault(DESCRIPTION_COPY, repr(m.group(0).strip()))
            break
    if catalog is None:
        if m := _MACHINE.search(query):
            found[OPAQUE_ID] = repr(m.group(0))
        return [(kind, found[kind]) for kind in DEFECTS if kind in found]
    # a remark a tool's or an output field's description also makes is the query naming that, not a copied parameter
    specs = [catalog.get(a.tool) for a in item.task.golden_actions if a.tool in catalog]
    topics = " ".join([s.description_ko for s in specs] + [f.description_ko for s in specs for f in s.output])
    values = [v for _, _, v in _user_args(item)]  # a name with a parenthesis ('입장(부산)휴게소') is the user's
    for tool, name, value in _user_args(item):
        if tool not in catalog or (p := catalog.get(tool).param(name)) is None or p.is_generic:
            continue
        text = str(value).strip()
        if DESCRIPTION_COPY not in found:
            for remark in _parentheticals(p.description_ko):
                if remark in query and remark not in topics and not any(remark in str(v) for v in values):
                    found[DESCRIPTION_COPY] = repr(remark)
        if not text or not _appears(text, query):
            continue
        if (spoken := spoken_code(p, text)) is not None:
            if spoken[1] not in query:  # said in words ('출구'), its digit is another number's ('1주 전')
                found.setdefault(RAW_CODE, f"{name}={text}")
        elif (words := spoken_number(p.description_ko, text)) is not None:
            said = re.search(rf"{re.escape(text)}\S*", words)  # '22대' of '제22대 국회': '22대 국회', '22대에' say it
            if said is None or said.group(0) not in query:  # '대수가 22인'
                found.setdefault(RAW_CODE, f"{name}={text}")
        elif len(text) >= 2 and opaque(p, text):
            found.setdefault(OPAQUE_ID, f"{name}={text}")
    return [(kind, found[kind]) for kind in DEFECTS if kind in found]


def user_voice_problem(item: SynthItem, catalog: Any = None) -> str | None:
    """The first defect as a rejection reason ('<kind> (<what>)'), or None."""
    defects = query_defects(item, catalog)
    return f"{defects[0][0]} ({defects[0][1]})" if defects else None


def defect_counts(items: Iterable[SynthItem], catalog: Any = None) -> Counter[str]:
    """Items with each defect (an item may count under several), and ``items`` their number."""
    counts: Counter[str] = Counter({kind: 0 for kind in DEFECTS})
    for item in items:
        counts["items"] += 1
        for kind, _ in query_defects(item, catalog):
            counts[kind] += 1
    return counts
