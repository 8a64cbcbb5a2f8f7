"""KOPA-Bench templates: law (국가법령정보센터: statutes, their articles and versions, precedents, 헌재 decisions).

The chains follow how a person reads Korean law: a law named by topic and ministry → its serial (MST) →
the article; a case name → the latest 대법원 judgment → its full text → the articles (or the earlier
judgment) it cites; a law → every precedent citing it (paging) → a count, a share or the busiest court;
a law → the Constitutional Court's latest decision on it → the article under review or the version then
in force. Judge answers are written from the article / judgment text the golden calls return.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

from ..draft import Draft, DraftError
from ..registry import template

# ------------------------------------------------------------------------------------------- helpers

SUPREME = "대법원"
LOWER_COURTS = "400202"  # 법원종류코드 of every court but the 대법원
KIND_LAW = "법률"
# Filler articles whose text says nothing of substance ("… 준용한다", "… 대통령령으로 정하는 바에 따른다")
_FILLER = re.compile(r"이를 준용한다\.|대통령령으로 정하는 바에 따른다\.|처분의 기준과 절차에 관하여 필요한 사항은|"
                     r"이 법은 에 이바지|다른 법률에 특별한 규정이 있는 경우를 제외하고는")
_ARTICLE = re.compile(r"^(.*?)\s*제(\d+)조(?:의(\d+))?$")
_CITED_CASE = re.compile(r"대법원 (\d{4})\. (\d{1,2})\. (\d{1,2})\. 선고 (\S+) (?:판결|결정)")


def _jo(number: int, branch: int) -> str:
    """The 6-digit article code: 제750조 → 075000, 제839조의2 → 083902."""
    return f"{number:04d}{branch:02d}"


def _label(number: int, branch: int) -> str:
    return f"제{number}조" + (f"의{branch}" if branch else "")


def _article_refs(text: str) -> list[tuple[str, int, int]]:
    """'[1] 민법 제750조, 제751조 / [2] 개인정보 보호법 제2조' → [(민법, 750, 0), (민법, 751, 0), (개인정보 보호법, 2, 0)]."""
    out: list[tuple[str, int, int]] = []
    for group in text.split(" / "):
        group = re.sub(r"^\[\d+\]\s*", "", group.strip())
        law = ""
        for token in (p.strip() for p in group.split(",")):
            m = _ARTICLE.match(token)
            if m is None:
                raise DraftError(f"cannot read the article reference {token!r} in {text!r}")
            law = m.group(1).strip() or law
            out.append((law, int(m.group(2)), int(m.group(3) or 0)))
    return list(dict.fromkeys(out))


def _article_text(rec: dict[str, Any]) -> str:
    """An article as one text: its heading line, then its 항 and 호."""
    parts = [rec.get("조문내용") or ""]
    hang = rec.get("항") or []
    if isinstance(hang, dict):
        hang = [hang]
    for h in hang:
        parts.append(h.get("항내용") or "")
        ho = h.get("호") or []
        if isinstance(ho, dict):
            ho = [ho]
        parts += [x.get("호내용") or "" for x in ho]
    return " ".join(p for p in parts if p)


def _substantive(rec: dict[str, Any]) -> bool:
    return rec.get("조문여부") == "조문" and not _FILLER.search(_article_text(rec))


def _articles(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The 조문 of a law text (chapter headings left out)."""
    return [r for r in records if r.get("조문여부") == "조문"]


def _day(yyyymmdd: str) -> str:
    d = yyyymmdd.replace(".", "")
    return f"{int(d[:4])}년 {int(d[4:6])}월 {int(d[6:8])}일"


def _date_answers(yyyymmdd: str) -> list[str]:
    d = yyyymmdd.replace(".", "")
    return [d, f"{d[:4]}-{d[4:6]}-{d[6:]}", f"{d[:4]}.{d[4:6]}.{d[6:]}", _day(d)]


def _unique_max(items: list[Any], key: Any) -> Any | None:
    """The one item with the largest key, or None when several share it."""
    if not items:
        return None
    best = max(key(i) for i in items)
    top = [i for i in items if key(i) == best]
    return top[0] if len(top) == 1 else None


def _unique_most_common(values: list[str]) -> tuple[str, int] | None:
    counts = Counter(values).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0]


def _josa(word: str, pair: tuple[str, str]) -> str:
    """The particle that follows ``word``: pair = (after a final consonant, after a vowel), e.g. ("을", "를")."""
    last = word.rstrip()[-1]
    if "가" <= last <= "힣":
        return pair[0] if (ord(last) - 0xAC00) % 28 else pair[1]
    return pair[0]




