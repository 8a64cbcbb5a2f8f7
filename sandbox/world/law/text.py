"""Korean legal prose from templates: statute articles (조문/항/호) and chapter headings.

Every function is pure given its arguments and the numpy generator it is handed, so the law
world stays a function of the seed. Articles come back as plain tuples; ``law.py`` turns
them into columns.
"""

from __future__ import annotations

import json

import numpy as np

from .facts import REAL_ARTICLE_TEXT

CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"

# title -> paragraphs; a paragraph is text or (text, [호 texts]). {act} is 이 법/이 영/이 규칙.
TEMPLATES: dict[str, list] = {
    "정의": [("{act}에서 사용하는 용어의 뜻은 다음과 같다.", [
        "\"{t}\"이란 {t}와 관련된 활동 및 그 결과물을 말한다.",
        "\"{t}사업자\"란 {t}에 관한 사업을 영리 목적으로 경영하는 자를 말한다.",
        "\"{t}시설\"이란 {t}에 제공되는 시설로서 대통령령으로 정하는 시설을 말한다."])],
    "국가 등의 책무": ["① 국가와 지방자치단체는 {t}의 건전한 발전을 위한 시책을 수립ㆍ시행하여야 한다.",
                   "② 국가와 지방자치단체는 제1항에 따른 시책에 필요한 재원을 확보하도록 노력하여야 한다."],
    "다른 법률과의 관계": ["{t}에 관하여 다른 법률에 특별한 규정이 있는 경우를 제외하고는 {act}에서 정하는 바에 따른다."],
    "기본계획의 수립": [("① {head}은 {t}의 발전을 위하여 5년마다 기본계획을 수립하여야 한다.", []),
                   ("② 기본계획에는 다음 각 호의 사항이 포함되어야 한다.", [
                       "{t}의 현황과 여건 분석", "{t} 정책의 기본방향 및 목표", "재원의 확보 및 배분에 관한 사항",
                       "그 밖에 {t}의 발전을 위하여 필요한 사항"])],
    "시행계획": ["① {head}과 관계 중앙행정기관의 장은 기본계획에 따라 매년 시행계획을 수립ㆍ시행하여야 한다.",
             "② 시행계획의 수립ㆍ시행에 필요한 사항은 대통령령으로 정한다."],
    "실태조사": ["① {head}은 {t}에 관한 정책 수립을 위하여 실태조사를 실시할 수 있다.",
             "② 제1항에 따른 실태조사의 범위와 방법 등에 필요한 사항은 대통령령으로 정한다."],
    "위원회의 설치": ["{t}에 관한 중요 사항을 심의하기 위하여 {head} 소속으로 {t}위원회를 둔다."],
    "지원": ["국가와 지방자치단체는 {t}사업자에게 예산의 범위에서 필요한 비용의 전부 또는 일부를 지원할 수 있다."],
    "등록": ["① {t}사업을 하려는 자는 {head}에게 등록하여야 한다. 등록한 사항을 변경하려는 경우에도 또한 같다.",
           "② 제1항에 따른 등록의 요건ㆍ절차 등에 필요한 사항은 대통령령으로 정한다."],
    "결격사유": [("다음 각 호의 어느 하나에 해당하는 자는 제{n1}조에 따른 등록을 할 수 없다.", [
        "피성년후견인", "파산선고를 받고 복권되지 아니한 자",
        "{act}을 위반하여 징역 이상의 실형을 선고받고 그 집행이 끝나거나 면제된 날부터 2년이 지나지 아니한 자"])],
    "등록의 취소": ["{head}은 {t}사업자가 거짓이나 그 밖의 부정한 방법으로 등록한 경우에는 등록을 취소하여야 한다."],
    "청문": ["{head}은 제{n1}조에 따라 등록을 취소하려면 청문을 하여야 한다."],
    "보고 및 검사": ["① {head}은 필요하다고 인정하면 {t}사업자에게 업무에 관한 보고를 하게 할 수 있다.",
                "② 제1항에 따라 검사를 하는 공무원은 그 권한을 표시하는 증표를 지니고 이를 관계인에게 내보여야 한다."],
    "권한의 위임ㆍ위탁": ["{act}에 따른 {head}의 권한은 대통령령으로 정하는 바에 따라 그 일부를 시ㆍ도지사에게 위임할 수 있다."],
    "벌칙 적용에서 공무원 의제": ["제{n1}조에 따라 위탁받은 업무에 종사하는 사람은 「형법」 제129조부터 제132조까지의 "
                          "규정을 적용할 때에는 공무원으로 본다."],
    "벌칙": ["거짓이나 그 밖의 부정한 방법으로 제{n1}조에 따른 등록을 한 자는 2년 이하의 징역 또는 2천만원 이하의 "
           "벌금에 처한다."],
    "양벌규정": ["법인의 대표자나 법인 또는 개인의 대리인, 사용인, 그 밖의 종업원이 그 법인 또는 개인의 업무에 관하여 "
             "제{n1}조의 위반행위를 하면 그 행위자를 벌하는 외에 그 법인 또는 개인에게도 해당 조문의 벌금형을 과(科)한다."],
    "과태료": [("① 다음 각 호의 어느 하나에 해당하는 자에게는 500만원 이하의 과태료를 부과한다.", [
        "제{n1}조에 따른 변경등록을 하지 아니한 자", "제{n2}조에 따른 보고를 하지 아니하거나 거짓으로 보고한 자"]),
        ("② 제1항에 따른 과태료는 대통령령으로 정하는 바에 따라 {head}이 부과ㆍ징수한다.", [])],
}
BODY_TITLES = ("국가 등의 책무", "다른 법률과의 관계", "기본계획의 수립", "시행계획", "실태조사", "위원회의 설치",
               "지원", "등록", "결격사유", "등록의 취소", "청문", "보고 및 검사")
