"""KOPA-Bench templates: district administration (Gyeonggi ``gg_*`` and Seoul ``seoul_*`` datasets).

Every tool is a dataset of a local administration. Gyeonggi datasets filter by city (SIGUN_NM); Seoul's
facility datasets by district (CGG_NM), its yearly statistics by year and district (GIGAN, JACHIGU), and
its LOCALDATA licence datasets are one tool per district and business type, filtered by a status code
(TRDSTATEGBN: 01 영업/정상) that the user never names. Tasks fan out over cities or districts in
parallel (per-capita comparisons, licence counts), rank a statistic and follow the winner into a
facility dataset, page through a district's licences (1,000-3,000 records), and write watchlists.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..draft import Draft, DraftError
from ..registry import template
from ..values import number

SEOUL_GU = {
    "db": "도봉구", "dd": "동대문구", "dj": "동작구", "ep": "은평구", "ga": "관악구", "gb": "강북구", "gc": "금천구",
    "gd": "강동구", "gj": "광진구", "gn": "강남구", "gr": "구로구", "gs": "강서구", "jg": "중구", "jn": "종로구",
    "jr": "중랑구", "mp": "마포구", "nw": "노원구", "sb": "성북구", "sc": "서초구", "sd": "성동구", "sm": "서대문구",
    "sp": "송파구", "yc": "양천구", "yd": "영등포구", "ys": "용산구",
}
GU_CODE = {name: code for code, name in SEOUL_GU.items()}


# ------------------------------------------------------------------------------------------ helpers





def _total(records: list[dict[str, Any]], field: str, key: str | None = None) -> dict[str, int] | int:
    """The sum of ``field`` (per ``key`` when given)."""
    if key is None:
        return int(sum(number(r[field]) for r in records))
    sums: dict[str, int] = defaultdict(int)
    for r in records:
        sums[r[key]] += int(number(r[field]))
    return dict(sums)


def _ranked(sums: dict[str, float], rank: int = 0) -> str:
    """The key at ``rank`` (0 = largest), refusing ties around it."""
    order = sorted(sums, key=lambda k: (-sums[k], k))
    values = [sums[k] for k in order]
    if values.count(values[rank]) > 1:
        raise DraftError(f"tie at rank {rank}: {values[rank]}")
    return order[rank]


def _ga(word: str) -> str:
    """``word`` with the subject particle 이/가 its last syllable takes."""
    last = word.rstrip(")")[-1]
    has_coda = "가" <= last <= "힣" and (ord(last) - 0xAC00) % 28 != 0
    return word + ("이" if has_coda else "가")


def _localdata(code: str, gu: str) -> str:
    return f"seoul_localdata_{code}_{GU_CODE[gu]}"


# ------------------------------------------------------------------------- Gyeonggi: per-capita fan-out

# (facility tool, what it is, age groups counted (None = everyone), per how many people, the people)
_PER_CAPITA = (
    ("gg_children_playground", "어린이놀이시설", ("0~4세", "5~9세"), 1000, "0~9세 어린이 1,000명"),
    ("gg_small_library", "작은도서관", None, 100000, "인구 10만 명"),
    ("gg_public_swimming_pool", "공공 수영장", None, 100000, "인구 10만 명"),
)


@template("district", count=3)
async def gg_facility_per_capita(t: Draft) -> None:
    """Cities → each city's facilities and population (all in parallel) → per-capita figures → the higher city."""
    tool, facility, ages, per, people = _PER_CAPITA[t.variant % len(_PER_CAPITA)]
    births = await t.explore("gg_birth_stat_2025", {}, size=1000)
    cities = sorted({r["SIGUN_NM"] for r in births.records})
    if t.variant == 0:  # the two cities with more playgrounds than one page holds
        sizes = {}
        for city in cities:
            sizes[city] = (await t.explore(tool, {"SIGUN_NM": city}, size=1)).total_count or 0
        chosen = sorted(c for c in cities if sizes[c] > 1000)[:2]
    else:
        chosen = sorted(t.rng.sample([c for c in cities if not c.endswith("군")], 3))
    counts, people_of = {}, {}
    step = 0
    for city in chosen:
        records, nxt = await t.call_all_pages(tool, {"SIGUN_NM": city}, step=0)
        counts[city] = len(records)
        step = max(step, nxt)
    for city in chosen:
        pop, _ = await t.call_all_pages("gg_population_stat_2025", {"SIGUN_NM": city}, step=0)
        people_of[city] = sum(int(number(r["POPLTN_CNT"])) for r in pop if ages is None or r["AGE_GRP_NM"] in ages)
    ratios = {}
    for city in chosen:
        ratios[city] = await t.evaluate(f"{per} * {counts[city]} / {people_of[city]}", step=step)
    best = _ranked(ratios)
    listed = ", ".join(chosen)
    t.ask((f"2025년 주민등록인구 기준으로 {listed} 중 {people}당 {facility} 수가 가장 많은 곳은 어디인가요?",
           f"{listed} 가운데 {people}당 {_ga(facility)} 제일 많은 시는 어디예요? 2025년 인구 통계로 계산해 주세요.")
          [t.variant % 2])
    t.answer_string(best)
    t.tags += ["fan-out", "per-capita", "arithmetic"]