async def _search(t: Draft, tool: str, args: dict[str, Any], *, step: int,
                  compare: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """A golden list call that one page of 100 holds whole (the answer must not hide on a later page)."""
    result = await t.call(tool, args, step=step, compare=compare, page=1, size=100)
    if (result.total_count or 0) > 100:
        raise DraftError(f"{t.task_id}: {tool}({args}) has {result.total_count} records, more than a page")
    return list(result.records)


async def _law_text(t: Draft, args: dict[str, Any], *, step: int | None = None,
                    compare: tuple[str, ...] | None = None, tool: str = "get_law_text") -> list[dict[str, Any]]:
    """A law's articles: golden at ``step``, or exploring when ``step`` is None."""
    if step is None:
        return list((await t.explore(tool, args, page=1, size=1000)).records)
    return list((await t.call(tool, args, step=step, compare=compare, page=1, size=1000)).records)


def _ordered(t: Draft, pool: list[Any], stride: int = 4) -> list[Any]:
    """``pool`` in the template's fixed shuffle, this instance's share first (instance v gets positions
    v, v+stride, …), so instances that skip unfit candidates still land on different ones."""
    ordered = [v for _, v in sorted({str(x): x for x in pool}.items())]
    random.Random(f"{t.template}:{len(ordered)}").shuffle(ordered)
    mine = ordered[t.variant % stride::stride]
    return mine + [x for i, x in enumerate(ordered) if i % stride != t.variant % stride]


def _ruling(full_text: str) -> str:
    """The 주문 of a decision's or judgment's full text."""
    m = re.search(r"【주\s*문】(?:<br/>)?\s*(.*?)(?:<br/>|$)", full_text)
    return m.group(1).strip() if m else ""


# ------------------------------------------------------------------------- statutes by topic (judge)

TOPICS = ("공공주택", "감정평가", "공인중개사", "관광진흥", "반려동물", "수소경제", "전통시장", "도시재생", "소상공인",
          "신재생에너지", "데이터산업", "인공지능", "물류시설", "청년고용", "해양레저", "스마트농업", "산림자원",
          "콘텐츠산업", "사회적기업", "지역관광")


async def _law_by_topic(t: Draft, topic: str, ministry: str | None = None
                        ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The topic's search result and its one 법률 of ``ministry`` (or a ministry with one 법률 there)."""
    found = (await t.explore("search_laws", {"query": topic}, page=1, size=100)).records
    acts = [r for r in found if r["법령구분명"] == KIND_LAW]
    by_ministry = Counter(r["소관부처명"] for r in acts)
    if ministry is not None:
        picks = [r for r in acts if r["소관부처명"] == ministry and by_ministry[ministry] == 1]
    else:
        picks = [r for r in acts if by_ministry[r["소관부처명"]] == 1]
    return list(found), (picks[0] if picks else None)


_TOPIC_QUESTIONS = {
    "기본계획의 수립": ("{topic} 관련 법률 가운데 {ministry} 소관 법률을 보면, 기본계획은 누가 몇 년마다 세워야 하고 "
                  "기본계획에 꼭 들어가야 하는 사항은 무엇인가요?"),
    "결격사유": "{ministry}{i_ga} 맡고 있는 {topic} 관련 법률에서는 어떤 사람이 등록을 할 수 없다고(결격사유) 정하고 있나요?",
    "과태료": ("{topic} 분야 법률 중 {ministry} 소관인 법률은 어떤 경우에 얼마 이하의 과태료를 물리고, "
            "그 과태료는 누가 부과·징수하나요?"),
}


@template("law", count=2)
async def topic_law_article(t: Draft) -> None:
    """Topic + ministry → the one 법률 (its MST) → its full text → the article with a given heading (judge)."""
    title = list(_TOPIC_QUESTIONS)[t.variant % len(_TOPIC_QUESTIONS)]
    for topic in _ordered(t, list(TOPICS)):
        found, law = await _law_by_topic(t, topic)
        if law is None:
            continue
        # a ministry with a single 법률 on the topic whose text has the article
        candidates = sorted({r["소관부처명"] for r in found if r["법령구분명"] == KIND_LAW})
        for ministry in candidates:
            _, law = await _law_by_topic(t, topic, ministry)
            if law is None:
                continue
            text = await _law_text(t, {"MST": law["법령일련번호"]})
            hits = [r for r in _articles(text) if r.get("조문제목") == title and _substantive(r)]
            if len(hits) == 1:
                break
        else:
            continue
        break
    else:
        raise DraftError(f"{t.task_id}: no topic law with a '{title}' article")
    await _search(t, "search_laws", {"query": topic}, step=0, compare=("query",))
    text = await _law_text(t, {"MST": law["법령일련번호"]}, step=1, compare=("MST",))
    article = next(r for r in _articles(text) if r.get("조문제목") == title)
    label = _label(int(article["조문번호"]), int(article.get("조문가지번호") or 0))
    t.ask(_TOPIC_QUESTIONS[title].format(topic=topic, ministry=ministry, i_ga=_josa(ministry, ("이", "가"))))
    t.answer_judge(f"{law['법령명한글']}({ministry} 소관) {label}({title})에 규정되어 있습니다. "
                   f"조문 내용: {_article_text(article)}")
    t.tags.append("judge")


# ------------------------------------------------------------------ Constitutional Court decisions

async def _recent_reviewed_laws(t: Draft) -> list[str]:
    """Laws the Constitutional Court ruled on in 2024–2025 (from its decision list)."""
    decisions = await t.explore_all("search_constitutional_decisions", {"edYd": "20240101~20251231"}, size=100)
    names = set()
    for d in decisions:
        m = _ARTICLE.match(d["사건명"].rsplit(" ", 1)[0])
        if m:
            names.add(m.group(1).strip())
    return sorted(names)


async def _latest_decision(t: Draft, law: str) -> dict[str, Any] | None:
    """The Court's latest decision on ``law`` (None when the search is ambiguous or the date is shared)."""
    found = (await t.explore("search_constitutional_decisions", {"query": law, "sort": "ddes"}, page=1,
                             size=100)).records
    if not found or any(not d["사건명"].startswith(f"{law} 제") for d in found):
        return None
    return _unique_max(list(found), key=lambda d: d["종국일자"])


@template("law", count=2)
async def constitutional_review_article(t: Draft) -> None:
    """Law → the Court's latest decision on it → the decision text → the article under review (judge)."""
    for law in _ordered(t, await _recent_reviewed_laws(t)):
        latest = await _latest_decision(t, law)
        if latest is None:
            continue
        body = (await t.explore("get_constitutional_decision_text", {"ID": latest["헌재결정례일련번호"]})).records[0]
        refs = _article_refs(body["심판대상조문"])
        if len(refs) != 1 or refs[0][0] != law:
            continue
        _, number, branch = refs[0]
        text = await _law_text(t, {"LM": law, "JO": _jo(number, branch)})
        if len(text) == 1 and _substantive(text[0]):
            break
    else:
        raise DraftError(f"{t.task_id}: no law whose latest decision reviews a substantive article")
    await _search(t, "search_constitutional_decisions", {"query": law, "sort": "ddes"}, step=0, compare=("query",))
    body = (await t.call("get_constitutional_decision_text", {"ID": latest["헌재결정례일련번호"]}, step=1)).records[0]
    article = (await _law_text(t, {"LM": law, "JO": _jo(number, branch)}, step=2, compare=("JO",)))[0]
    title = article.get("조문제목") or ""
    if t.variant % 2 == 0:
        t.ask(f"헌법재판소가 {law} 조항을 두고 가장 최근에 내린 결정은 어떤 결론이었나요? 그 결정에서 심판 대상이 된 "
              f"조문이 무엇을 규정하고 있는지도 설명해 주세요.")
    else:
        t.ask(f"{law}{_josa(law, ('과', '와'))} 관련해 헌법재판소가 가장 최근에 결정한 사건에서 문제가 된 조항은 "
              f"어떤 내용이고, 헌재는 그 조항에 대해 어떻게 판단했나요?")
    t.answer_judge(f"헌법재판소 {_day(latest['종국일자'])} {latest['사건번호']} 결정({latest['사건명']})입니다. "
                   f"주문은 '{_ruling(body['전문'])}'이며, 결정요지는 '{body['결정요지']}'입니다. "
                   f"심판대상조문인 {law} {_label(number, branch)}({title})는 다음과 같이 규정합니다: "
                   f"{_article_text(article)}")
    t.tags.append("judge")


# ------------------------------------------------------------------------------------ precedents

def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", html.replace("<br/>", " ")).strip()


def _year_range(year: int) -> str:
    return f"{year}0101~{year}1231"


async def _supreme_candidates(t: Draft, year: int) -> list[dict[str, Any]]:
    """For each case name the 대법원 used in ``year``: its last judgment that year, where that is one judgment
    and a search by the name finds only that name (the list rows, from every page of the year's judgments)."""
    rows = await t.explore_all("search_court_precedents", {"curt": SUPREME, "prncYd": _year_range(year)}, size=100)
    names = sorted({r["사건명"] for r in rows})
    out = []
    for name in names:
        if any(name in other and name != other for other in names):
            continue
        last = _unique_max([r for r in rows if r["사건명"] == name], key=lambda r: r["선고일자"])
        if last is not None:
            out.append(last)
    return out


async def _body(t: Draft, row: dict[str, Any]) -> dict[str, Any]:
    return (await t.explore("get_court_precedent_text", {"ID": row["판례일련번호"]})).records[0]


async def _substantive_articles(t: Draft, refs: list[tuple[str, int, int]]) -> bool:
    for law, number, branch in refs:
        text = await _law_text(t, {"LM": law, "JO": _jo(number, branch)})
        if len(text) != 1:
            raise DraftError(f"{t.task_id}: {law} {_label(number, branch)} is not in the law text")
        if not _substantive(text[0]):
            return False
    return True


def _latest_cited_case(body: dict[str, Any]) -> str | None:
    """The more recent of the earlier 대법원 judgments a body lists in 참조판례 (None: none, or a date tie)."""
    cited = {m.group(4): (int(m.group(1)), int(m.group(2)), int(m.group(3)))
             for m in _CITED_CASE.finditer(body.get("참조판례") or "")}
    best = _unique_max(sorted(cited), key=lambda no: cited[no])
    return best


async def _article_answers(t: Draft, refs: list[tuple[str, int, int]], step: int) -> list[str]:
    out = []
    for law, number, branch in refs:
        article = (await _law_text(t, {"LM": law, "JO": _jo(number, branch)}, step=step, compare=("JO",)))[0]
        title = article.get("조문제목") or ""
        out.append(f"{law} {_label(number, branch)}({title}): {_article_text(article)}")
    return out


async def _call_last_judgment(t: Draft, name: str, year: int, row: dict[str, Any]) -> dict[str, Any]:
    """Golden steps 0–1: the year's 대법원 judgments of that name → the last one's text."""
    await _search(t, "search_court_precedents", {"query": name, "curt": SUPREME, "prncYd": _year_range(year)},
                  step=0, compare=("query", "prncYd"))
    return (await t.call("get_court_precedent_text", {"ID": row["판례일련번호"]}, step=1)).records[0]


_TRIES = 20  # fitting candidates looked at for a substantive article before taking the first fit
_J3A_YEARS = (2023, 2021, 2019, 2024)


@template("law", count=2)
async def supreme_judgment_articles(t: Draft) -> None:
    """Case name + year → the 대법원's last such judgment that year → its text (참조조문) → each cited
    article (judge; two articles read in parallel for the first instance)."""
    want = 2 if t.variant % 2 == 0 else 1
    year = _J3A_YEARS[t.variant % len(_J3A_YEARS)]
    fallback, tries = None, 0
    for row in _ordered(t, await _supreme_candidates(t, year)):
        refs = _article_refs((await _body(t, row))["참조조문"])
        if len(refs) != want:
            continue
        fallback, tries = fallback or (row, refs), tries + 1
        if tries > _TRIES or await _substantive_articles(t, refs):
            row, refs = fallback if tries > _TRIES else (row, refs)
            break
    else:
        if fallback is None:
            raise DraftError(f"{t.task_id}: no {year} judgment citing {want} articles")
        row, refs = fallback
    name = row["사건명"]
    body = await _call_last_judgment(t, name, year, row)
    articles = await _article_answers(t, refs, step=2)
    if t.variant % 2 == 0:
        t.ask(f"{year}년에 대법원이 마지막으로 선고한 '{name}' 사건 판결은 어떤 법 조문들을 참조했고, 그 조문들은 "
              f"각각 무엇을 규정하고 있나요? 판결의 요지도 함께 알려 주세요.")
    else:
        t.ask(f"'{name}' 사건으로 대법원이 {year}년 중 가장 늦게 내린 판결의 요지를 알려 주시고, 그 판결이 참조한 "
              f"조문이 어떤 내용인지도 설명해 주세요.")
    t.answer_judge(f"대법원 {_day(row['선고일자'])} 선고 {row['사건번호']} 판결입니다. 판결요지: "
                   f"{_plain(body['판결요지'])} 참조조문은 {body['참조조문']}이며, 조문 내용은 다음과 같습니다. "
                   + " / ".join(articles))
    t.tags.append("judge")


async def _cited_chain(t: Draft, year: int, need_article: bool
                       ) -> tuple[dict[str, Any], dict[str, Any], list[tuple[str, int, int]]]:
    """A judgment (the last of its name in ``year``) whose more recent 참조판례 is found by its case number
    alone and cites one article: (the judgment's row, the cited judgment's row, its article refs)."""
    fallback, tries = None, 0
    for row in _ordered(t, await _supreme_candidates(t, year)):
        number = _latest_cited_case(await _body(t, row))
        if number is None:
            continue
        cited = (await t.explore("search_court_precedents", {"nb": number}, page=1, size=100)).records
        if len(cited) != 1 or cited[0]["법원명"] != SUPREME:
            continue
        if not need_article:
            return row, cited[0], []
        refs = _article_refs((await _body(t, cited[0]))["참조조문"])
        if len(refs) != 1:
            continue
        fallback, tries = fallback or (row, cited[0], refs), tries + 1
        if tries > _TRIES:
            return fallback
        if await _substantive_articles(t, refs):
            return row, cited[0], refs
    if fallback is None:
        raise DraftError(f"{t.task_id}: no {year} judgment citing a single earlier judgment")
    return fallback


_J3B_YEARS = (2022, 2024, 2020, 2018)


@template("law", count=2)
async def cited_judgment_article(t: Draft) -> None:
    """Case name + year → last 대법원 judgment → its text (참조판례) → that judgment by case number → its text
    (참조조문) → the article (judge): five sequential steps."""
    year = _J3B_YEARS[t.variant % len(_J3B_YEARS)]
    row, cited, refs = await _cited_chain(t, year, need_article=True)
    name = row["사건명"]
    await _call_last_judgment(t, name, year, row)
    await _search(t, "search_court_precedents", {"nb": cited["사건번호"]}, step=2)
    cited_body = (await t.call("get_court_precedent_text", {"ID": cited["판례일련번호"]}, step=3)).records[0]
    articles = await _article_answers(t, refs, step=4)
    if t.variant % 2 == 0:
        t.ask(f"{year}년에 대법원이 마지막으로 선고한 '{name}' 판결의 참조판례 가운데 더 최근 판결은 어떤 조문을 "
              f"참조했으며, 그 조문은 어떤 내용인가요?")
    else:
        t.ask(f"'{name}' 사건에서 대법원이 {year}년 가장 늦게 선고한 판결에 참조판례가 나오는데, 그중 선고일이 더 "
              f"늦은 판결이 근거로 삼은 조문과 그 조문의 내용을 알려 주세요.")
    t.answer_judge(f"{year}년 마지막 '{name}' 대법원 판결은 {_day(row['선고일자'])} 선고 {row['사건번호']} "
                   f"판결이고, 그 참조판례 중 더 최근 것은 대법원 {_day(cited['선고일자'])} 선고 {cited['사건번호']} "
                   f"판결({cited['사건명']})입니다. 이 판결의 참조조문은 {cited_body['참조조문']}이며, 조문 내용은 "
                   f"다음과 같습니다. " + " / ".join(articles))
    t.tags.append("judge")


@template("law", count=1)
async def note_cited_judgment(t: Draft) -> None:
    """Case name + year → last 대법원 judgment → its text (참조판례) → the more recent cited case number
    written to a note (ENVIRONMENT)."""
    year = 2023
    row, cited, _ = await _cited_chain(t, year, need_article=False)
    name = row["사건명"]
    await _call_last_judgment(t, name, year, row)
    key = "참조판례_사건번호"
    await t.call("write_note", {"key": key, "text": cited["사건번호"]}, step=2)
    t.ask(f"{year}년에 대법원이 마지막으로 선고한 '{name}' 판결에 참조판례로 나오는 대법원 판결 중 선고일이 더 최근인 "
          f"판결의 사건번호를 '{key}'라는 키로 메모해 두세요. 메모 내용은 사건번호만 적어 주세요.")
    t.state_only()
    t.tags.append("environment")


# ------------------------------------------------------------- every precedent citing a law (paging)

# Statutes people know by name; which of them fit a template is read from the precedent lists.
CITED_LAWS = ("건축법", "도로교통법", "의료법", "자본시장과 금융투자업에 관한 법률", "게임산업진흥에 관한 법률",
              "개인정보 보호법", "상법", "국가배상법", "소득세법", "공직선거법", "교통사고처리 특례법", "예금자보호법",
              "주택임대차보호법", "특허법", "상표법", "가사소송법", "특정범죄 가중처벌 등에 관한 법률")




async def _citing(t: Draft, law: str, extra: dict[str, Any] | None = None) -> tuple[int, list[dict[str, Any]]]:
    """Exploring: how many precedents cite ``law`` (with ``extra`` filters), and all of them when they span
    two to three pages."""
    args = {"JO": law, **(extra or {})}
    first = await t.explore("search_court_precedents", args, page=1, size=100)
    total = first.total_count or 0
    if not 100 < total <= 300:
        return total, []
    return total, await t.explore_all("search_court_precedents", args, size=100)


@template("law", count=3)
async def case_kind_share(t: Draft) -> None:
    """Law → every precedent citing it (2–3 pages) → how many (or what share) are of a minority case kind."""
    pages = (2, 3, 2)[t.variant % 3]
    for law in _ordered(t, list(CITED_LAWS)):
        total, rows = await _citing(t, law)
        if not rows or -(-total // 100) != pages:
            continue
        kinds = Counter(r["사건종류명"] for r in rows).most_common()
        if len(kinds) >= 2 and kinds[-1][1] >= 10:
            kind, count = kinds[-1]
            break
    else:
        raise DraftError(f"{t.task_id}: no law whose precedents span {pages} pages and two case kinds")
    records, step = await t.call_all_pages("search_court_precedents", {"JO": law}, step=0)
    assert sum(r["사건종류명"] == kind for r in records) == count and len(records) == total
    obj = _josa(law, ("을", "를"))
    if t.variant == 0:
        major, n_major = kinds[0]
        ratio = await t.evaluate(f"{n_major}/{count}", step=step)
        t.ask(f"{law}{obj} 참조한 판례 가운데 {major} 사건은 {kind} 사건의 몇 배인가요? 소수점 둘째 자리까지 "
              f"알려 주세요.")
        t.answer_number(ratio)
    else:
        share = await t.evaluate(f"{count}/{total}*100", step=step)
        t.ask(f"{law}{obj} 참조조문으로 든 판례 전체에서 {kind} 사건이 차지하는 비율은 몇 퍼센트인가요? "
              f"소수점 둘째 자리까지 알려 주세요." if t.variant == 1 else
              f"{law} 관련 판례(그 법을 참조한 판례) 중 {kind} 사건의 비중을 백분율로 계산해 주세요.")
        t.answer_number(share)
    t.tags.append("arithmetic")
    t.tags.append("paging")


_YEAR_PAIRS = ((2023, 2024), (2021, 2022))


@template("law", count=2)
async def supreme_court_year(t: Draft) -> None:
    """A year's 대법원 judgments (every page) → the most frequent case name; or two years' judgments →
    the change in one case kind (parallel pages, then arithmetic)."""
    if t.variant == 0:
        year = 2024
        records, _ = await t.call_all_pages("search_court_precedents",
                                            {"curt": SUPREME, "prncYd": _year_range(year)}, step=0)
        top = _unique_most_common([r["사건명"] for r in records])
        if top is None:
            raise DraftError(f"{t.task_id}: the most frequent case name of {year} is tied")
        t.ask(f"{year}년 한 해 동안 대법원이 선고한 판결·결정 가운데 가장 많이 등장한 사건명은 무엇인가요?")
        t.answer_string(top[0])
        t.tags.append("reduction")
    else:
        y1, y2 = _YEAR_PAIRS[(t.variant - 1) % len(_YEAR_PAIRS)]
        first, _ = await t.call_all_pages("search_court_precedents", {"curt": SUPREME, "prncYd": _year_range(y1)},
                                          step=0)
        second, step = await t.call_all_pages("search_court_precedents",
                                              {"curt": SUPREME, "prncYd": _year_range(y2)}, step=0)
        kinds = sorted({r["사건종류명"] for r in first + second})
        kind = t.pick(kinds)
        a = sum(r["사건종류명"] == kind for r in first)
        b = sum(r["사건종류명"] == kind for r in second)
        change = await t.evaluate(f"{b} - {a}", step=step)
        t.ask(f"대법원이 선고한 {kind} 사건은 {y1}년에 비해 {y2}년에 몇 건 늘었나요? 줄었다면 음수로 답해 주세요.")
        t.answer_number(change)
        t.tags.append("arithmetic")
    t.tags.append("paging")


# two disjoint pools, so the note and the judge tasks ask about different laws
COURT_LAWS_JUDGE = ("자본시장과 금융투자업에 관한 법률", "상법", "국가배상법", "공직선거법", "예금자보호법")
COURT_LAWS_NOTE = ("개인정보 보호법", "도로교통법", "소득세법", "특허법", "주택임대차보호법")


async def _busiest_lower_court(t: Draft, law: str) -> tuple[list[dict[str, Any]], str] | None:
    total, rows = await _citing(t, law, {"org": LOWER_COURTS})
    if not rows or total > 200:
        return None
    top = _unique_most_common([r["법원명"] for r in rows])
    return (rows, top[0]) if top else None


@template("law", count=2)
async def busiest_court_latest(t: Draft) -> None:
    """Law → every lower-court precedent citing it (2 pages) → the court with the most → its latest such
    judgment → the judgment text (judge: the ruling and the reasons)."""
    for law in _ordered(t, list(COURT_LAWS_JUDGE)):
        found = await _busiest_lower_court(t, law)
        if found is None:
            continue
        rows, court = found
        latest = _unique_max([r for r in rows if r["법원명"] == court], key=lambda r: r["선고일자"])
        if latest is not None:
            break
    else:
        raise DraftError(f"{t.task_id}: no law with a busiest lower court")
    _, step = await t.call_all_pages("search_court_precedents", {"JO": law, "org": LOWER_COURTS}, step=0)
    body = (await t.call("get_court_precedent_text", {"ID": latest["판례일련번호"]}, step=step)).records[0]
    obj = _josa(law, ("을", "를"))
    if t.variant % 2 == 0:
        t.ask(f"{law}{obj} 참조한 하급심 판례를 가장 많이 선고한 법원은 어디이고, 그 법원이 이 법과 관련해 가장 "
              f"최근에 선고한 판결의 주문과 판결 요지는 무엇인가요?")
    else:
        t.ask(f"대법원을 제외한 법원들 가운데 {law} 관련 판례(그 법을 참조한 판례)가 제일 많은 곳을 찾아서, 그 "
              f"법원의 가장 최근 판결이 어떤 결론(주문)과 이유로 선고되었는지 알려 주세요.")
    t.answer_judge(f"{law}{obj} 참조한 하급심 판례가 가장 많은 법원은 {court}입니다. 그 법원의 가장 최근 판결은 "
                   f"{_day(latest['선고일자'])} 선고 {latest['사건번호']} {latest['사건명']} 사건이며, 주문은 "
                   f"'{_ruling(body['판례내용'])}'입니다. 판결요지: {_plain(body['판결요지'])}")
    t.tags += ["judge", "paging", "reduction"]


@template("law", count=1)
async def note_busiest_court(t: Draft) -> None:
    """Law → every lower-court precedent citing it (2 pages) → the busiest court's name written to a note."""
    for law in _ordered(t, list(COURT_LAWS_NOTE)):
        found = await _busiest_lower_court(t, law)
        if found is not None:
            break
    else:
        raise DraftError(f"{t.task_id}: no law with a busiest lower court")
    _, step = await t.call_all_pages("search_court_precedents", {"JO": law, "org": LOWER_COURTS}, step=0)
    key = "하급심_최다_법원"
    await t.call("write_note", {"key": key, "text": found[1]}, step=step)
    t.ask(f"{law}{_josa(law, ('을', '를'))} 참조한 하급심(대법원 제외) 판례를 가장 많이 선고한 법원 이름을 '{key}' 키로 "
          f"메모해 주세요. 메모에는 법원 이름만 적어 주세요.")
    t.state_only()
    t.tags += ["environment", "paging", "reduction"]


# ------------------------------------------------------------------- decrees, rules and versions

@template("law", count=2)
async def decree_rule_gap(t: Draft) -> None:
    """Topic + ministry → the 법률's 시행령 and 시행규칙 (their MSTs) → both texts in parallel → the
    difference in article counts (arithmetic)."""
    for topic in _ordered(t, list(TOPICS)):
        found, law = await _law_by_topic(t, topic)
        acts = sorted({r["소관부처명"] for r in found if r["법령구분명"] == KIND_LAW})
        for ministry in acts:
            _, law = await _law_by_topic(t, topic, ministry)
            if law is None:
                continue
            name = law["법령명한글"]
            decree = [r for r in found if r["법령명한글"] == f"{name} 시행령"]
            rule = [r for r in found if r["법령명한글"] == f"{name} 시행규칙"]
            if len(decree) == 1 and len(rule) == 1:
                n_decree = len(_articles(await _law_text(t, {"MST": decree[0]["법령일련번호"]})))
                n_rule = len(_articles(await _law_text(t, {"MST": rule[0]["법령일련번호"]})))
                if n_decree != n_rule:
                    break
        else:
            continue
        break
    else:
        raise DraftError(f"{t.task_id}: no topic law with a 시행령 and a 시행규칙 of different lengths")
    await _search(t, "search_laws", {"query": topic}, step=0, compare=("query",))
    n_decree = len(_articles(await _law_text(t, {"MST": decree[0]["법령일련번호"]}, step=1, compare=("MST",))))
    n_rule = len(_articles(await _law_text(t, {"MST": rule[0]["법령일련번호"]}, step=1, compare=("MST",))))
    big, small = max(n_decree, n_rule), min(n_decree, n_rule)
    gap = await t.evaluate(f"{big} - {small}", step=2)
    if t.variant % 2 == 0:
        t.ask(f"{topic} 관련 법률 가운데 {ministry} 소관 법률의 시행령과 시행규칙을 비교하면, 장 제목을 빼고 조문 수만 "
              f"셌을 때 어느 쪽이 몇 개 더 많은가요? 차이를 숫자로 답해 주세요.")
    else:
        t.ask(f"{ministry}{_josa(ministry, ('이', '가'))} 소관하는 {topic} 분야 법률에 딸린 시행령과 시행규칙의 조문 "
              f"개수(장·절 제목 제외) 차이는 몇 개인가요?")
    t.answer_number(gap)
    t.tags.append("arithmetic")


def _reviewed_law(decision: dict[str, Any]) -> str | None:
    m = _ARTICLE.match(decision["사건명"].rsplit(" ", 1)[0])
    return m.group(1).strip() if m else None


_MINISTRY_YEARS = (2021, 2019, 2017, 2022)


@template("law", count=2)
async def last_decision_ministry(t: Draft) -> None:
    """Year → the Constitutional Court's last decision that year → the law it reviewed → its ministry (string);
    the second instance goes on to count that ministry's 법률 (by its ministry code)."""
    for year in [*_MINISTRY_YEARS[t.variant % 2::2], *range(2015, 2025)]:
        decisions = await t.explore_all("search_constitutional_decisions", {"edYd": _year_range(year)}, size=100)
        if len(decisions) > 100:
            continue
        last = _unique_max(decisions, key=lambda d: d["종국일자"])
        law_name = _reviewed_law(last) if last else None
        if law_name is None:
            continue
        laws = [r for r in (await t.explore("search_laws", {"query": law_name}, page=1, size=100)).records
                if r["법령명한글"] == law_name]
        if len(laws) == 1:
            law = laws[0]
            break
    else:
        raise DraftError(f"{t.task_id}: no year whose last decision reviews one current law")
    await _search(t, "search_constitutional_decisions", {"edYd": _year_range(year), "sort": "ddes"}, step=0,
                  compare=("edYd",))
    await _search(t, "search_laws", {"query": law_name}, step=1, compare=("query",))
    ministry = law["소관부처명"]
    if t.variant % 2 == 0:
        t.ask(f"헌법재판소가 {year}년에 마지막으로 내린 결정에서 심판 대상이 된 법률은 어느 부처 소관인가요?")
        t.answer_string(ministry)
    else:
        count = await t.call("search_laws", {"org": law["소관부처코드"], "knd": KIND_LAW}, step=2, compare=("org",),
                             page=1, size=100)
        t.ask(f"{year}년 헌법재판소의 마지막 결정에서 다룬 법률의 소관 부처가 맡고 있는 현행 법률(시행령·시행규칙 "
              f"제외)은 모두 몇 개인가요?")
        t.answer_number(count.total_count or 0)


@template("law", count=1)
async def version_in_force(t: Draft) -> None:
    """Law → the Court's latest decision on it (its date, the article) → the law's versions by effective date
    → the one in force that day (its MST) → that version's article → since when it was in force (string)."""
    fallback, tries = None, 0
    for law in _ordered(t, await _recent_reviewed_laws(t)):
        latest = await _latest_decision(t, law)
        if latest is None:
            continue
        found = await t.explore_all("search_laws_by_effective_date", {"query": law}, size=100)
        versions = [v for v in found if v["법령명한글"] == law]
        in_force = _unique_max([v for v in versions if v["시행일자"] <= latest["종국일자"]],
                               key=lambda v: v["시행일자"])
        if in_force is None or len(found) > 100:
            continue
        refs = _article_refs(latest["사건명"].rsplit(" ", 1)[0])
        jo = _jo(refs[0][1], refs[0][2])
        if len(await _law_text(t, {"MST": in_force["법령일련번호"], "JO": jo},
                               tool="get_law_text_by_effective_date")) != 1:
            continue
        fallback, tries = fallback or (law, latest, in_force, jo), tries + 1
        if in_force["현행연혁코드"] != "현행" or tries > _TRIES:
            law, latest, in_force, jo = (law, latest, in_force, jo) if tries <= _TRIES else fallback
            break
    else:
        if fallback is None:
            raise DraftError(f"{t.task_id}: no reviewed law with a version in force")
        law, latest, in_force, jo = fallback
    await _search(t, "search_constitutional_decisions", {"query": law, "sort": "ddes"}, step=0, compare=("query",))
    await _search(t, "search_laws_by_effective_date", {"query": law}, step=1, compare=("query",))
    article = (await _law_text(t, {"MST": in_force["법령일련번호"], "JO": jo}, step=2, compare=("MST", "JO"),
                               tool="get_law_text_by_effective_date"))[0]
    t.ask(f"헌법재판소가 {law} 조항에 대해 가장 최근에 결정을 선고한 날 시행 중이던 {law} 버전을 보면, 그 결정의 심판 "
          f"대상 조문의 조문 시행일자는 언제로 되어 있나요?")
    t.answer_string(*_date_answers(article["조문시행일자"]))
