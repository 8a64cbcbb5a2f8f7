"""Yearly statistics datasets (인구, 사업체, 자동차등록, …) of the two portals.

Gyeonggi publishes a statistics table per reference year (``…Stat2019`` … ``…Stat2025``), one
row per 시·군 and breakdown category; Seoul publishes one table per topic with every year,
one row per 기간 (GIGAN), 자치구 (JACHIGU) and category, filtered by GIGAN. Counts scale with
the region's population and drift a little from year to year; rates stay in their range.
Statistics are facts about the 56 real regions, so they are not scaled with the world.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

YEARS = tuple(range(2019, 2026))

_AGES = "0~4세|5~9세|10~14세|15~19세|20~24세|25~29세|30~34세|35~39세|40~44세|45~49세|50~54세|55~59세|60~64세|65~69세|70~74세|75~79세|80세이상"
_INDUSTRY = ("농업, 임업 및 어업|광업|제조업|전기, 가스, 증기 및 공기조절 공급업|수도, 하수 및 폐기물 처리업|건설업|도매 및 소매업|"
             "운수 및 창고업|숙박 및 음식점업|정보통신업|금융 및 보험업|부동산업|전문, 과학 및 기술 서비스업|"
             "사업시설 관리, 사업 지원 및 임대 서비스업|공공행정, 국방 및 사회보장 행정|교육 서비스업|보건업 및 사회복지 서비스업|"
             "예술, 스포츠 및 여가관련 서비스업|협회 및 단체, 수리 및 기타 개인 서비스업")


@dataclass(frozen=True)
class Measure:
    """One value column: a count per 10k inhabitants and category, a rate within a range, or a part.

    A part (``part="share"``) is the first measure times a share in [lo, hi] (검거 of 발생,
    남자 of 인구); ``part="rest"`` is the first measure minus the previous one (여자 인구).
    """

    name: str
    description: str
    lo: float  # count: mean per 10k inhabitants per category; rate/share: lower bound
    hi: float = 0.0  # rate/share: upper bound (0 marks a count)
    decimals: int = 0
    part: str = ""  # "" | "share" | "rest"


@dataclass(frozen=True)
class StatsTopic:
    ko: str
    gloss: str
    category_field: str  # breakdown column ("" = one row per region)
    category_desc: str
    categories: str  # "|"-separated
    measures: tuple[Measure, ...]


def _m(name: str, desc: str, lo: float, hi: float = 0.0, decimals: int = 0, part: str = "") -> Measure:
    return Measure(name, desc, lo, hi, decimals, part)


def _share(name: str, desc: str, lo: float, hi: float) -> Measure:
    return Measure(name, desc, lo, hi, 0, "share")


def _rest(name: str, desc: str) -> Measure:
    return Measure(name, desc, 0, 0, 0, "rest")


STATS_TOPICS: tuple[StatsTopic, ...] = (
    StatsTopic("주민등록인구 현황", "Population", "AGE_GRP_NM", "연령대", _AGES,
               (_m("POPLTN_CNT", "인구수(명)", 590), _share("MALE_POPLTN_CNT", "남자인구수(명)", 0.46, 0.53),
                _rest("FEMALE_POPLTN_CNT", "여자인구수(명)"))),
    StatsTopic("세대 현황", "Household", "HSHLD_MBR_DIV_NM", "세대원수", "1인|2인|3인|4인|5인|6인이상",
               (_m("HSHLD_CNT", "세대수", 700),)),
    StatsTopic("외국인주민 현황", "Foreign Resident", "NATION_NM", "국적",
               "중국(한국계)|중국|베트남|태국|우즈베키스탄|필리핀|미국|캄보디아|네팔|기타",
               (_m("RESIDNT_CNT", "외국인주민수(명)", 40),)),
    StatsTopic("사업체 현황", "Establishment", "INDUST_CLASS_NM", "산업대분류", _INDUSTRY,
               (_m("BIZESTBL_CNT", "사업체수(개)", 50), _share("WORKR_CNT", "종사자수(명)", 2, 9))),
    StatsTopic("자동차등록 현황", "Vehicle Registration", "CAR_KIND_NM", "차종", "승용|승합|화물|특수",
               (_m("REGIST_CNT", "등록대수(대)", 1200),)),
    StatsTopic("주택 현황", "Housing", "HOUSE_TYPE_NM", "주택유형", "단독주택|아파트|연립주택|다세대주택|비거주용건물내주택",
               (_m("HOUSE_CNT", "주택수(호)", 700),)),
    StatsTopic("출생 현황", "Birth", "SEX_NM", "성별", "남자|여자", (_m("BIRTH_CNT", "출생아수(명)", 25),)),
    StatsTopic("사망 현황", "Death", "SEX_NM", "성별", "남자|여자", (_m("DEATH_CNT", "사망자수(명)", 28),)),
    StatsTopic("혼인·이혼 현황", "Marriage Divorce", "", "", "",
               (_m("MRRG_CNT", "혼인건수(건)", 38), _m("DIVRC_CNT", "이혼건수(건)", 17))),
    StatsTopic("국민기초생활보장 수급자 현황", "Basic Livelihood Recipient", "SUPLY_TYPE_NM", "급여유형",
               "일반수급자|시설수급자|특례수급자", (_m("RECIPTR_CNT", "수급자수(명)", 120), _share("HSHLD_CNT", "수급가구수", 0.6, 0.75))),
    StatsTopic("등록장애인 현황", "Registered Disabled", "DSPSN_TYPE_NM", "장애유형",
               "지체|뇌병변|시각|청각|언어|지적|자폐성|정신|신장|심장|호흡기|간|안면|장루·요루|뇌전증",
               (_m("DSPSN_CNT", "등록장애인수(명)", 35),)),
    StatsTopic("노인인구 현황", "Elderly Population", "AGE_GRP_NM", "연령대", "65~69세|70~74세|75~79세|80~84세|85세이상",
               (_m("POPLTN_CNT", "인구수(명)", 330),)),
    StatsTopic("어린이집 통계", "Daycare Statistics", "CHILDCARE_TYPE_NM", "어린이집유형",
               "국공립|사회복지법인|법인·단체등|민간|가정|직장|협동",
               (_m("FACLT_CNT", "어린이집수(개소)", 2), _share("CHILD_CNT", "보육아동수(명)", 15, 60))),
    StatsTopic("의료기관 현황", "Medical Institution", "MEDINST_KIND_NM", "종별",
               "상급종합병원|종합병원|병원|요양병원|의원|치과의원|한의원|약국",
               (_m("INST_CNT", "기관수(개소)", 3), _m("SICKBD_CNT", "병상수(개)", 40))),
    StatsTopic("도시공원 현황", "Urban Park Statistics", "PARK_DIV_NM", "공원구분", "근린공원|어린이공원|소공원|체육공원|문화공원",
               (_m("PARK_CNT", "공원수(개소)", 2), _m("PARK_AR", "공원면적(천㎡)", 30, 0, 1))),
    StatsTopic("도로 현황", "Road", "ROAD_KIND_NM", "도로종류", "고속국도|일반국도|지방도|시군도",
               (_m("ROAD_LEN", "도로연장(km)", 4, 0, 1), _m("PAVMNT_RT", "포장률(%)", 85, 100, 1))),
    StatsTopic("상하수도 보급 현황", "Water Supply", "", "", "",
               (_m("WTRSPLY_RT", "상수도보급률(%)", 92, 100, 1), _m("SEWER_RT", "하수도보급률(%)", 85, 100, 1),
                _m("SUPLY_POPLTN_CNT", "급수인구(명)", 9800))),
    StatsTopic("생활폐기물 발생 현황", "Household Waste", "WASTE_KIND_NM", "폐기물종류", "종량제|음식물|재활용|대형폐기물",
               (_m("GENRT_QTY", "발생량(톤/일)", 2.5, 0, 1),)),
    StatsTopic("화재발생 현황", "Fire Occurrence", "FIRE_PLC_NM", "발화장소", "주거|비주거|차량|임야|기타",
               (_m("FIRE_CNT", "화재건수(건)", 1.5), _m("INJRY_CNT", "인명피해(명)", 0.1),
                _m("PROPRT_DMG_AMT", "재산피해(천원)", 1200))),
    StatsTopic("교통사고 현황", "Traffic Accident", "ACDNT_TYPE_NM", "사고유형", "차대사람|차대차|차량단독",
               (_m("ACDNT_CNT", "발생건수(건)", 13), _share("DEATH_CNT", "사망자수(명)", 0, 0.03),
                _share("INJPSN_CNT", "부상자수(명)", 1.2, 1.6))),
    StatsTopic("5대범죄 발생 현황", "Five Major Crime", "CRIME_KIND_NM", "범죄유형", "살인|강도|강간·강제추행|절도|폭력",
               (_m("OCCRRNC_CNT", "발생건수(건)", 17), _share("ARREST_CNT", "검거건수(건)", 0.55, 0.97))),
    StatsTopic("세출예산 현황", "Expenditure Budget", "FIELD_NM", "분야",
               "일반공공행정|공공질서및안전|교육|문화및관광|환경|사회복지|보건|농림해양수산|산업·중소기업및에너지|교통및물류|국토및지역개발|예비비",
               (_m("BUDGET_AMT", "예산액(백만원)", 90),)),
    StatsTopic("지방세 징수 현황", "Local Tax Collection", "TAX_ITEM_NM", "세목",
               "취득세|등록면허세|주민세|재산세|자동차세|지방소득세|담배소비세|지방교육세",
               (_m("LEVY_AMT", "부과액(백만원)", 60), _share("COLLCT_AMT", "징수액(백만원)", 0.9, 0.99))),
    StatsTopic("공무원 현황", "Civil Servant", "RANK_NM", "직급", "3급이상|4급|5급|6급|7급|8급|9급|연구·지도직",
               (_m("OFCR_CNT", "공무원수(명)", 4),)),
    StatsTopic("토지이용 현황", "Land Use", "LAND_CTGRY_NM", "지목", "전|답|임야|대|공장용지|도로|하천|공원|기타",
               (_m("LAND_AR", "면적(천㎡)", 350, 0, 1), _m("LOT_CNT", "필지수", 120))),
    StatsTopic("건축허가 현황", "Building Permit", "BLDG_USE_NM", "용도", "주거용|상업용|공업용|문교사회용|기타",
               (_m("PERMIT_CNT", "허가건수(동)", 9), _m("TOT_FLOOR_AR", "연면적(㎡)", 4200))),
    StatsTopic("문화시설 현황", "Culture Facility Statistics", "FACLT_KIND_NM", "시설종류",
               "공공도서관|박물관|미술관|공연장|문예회관|지방문화원|문화의집",
               (_m("FACLT_CNT", "시설수(개소)", 0.4),)),
    StatsTopic("공공체육시설 현황", "Sports Facility Statistics", "FACLT_KIND_NM", "시설종류",
               "육상경기장|축구장|야구장|체육관|수영장|테니스장|골프연습장|간이운동장",
               (_m("FACLT_CNT", "시설수(개소)", 1.2),)),
    StatsTopic("관광객 현황", "Tourist Visitor", "MONTH_NM", "월", "1월|2월|3월|4월|5월|6월|7월|8월|9월|10월|11월|12월",
               (_m("VISITR_CNT", "관광객수(명)", 2600),)),
    StatsTopic("고용 현황", "Employment", "SEX_NM", "성별", "계|남자|여자",
               (_m("ECNMY_ACTV_POPLTN_CNT", "경제활동인구(천명)", 3.3, 0, 1), _m("EMPLY_RT", "고용률(%)", 55, 68, 1),
                _m("UNEMPLY_RT", "실업률(%)", 2, 5, 1))),
)


def stats_values(rng: np.random.Generator, topic: StatsTopic, weights: np.ndarray,
                 n_years: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """Values for every (year, region, category): (year index, region index, category index) + one array per measure.

    Rows come year-major, then region, then category.
    """
    cats = topic.categories.split("|") if topic.categories else [""]
    n_reg, n_cat = len(weights), len(cats)
    year = np.repeat(np.arange(n_years), n_reg * n_cat)
    region = np.tile(np.repeat(np.arange(n_reg), n_cat), n_years)
    cat = np.tile(np.arange(n_cat), n_years * n_reg)
    share = rng.dirichlet(np.full(n_cat, 3.0)) * n_cat  # uneven categories, mean 1
    trend = 1 + 0.015 * year + rng.normal(0, 0.03, len(year))
    values: list[np.ndarray] = []
    for m in topic.measures:
        if m.part == "share":
            v = values[0] * rng.uniform(m.lo, m.hi, len(year))
        elif m.part == "rest":
            v = values[0] - values[-1]
        elif m.hi:
            v = rng.uniform(m.lo, m.hi, len(year))
        else:
            v = m.lo * weights[region] * share[cat] * trend * rng.lognormal(0, 0.15, len(year))
        values.append(np.round(v, m.decimals))
    return year, region, cat, values