@template("district", count=1)
async def gg_stat_growth_fanout(t: Draft) -> None:
    """Cities × two years of a statistic (parallel) → each city's growth → the fastest-growing city."""
    births = await t.explore("gg_birth_stat_2025", {}, size=1000)
    cities = sorted(t.rng.sample(sorted({r["SIGUN_NM"] for r in births.records if r["SIGUN_NM"].endswith("시")}), 3))
    totals: dict[tuple[str, int], int] = {}
    step = 0
    for year in (2024, 2025):
        for city in cities:
            rows, nxt = await t.call_all_pages(f"gg_traffic_accident_stat_{year}", {"SIGUN_NM": city}, step=0)
            totals[city, year] = _total(rows, "ACDNT_CNT")
            step = max(step, nxt)
    growth = {}
    for city in cities:
        a, b = totals[city, 2024], totals[city, 2025]
        growth[city] = await t.evaluate(f"100 * ({b} - {a}) / {a}", step=step)
    best = _ranked(growth)
    t.ask(f"{', '.join(cities)} 중에서 교통사고 건수가 2024년보다 2025년에 가장 크게 늘어난(증가율 기준) 곳은 어디인가요?")
    t.answer_string(best)
    t.tags += ["fan-out", "arithmetic"]


# ------------------------------------------------------------------ Gyeonggi: rank a statistic, then follow

@template("district", count=3)
async def gg_top_city_followup(t: Draft) -> None:
    """A 2025 statistic for every city → the top city → one of its facility datasets → a figure."""
    if t.variant == 0:
        crime, _ = await t.call_all_pages("gg_five_major_crime_stat_2025", {}, step=0)
        city = _ranked(_total(crime, "OCCRRNC_CNT", "SIGUN_NM"))
        cctv, step = await t.call_all_pages("gg_cctv_installation", {"SIGUN_NM": city}, step=1)
        patrol = sum(int(number(r["CAMERA_CNT"])) for r in cctv if r["INSTL_PURPS_NM"] == "생활방범")
        cameras = sum(int(number(r["CAMERA_CNT"])) for r in cctv)
        value = await t.evaluate(f"100 * {patrol} / {cameras}", step=step)
        t.ask("2025년에 5대 범죄가 가장 많이 발생한 경기도 시·군에 설치된 CCTV 카메라 중 생활방범용 카메라는 몇 %인가요? "
              "카메라 대수 기준으로, 소수 둘째 자리까지 알려 주세요.")
        t.answer_number(round(value, 2))
        t.tags += ["reduction", "arithmetic"]
    elif t.variant == 1:
        births, _ = await t.call_all_pages("gg_birth_stat_2025", {}, step=0)
        per_city = _total(births, "BIRTH_CNT", "SIGUN_NM")
        city = _ranked(per_city, 1)
        care, step = await t.call_all_pages("gg_postnatal_care_center",
                                            {"SIGUN_NM": city, "BSN_STATE_NM": "영업/정상"}, step=1)
        value = await t.evaluate(f"1000 * {len(care)} / {per_city[city]}", step=step)
        t.ask("경기도에서 2025년 출생아 수가 두 번째로 많은 시·군을 찾아서, 지금 영업 중인 산후조리업소가 출생아 "
              "1,000명당 몇 곳인지 소수 둘째 자리까지 알려 주세요.")
        t.answer_number(round(value, 2))
        t.tags += ["reduction", "arithmetic"]
    else:
        accidents, _ = await t.call_all_pages("gg_traffic_accident_stat_2025", {}, step=0)
        city = _ranked(_total(accidents, "ACDNT_CNT", "SIGUN_NM"))
        zones, step = await t.call_all_pages("gg_child_protection_zone", {"SIGUN_NM": city}, step=1)
        without = sum(1 for z in zones if z["CCTV_INSTL_YN"] == "N")
        value = await t.evaluate(f"100 * {without} / {len(zones)}", step=step)
        t.ask("2025년 교통사고가 가장 많았던 경기도 시·군의 어린이보호구역 중 CCTV가 설치되지 않은 곳은 몇 %인가요? "
              "소수 둘째 자리까지 알려 주세요.")
        t.answer_number(round(value, 2))
        t.tags += ["reduction", "arithmetic"]


# ------------------------------------------------------------------- Seoul: licences across districts