TAIL_TITLES = ("권한의 위임ㆍ위탁", "벌칙 적용에서 공무원 의제", "벌칙", "양벌규정", "과태료")
NEUTRAL_TITLES = ("적용 범위", "다른 법률과의 관계", "권한의 위임ㆍ위탁", "준용", "경과조치")
NEUTRAL_TEXT = ("{t}에 관하여 필요한 사항은 대통령령으로 정하는 바에 따른다.",
                "제{n1}조의 규정은 {t}의 경우에 이를 준용한다.",
                "이 조에 따른 처분의 기준과 절차에 관하여 필요한 사항은 {head}이 정하여 고시한다.")
CHAPTERS = ("총칙", "{t} 기본계획 등", "{t}사업", "지원 및 육성", "감독", "보칙", "벌칙")

ACT_WORD = {"법률": "이 법", "헌법": "이 헌법", "대통령령": "이 영", "총리령": "이 규칙", "부령": "이 규칙"}


def head_of(ministry: str) -> str:
    """The official who acts under a ministry's laws: 국토교통부 → 국토교통부장관, 경찰청 → 경찰청장."""
    if ministry.endswith("부"):
        return ministry + "장관"
    if ministry.endswith(("청", "처")):
        return ministry + "장"
    return ministry


def purpose_text(kind: str, name: str, parent: str, goal: str) -> str:
    if kind == "대통령령":
        return f"이 영은 「{parent}」에서 위임된 사항과 그 시행에 필요한 사항을 규정함을 목적으로 한다."
    if kind in ("총리령", "부령"):
        return (f"이 규칙은 「{parent}」 및 같은 법 시행령에서 위임된 사항과 그 시행에 필요한 사항을 "
                f"규정함을 목적으로 한다.")
    return f"이 법은 {goal}에 이바지함을 목적으로 한다."


def _paragraphs(spec: list, fmt: dict) -> list[tuple[str, list[str]]]:
    out = []
    for p in spec:
        text, items = (p, []) if isinstance(p, str) else p
        out.append((text.format(**fmt), [i.format(**fmt) for i in items]))
    return out


