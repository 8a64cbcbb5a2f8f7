"""The catalogue of national qualifications run by HRD Korea (한국산업인력공단, Q-Net).

Names are the real HRDK qualification names (field stem + grade: 기술사, 기능장, 기사,
산업기사, 기능사; service-field grades 1급/2급/단일등급; and the 국가전문자격 HRDK runs).
Only the 종목코드 (jmCd) we are sure of are fixed; the others get codes in the grade's real
range (기사 1xxx, 산업기사 2xxx, 기능사 6xxx–7xxx, ...), drawn without collisions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Grade letter → (name suffix, seriesCd, seriesNm, grdCd, jmCd range).
GRADES = {
    "T": ("기술사", "01", "기술사", "10", (100, 900)),
    "M": ("기능장", "02", "기능장", "20", (900, 1000)),
    "E": ("기사", "03", "기사", "30", (1000, 2000)),
    "I": ("산업기사", "05", "산업기사", "31", (2000, 2700)),
    "C": ("기능사", "04", "기능사", "40", (6000, 8000)),
    "1": ("1급", "07", "1급", "32", (2700, 2850)),
    "2": ("2급", "08", "2급", "33", (2850, 3000)),
    "S": ("", "09", "단일등급", "39", (2700, 3000)),
}

# Field stem: grade letters it is examined in.
_STEMS = (
    "정보처리:EIC 전기:MEIC 전자:EIC 전자계산기:EC 정보통신:TEI 무선설비:EIC 통신설비:MC 방송통신:EIC "
    "컴퓨터시스템응용:T 정보관리:T 일반기계:E 기계설계:I 기계정비:MIC 건설기계설비:EI 건설기계정비:MEIC "
    "공조냉동기계:EIC 에너지관리:MEIC 용접:TMEIC 금형:MC 건축:EI 건축시공:T 건축구조:T 건축설비:EI "
    "건축일반시공:MI 실내건축:EIC 토목:EI 토목시공:T 토목구조:T 콘크리트:EI 건설재료시험:EIC "
    "측량및지형공간정보:TEI 지적:TEIC 조경:TEIC 도시계획:TE 교통:TEI 산업안전:TEI 건설안전:TEI "
    "가스:TMEIC 화공:TE 화학분석:EC 위험물:MIC 대기환경:TEI 수질환경:TEI 폐기물처리:TEI 소음진동:TEI "
    "토양환경:TE 자연생태복원:EI 식품:TEI 조리:M 제과:MC 제빵:C 자동차정비:MEIC 철도차량:EI 항공:EI "
    "항공기정비:C 산림:TEIC 식물보호:EI 시설원예:TE 농화학:TE 종자:EIC 수산양식:TEIC 어로:TEI "
    "배관:MIC 판금제관:MIC 금속재료:TEIC 전기철도:TEI 발송배전:T 건축전기설비:T 전기응용:T 전자응용:T "
    "의류:TEI 섬유:EI 승강기:EIC 귀금속가공:MIC 화훼장식:IC 컬러리스트:EI 시각디자인:EI 제품디자인:EI "
    "품질경영:TEI 인간공학:TE 광해방지:TEI 원자력발전:E 설비보전:EC 생산자동화:IC 전자부품장착:IC "
    "농작업안전보건:E 방재:E 해양환경:TE 임산가공:EI 축산:TEIC 유기농업:EIC 바이오화학제품제조:EI "
    "비파괴검사:TEIC 소방설비:EI 열처리:TMIC 표면처리:TMIC 주조:TMIC 압연:MC 제강:MC 제선:MC "
    "전산응용건축제도:C 전산응용기계제도:C 전산응용토목제도:C 컴퓨터응용선반:IC 컴퓨터응용밀링:C "
    "웹디자인:C 한식조리:C 양식조리:C 중식조리:C 일식조리:C 복어조리:C 떡제조:C 조주:C 지게차운전:C "
    "굴착기운전:C 기중기운전:C 불도저운전:C 로더운전:C 천장크레인운전:C 타워크레인운전:C 세탁:C 도배:C "
    "미장:C 타일:C 조적:C 방수:C 도장:C 철근:C 거푸집:C 보석가공:C 전자캐드:C 정밀측정:IC 공유압:C "
    "산업위생관리:TEI 인쇄:EIC 사진:C 영사:IC 가구제작:IC 목공예:C 도자기공예:C"
)
# Names that do not follow "stem + grade" (and service-field qualifications with 1급/2급).
_IRREGULAR = (
    ("미용사(일반)", "C"), ("미용사(피부)", "C"), ("미용사(네일)", "C"), ("미용사(메이크업)", "C"), ("이용사", "C"),
    ("사회조사분석사1급", "1"), ("사회조사분석사2급", "2"), ("직업상담사1급", "1"), ("직업상담사2급", "2"),
    ("컨벤션기획사1급", "1"), ("컨벤션기획사2급", "2"), ("소비자전문상담사1급", "1"), ("소비자전문상담사2급", "2"),
    ("임상심리사1급", "1"), ("임상심리사2급", "2"), ("전자상거래관리사1급", "1"), ("전자상거래관리사2급", "2"),
    ("게임기획전문가", "S"), ("게임그래픽전문가", "S"), ("게임프로그래밍전문가", "S"),
    ("멀티미디어콘텐츠제작전문가", "S"), ("스포츠경영관리사", "S"), ("텔레마케팅관리사", "S"),
    ("국제의료관광코디네이터", "S"), ("소방설비기사(기계분야)", "E"), ("소방설비기사(전기분야)", "E"),
)
# 국가전문자격 that HRDK examines (qualgbCd S); each is its own series.
PROFESSIONAL = ("공인노무사", "세무사", "관세사", "변리사", "감정평가사", "공인중개사", "경비지도사",
                "경영지도사", "기술지도사", "청소년상담사", "청소년지도사", "물류관리사", "주택관리사보",
                "산업보건지도사", "산업안전지도사", "행정사", "가맹거래사", "손해평가사")
# jmCd known from Q-Net.
KNOWN_CODES = {"정보처리기사": "1320", "전기기사": "1150", "정보처리산업기사": "2290", "정보처리기능사": "6921",
               "한식조리기능사": "7910", "제과기능사": "7916", "제빵기능사": "7917", "미용사(일반)": "7937",
               "전기기능사": "7780", "지게차운전기능사": "7875"}
# Qualifications that draw the crowds (relative popularity boost).
POPULAR = {"정보처리기사": 40, "지게차운전기능사": 30, "한식조리기능사": 30, "굴착기운전기능사": 20,
           "전기기능사": 25, "전기기사": 25, "산업안전기사": 25, "직업상담사2급": 15, "제과기능사": 12,
           "제빵기능사": 12, "미용사(일반)": 15, "사회조사분석사2급": 12, "전기산업기사": 12,
           "건설안전기사": 10, "소방설비기사(전기분야)": 12, "정보처리기능사": 10, "공조냉동기계기능사": 8}


@dataclass(frozen=True)
class Qual:
    jm_cd: str
    jm_nm: str
    qualgb_cd: str  # T 국가기술자격 / S 국가전문자격
    series_cd: str
    series_nm: str
    grade: str  # key of GRADES, or "P" for 국가전문자격
    popularity: float


def catalogue(rng: np.random.Generator) -> list[Qual]:
    """Every qualification with a unique 4-digit jmCd."""
    entries: list[tuple[str, str]] = []
    for item in _STEMS.split():
        stem, letters = item.split(":")
        entries += [(stem + GRADES[g][0], g) for g in letters]
    entries += list(_IRREGULAR)
    used = set(KNOWN_CODES.values())
    out = []
    for name, g in entries:
        code = KNOWN_CODES.get(name)
        if code is None:
            lo, hi = GRADES[g][4]
            while code is None or code in used:
                code = f"{int(rng.integers(lo, hi)):04d}"
            used.add(code)
        pop = float(np.exp(rng.normal(0, 1.0))) * {"T": 0.05, "M": 0.1, "E": 1, "I": 0.6, "C": 1.2}.get(g, 0.4)
        out.append(Qual(code, name, "T", GRADES[g][1], GRADES[g][2], g, pop * POPULAR.get(name, 1)))
    for i, name in enumerate(PROFESSIONAL):
        code = f"{8000 + 10 * i:04d}"
        out.append(Qual(code, name, "S", f"{21 + i}", name, "P", 1.0))
    return sorted(out, key=lambda q: q.jm_cd)