# (LOCALDATA business code, what the user calls it)
_LICENCES = (("010102", "의원"), ("016010", "약국"), ("072218", "제과점"), ("036018", "노래연습장"),
             ("056003", "세탁소"), ("036038", "헬스장(체력단련장)"))


@template("district", count=3)
async def seoul_licence_fanout(t: Draft) -> None:
    """Four districts → each district's licence dataset for a business, operating only (parallel) → a comparison."""
    code, business = _LICENCES[t.pick(range(len(_LICENCES)))]
    gus = sorted(t.rng.sample(sorted(GU_CODE), 4))
    counts = {}
    step = 0
    for gu in gus:
        records, nxt = await t.call_all_pages(_localdata(code, gu), {"TRDSTATEGBN": "01"}, step=0)
        counts[gu] = len(records)
        step = max(step, nxt)
    high, low = _ranked(counts), _ranked(counts, len(gus) - 1)
    listed = ", ".join(gus)
    if t.variant == 0:
        value = await t.evaluate(f"{counts[high]} - {counts[low]}", step=step)
        t.ask(f"{listed} 중에서 현재 영업 중인 {_ga(business)} 가장 많은 구와 가장 적은 구의 차이는 몇 곳인가요?")
        t.answer_number(value)
    elif t.variant == 1:
        await t.call("add_to_watchlist", {"list_name": f"{business} 많은 구", "item": high}, step=step)
        t.ask(f"{listed} 가운데 지금 영업 중인 {_ga(business)} 가장 많은 구를 '{business} 많은 구' 관심목록에 구 이름으로 "
              f"추가해 주세요. 메모는 남기지 마세요.")
        t.state_only()
    else:
        value = await t.evaluate(f"100 * {counts[high]} / ({' + '.join(str(counts[g]) for g in gus)})", step=step)
        t.ask(f"{listed}의 영업 중인 {business} 수를 비교해서, 가장 많은 구가 어디인지와 네 구 합계에서 차지하는 비중을 "
              f"설명해 주세요.")
        t.answer_judge(f"영업 중인 {business} 수는 {', '.join(f'{g} {counts[g]}곳' for g in gus)}으로 {_ga(high)} 가장 많고, "
                       f"네 구 합계의 {value:.2f}%를 차지합니다.")
    t.tags += ["fan-out", "code-lookup"]


# (LOCALDATA code, business, districts whose dataset holds 1,000-3,000 records)
_BIG_LICENCES = (("056001", "미용업소"), ("086014", "부동산중개업소"), ("116013", "다중이용업소"))


@template("district", count=3)
async def seoul_licence_history_paging(t: Draft) -> None:
    """Two districts' whole licence datasets for a business (every page, in parallel) → an extreme record."""
    code, business = _BIG_LICENCES[t.variant % len(_BIG_LICENCES)]
    sizes = {}
    for gu in sorted(GU_CODE):
        sizes[gu] = (await t.explore(_localdata(code, gu), {}, size=1)).total_count or 0
    big = sorted(g for g in sizes if 1000 < sizes[g] <= 3000)
    pair = sorted(t.rng.sample(big, 2))
    data = {}
    step = 0
    for gu in pair:
        data[gu], nxt = await t.call_all_pages(_localdata(code, gu), {}, step=0)
        step = max(step, nxt)
    a, b = pair
    if t.variant == 0:
        widest = {g: max(data[g], key=lambda r: number(r["SITEAREA"] or 0)) for g in pair}
        areas = {g: number(widest[g]["SITEAREA"]) for g in pair}
        value = await t.evaluate(f"{areas[a]} - {areas[b]}", step=step)
        t.ask(f"폐업한 곳까지 포함해서 {a}와 {b}의 {business} 인허가 기록 중 각 구에서 소재지 면적이 가장 넓은 곳을 찾고, "
              f"{a} 쪽 면적에서 {b} 쪽 면적을 뺀 값(㎡)을 소수 둘째 자리까지 알려 주세요.")
        t.answer_number(round(value, 2))
    elif t.variant == 1:
        everything = [r for g in pair for r in data[g] if r["APVPERMYMD"]]
        oldest = sorted(everything, key=lambda r: r["APVPERMYMD"])
        if len(oldest) > 1 and oldest[0]["APVPERMYMD"] == oldest[1]["APVPERMYMD"]:
            raise DraftError(f"{t.task_id}: tied licence dates")
        t.ask(f"{a}와 {b}의 {business} 인허가 기록(폐업 포함)을 통틀어 인허가일자가 가장 빠른 곳의 사업장명은 무엇인가요?")
        t.answer_string(oldest[0]["BPLCNM"])
    else:
        recent = {g: sum(1 for r in data[g] if r["APVPERMYMD"][:4] >= "2020") for g in pair}
        value = await t.evaluate(f"{recent[a]} - {recent[b]}", step=step)
        t.ask(f"{a}와 {b}의 {business} 인허가 기록(폐업·휴업 포함) 중 2020년 이후에 인허가를 받은 건수를 각각 세어, "
              f"{a}가 {b}보다 몇 건 많은지(적으면 음수) 알려 주세요.")
        t.answer_number(value)
    t.tags += ["paging", "reduction"]