def article_body(number: int, branch: int, title: str, paragraphs: list[tuple[str, list[str]]]
                 ) -> tuple[str, str | None]:
    """조문내용 and the 항 JSON (None when the article is one plain paragraph)."""
    label = f"제{number}조" + (f"의{branch}" if branch else "") + (f"({title})" if title else "")
    if len(paragraphs) == 1 and not paragraphs[0][1] and not paragraphs[0][0].startswith("①"):
        return f"{label} {paragraphs[0][0]}", None
    hang = []
    for text, items in paragraphs:
        marker = text[0] if text[:1] in CIRCLED else ""
        entry: dict = {"항번호": marker, "항내용": text} if marker else {"항내용": text}
        if items:
            entry["호"] = [{"호번호": f"{k}.", "호내용": f"{k}. {item}"} for k, item in enumerate(items, 1)]
        hang.append(entry)
    return label, json.dumps(hang, ensure_ascii=False)


def real_paragraphs(law: str, number: int, branch: int) -> list[tuple[str, list[str]]] | None:
    text = REAL_ARTICLE_TEXT.get((law, number, branch))
    return None if text is None else [(line, []) for line in text.split("\n")]


def law_articles(rng: np.random.Generator, *, name: str, kind: str, parent: str, topic: str, goal: str,
                 ministry: str, key_articles: list[tuple[int, int, str]], n_articles: int
                 ) -> list[tuple[int, int, str, str, str, str | None]]:
    """One law's articles in order: (조문번호, 조문가지번호, 조문여부, 조문제목, 조문내용, 항 JSON).

    Real laws keep their real article numbers and titles (gaps filled with neutral articles);
    generated laws number 1..n with a 목적/정의 head, a template body and a penalty tail.
    """
    fmt = {"t": topic, "head": head_of(ministry), "act": ACT_WORD.get(kind, "이 법"), "n1": 0, "n2": 0}
    if key_articles:
        plan = _real_plan(rng, key_articles, n_articles)
    else:
        body = [BODY_TITLES[i] for i in sorted(rng.choice(len(BODY_TITLES), size=min(len(BODY_TITLES),
                                                                                     max(0, n_articles - 7)),
                                                          replace=False))]
        filler = max(0, n_articles - 2 - len(body) - len(TAIL_TITLES))
        titles = ["목적", "정의", *body, *[NEUTRAL_TITLES[i % len(NEUTRAL_TITLES)] for i in range(filler)],
                  *TAIL_TITLES]
        plan = [(i + 1, 0, t) for i, t in enumerate(titles)]
    rows: list[tuple[int, int, str, str, str, str | None]] = []
    chapter_every = max(6, len(plan) // 5)
    chapter = 0
    for idx, (number, branch, title) in enumerate(plan):
        if idx % chapter_every == 0 and kind != "헌법":
            last = chapter > 0 and idx + chapter_every >= len(plan)
            heading = ("보칙" if key_articles else "벌칙") if last else CHAPTERS[min(chapter, len(CHAPTERS) - 2)]
            chapter += 1
            rows.append((number, branch, "전문", "", f"제{chapter}장 {heading.format(t=topic)}", None))
        fmt["n1"] = int(rng.integers(1, max(2, number)))
        fmt["n2"] = int(rng.integers(1, max(2, number)))
        paragraphs = real_paragraphs(name, number, branch)
        if paragraphs is None:
            if title == "목적" and number == 1:
                paragraphs = [(purpose_text(kind, name, parent, goal), [])]
            elif title in TEMPLATES:
                paragraphs = _paragraphs(TEMPLATES[title], fmt)
            else:
                paragraphs = [(NEUTRAL_TEXT[int(rng.integers(len(NEUTRAL_TEXT)))].format(**fmt), [])]
        content, hang = article_body(number, branch, "" if kind == "헌법" else title, paragraphs)
        rows.append((number, branch, "조문", "" if kind == "헌법" else title, content, hang))
    return rows


def _real_plan(rng: np.random.Generator, keys: list[tuple[int, int, str]], n_articles: int
               ) -> list[tuple[int, int, str]]:
    known = {(n, b) for n, b, _ in keys}
    top = max(n for n, _, _ in keys)
    free = [n for n in range(1, top + 1) if (n, 0) not in known]
    extra = min(len(free), max(0, n_articles - len(keys)))
    picked = sorted(int(x) for x in rng.choice(free, size=extra, replace=False)) if extra else []
    plan = [(n, b, t) for n, b, t in keys]
    plan += [(n, 0, "목적" if n == 1 else NEUTRAL_TITLES[n % len(NEUTRAL_TITLES)]) for n in picked]
    return sorted(plan)