# ------------------------------------------------------------ Seoul: rank a statistic, then follow

@template("district", count=2)
async def seoul_top_gu_per_capita(t: Draft) -> None:
    """A 2024 statistic for every district → the top district → its facilities and population (parallel)
    → a per-capita figure."""
    if t.variant == 0:
        crime, _ = await t.call_all_pages("seoul_seoul_five_major_crime_stat", {"GIGAN": "2024"}, step=0)
        gu = _ranked(_total(crime, "OCCRRNC_CNT", "JACHIGU"))
        cctv, step = await t.call_all_pages("seoul_tb_cctv_installation_info", {"CGG_NM": gu}, step=1)
        pop, _ = await t.call_all_pages("seoul_seoul_population_stat", {"GIGAN": "2024", "JACHIGU": gu}, step=1)
        cameras = sum(int(number(r["CMR_CNT"])) for r in cctv)
        people = sum(int(number(r["POPLTN_CNT"])) for r in pop)
        value = await t.evaluate(f"10000 * {cameras} / {people}", step=step)
        t.ask("서울에서 2024년 5대 범죄 발생 건수가 가장 많았던 자치구는 CCTV 카메라가 2024년 주민등록인구 1만 명당 몇 대인가요? "
              "소수 둘째 자리까지 알려 주세요.")
    else:
        firms, _ = await t.call_all_pages("seoul_seoul_establishment_stat", {"GIGAN": "2024"}, step=0)
        gu = _ranked(_total(firms, "BIZESTBL_CNT", "JACHIGU"))
        markets, step = await t.call_all_pages("seoul_tb_traditional_market_info", {"CGG_NM": gu}, step=1)
        pop, _ = await t.call_all_pages("seoul_seoul_population_stat", {"GIGAN": "2024", "JACHIGU": gu}, step=1)
        stores = sum(int(number(r["STR_CNT"])) for r in markets)
        people = sum(int(number(r["POPLTN_CNT"])) for r in pop)
        value = await t.evaluate(f"1000 * {stores} / {people}", step=step)
        t.ask("2024년 사업체 수가 가장 많은 서울 자치구에서 전통시장 점포 수를 모두 더하면 2024년 인구 1,000명당 몇 개꼴인가요? "
              "소수 둘째 자리까지 알려 주세요.")
    t.answer_number(round(value, 2))
    t.tags += ["reduction", "per-capita", "arithmetic"]


@template("district", count=2)
async def top_market_watchlist(t: Draft) -> None:
    """The two most populous districts or cities → their traditional markets (parallel) → each one's biggest
    market → a watchlist (parallel writes)."""
    if t.variant == 0:
        pop, _ = await t.call_all_pages("seoul_seoul_population_stat", {"GIGAN": "2024"}, step=0)
        per = _total(pop, "POPLTN_CNT", "JACHIGU")
        places = [_ranked(per, 0), _ranked(per, 1)]
        tool, key, name, stores, list_name = "seoul_tb_traditional_market_info", "CGG_NM", "MRKT_NM", "STR_CNT", "장보기"
        where = "2024년 인구가 가장 많은 서울 자치구 두 곳"
    else:
        pop, _ = await t.call_all_pages("gg_population_stat_2025", {}, step=0)
        per = _total(pop, "POPLTN_CNT", "SIGUN_NM")
        places = [_ranked(per, 0), _ranked(per, 1)]
        tool, key, name, stores, list_name = "gg_traditional_market", "SIGUN_NM", "MRKT_NM", "STORE_CNT", "시장 나들이"
        where = "2025년 인구가 가장 많은 경기도 시·군 두 곳"
    biggest = []
    step = 2
    for place in places:
        markets, nxt = await t.call_all_pages(tool, {key: place}, step=1)
        step = max(step, nxt)
        ranked = sorted(markets, key=lambda m: -number(m[stores]))
        if not ranked or (len(ranked) > 1 and number(ranked[0][stores]) == number(ranked[1][stores])):
            raise DraftError(f"{t.task_id}: no single biggest market in {place}")
        biggest.append(ranked[0][name])
    for market in biggest:
        await t.call("add_to_watchlist", {"list_name": list_name, "item": market}, step=step)
    t.ask(f"{where}에서 각각 점포 수가 가장 많은 전통시장을 '{list_name}' 관심목록에 시장 이름으로 추가해 주세요. "
          f"메모는 필요 없어요.")
    t.state_only()
    t.tags += ["reduction", "fan-out"]
