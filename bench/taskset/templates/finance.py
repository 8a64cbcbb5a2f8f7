"""KOPA-Bench templates: finance (OpenDART, KRX prices, KDIC).

The running example of the paper (Figure 1/5) is the model: a company name → its DART corp code →
a filing (a convertible-bond issuance decision) and, in parallel, the stock's price on a day → a
percentage through ``evaluate_expression``, with ``current_date`` fixed in the system state. The other
templates page through a market's prices on a day (all markets: 3 pages of 1,000), a month's
exchange disclosures (pages of 100), compare two companies' key accounts, fan out over a quarter's
reports or a week's bond decisions, and add the company that meets a condition to a watchlist.
"""

from __future__ import annotations

import calendar
from collections import Counter
from datetime import date, timedelta
from typing import Any

from ..draft import Draft, DraftError
from ..registry import template
from ..values import number

# KRX closing days on weekdays in 2025-2026 (KRX 휴장일 notices): "어제" must be a trading day.
_KRX_HOLIDAYS = {
    "2025-01-01", "2025-01-27", "2025-01-28", "2025-01-29", "2025-01-30", "2025-03-03", "2025-05-01",
    "2025-05-05", "2025-05-06", "2025-06-03", "2025-06-06", "2025-08-15", "2025-10-03", "2025-10-06",
    "2025-10-07", "2025-10-08", "2025-10-09", "2025-12-25", "2025-12-31",
    "2026-01-01", "2026-02-16", "2026-02-17", "2026-02-18", "2026-03-02", "2026-05-01", "2026-05-05",
    "2026-05-25", "2026-06-03", "2026-08-17", "2026-09-24", "2026-09-25", "2026-10-05", "2026-10-09",
    "2026-12-25", "2026-12-31",
}
CB_FILING = "주요사항보고서(전환사채권발행결정)"
KOREAN_WEEKDAY = "월화수목금토일"


# ------------------------------------------------------------------------------------------ helpers

def _trading(day: date) -> bool:
    return day.weekday() < 5 and day.isoformat() not in _KRX_HOLIDAYS


def _ymd(day: date) -> str:
    return day.strftime("%Y%m%d")


def _today_after_trading_day(t: Draft, year: int, month: int) -> tuple[date, date]:
    """A current_date in (year, month) whose previous calendar day is a trading day (so "어제" has prices)."""
    days = [date(year, month, d) for d in range(2, calendar.monthrange(year, month)[1] + 1)]
    days = [d for d in days if _trading(d - timedelta(days=1)) and d.weekday() < 5]
    today = t.rng.choice(days)
    return today, today - timedelta(days=1)


def _month_range(year: int, month: int) -> tuple[str, str]:
    return f"{year}{month:02d}01", f"{year}{month:02d}{calendar.monthrange(year, month)[1]:02d}"


async def _corp_code(t: Draft, name: str, *, step: int) -> dict[str, Any]:
    """Golden: the company's DART record by name (partial match; the exact name is the one)."""
    found = await t.call("find_dart_corp_code", {"corp_name": name}, step=step)
    exact = [r for r in found.records if r["corp_name"] == name]
    if len(exact) != 1:
        raise DraftError(f"{t.task_id}: {name!r} does not resolve to one corp code ({len(exact)})")
    return exact[0]


async def _key_accounts(t: Draft, corp_code: str, year: str, reprt: str, *, step: int) -> list[dict[str, Any]]:
    result = await t.call("get_dart_single_company_key_accounts",
                          {"corp_code": corp_code, "bsns_year": year, "reprt_code": reprt}, step=step, size=100)
    if not result.records:
        raise DraftError(f"{t.task_id}: no key accounts for {corp_code} {year} {reprt}")
    return list(result.records)


def _account(records: list[dict[str, Any]], name: str, field: str = "thstrm_amount", fs: str = "CFS") -> int:
    rows = [r for r in records if r["account_nm"] == name and r["fs_div"] == fs]
    if len(rows) != 1 or not rows[0].get(field):
        raise DraftError(f"no single {fs} {name} {field}")
    return int(number(rows[0][field]))




def _unique_top(records: list[dict[str, Any]], key, *, reverse: bool = True) -> dict[str, Any]:
    """The record with the largest (or smallest) key; a tie would make the answer ambiguous."""
    ranked = sorted(records, key=key, reverse=reverse)
    if len(ranked) > 1 and key(ranked[0]) == key(ranked[1]):
        raise DraftError(f"tie at the top: {ranked[0]} / {ranked[1]}")
    return ranked[0]


def _flt(record: dict[str, Any]) -> float:
    return float(record["fltRt"])


def _md(day: date) -> str:
    return f"{day.month}월 {day.day}일"


def _josa(word: str, pair: str) -> str:
    """word + the particle that fits its last syllable: pair is "이가", "은는", "을를", "과와"."""
    last = word[-1]
    batchim = "가" <= last <= "힣" and (ord(last) - 0xAC00) % 28 != 0
    if not ("가" <= last <= "힣"):
        batchim = last.isdigit() and last in "013678"
    return word + (pair[0] if batchim else pair[1])


# ------------------------------------------------------------------------- Figure 5: CB floor gap

@template("finance", count=3)
async def cb_price_gap(t: Draft) -> None:
    """Company → corp code → its CB decision of a month ∥ yesterday's close → % gap (paper Figure 5)."""
    year, month = [(2026, 1), (2026, 4), (2026, 7)][t.variant % 3]
    bgn, end = _month_range(year, month)
    filings = await t.explore("search_dart_disclosures",
                              {"bgn_de": bgn, "end_de": end, "pblntf_ty": "B"}, size=100)
    per_corp = Counter(r["corp_name"] for r in filings.records if r["report_nm"] == CB_FILING)
    touched = {r["corp_name"] for r in filings.records if "전환사채" in r["report_nm"] and r["report_nm"] != CB_FILING}
    names = [r["corp_name"] for r in filings.records
             if r["report_nm"] == CB_FILING and per_corp[r["corp_name"]] == 1 and r["corp_name"] not in touched
             and r["stock_code"]]
    name = t.pick(names)
    today, yesterday = _today_after_trading_day(t, year, month + 1)
    t.today(today.isoformat())

    corp = await _corp_code(t, name, step=0)
    cb = await t.call("get_dart_convertible_bond_issuance_decision",
                      {"corp_code": corp["corp_code"], "bgn_de": bgn, "end_de": end}, step=1, compare=("corp_code",))
    price = await t.call("get_stock_price_trend", {"likeSrtnCd": corp["stock_code"], "basDt": _ymd(yesterday)},
                         step=1, compare=("likeSrtnCd", "basDt"))
    if len(cb.records) != 1 or len(price.records) != 1:
        raise DraftError(f"{t.task_id}: {name}: {len(cb.records)} CBs, {len(price.records)} prices")
    close = int(number(price.records[0]["clpr"]))
    if t.variant % 2 == 0:
        base = int(number(cb.records[0]["act_mktprcfl_cvprc_lwtrsprc"]))
        what = "리픽싱 최저 조정가액"
    else:
        base = int(number(cb.records[0]["cv_prc"]))
        what = "전환가액"
    value = await t.evaluate(f"100 * ({close} - {base}) / {base}", step=2)
    if t.variant == 0:
        t.ask(f"{_josa(name, '이가')} {year}년 {month}월에 발행을 결정한 전환사채를 기준으로, 어제 종가가 {what}보다 "
              f"몇 % 높은지(낮으면 음수로) 계산해 주세요. 소수점 둘째 자리까지요.")
    elif t.variant == 1:
        t.ask(f"{year}년 {month}월에 {_josa(name, '이가')} 공시한 전환사채 발행결정 건에서 {what} 대비 어제 종가의 괴리율(%)은 "
              f"얼마인가요? 소수점 둘째 자리까지 알려 주세요.")
    else:
        t.ask(f"{name} 전환사채({year}년 {month}월 발행결정분)의 {_josa(what, '과와')} 비교하면 어제 종가는 몇 % 위(아래면 음수)에 "
              f"있나요? 소수점 둘째 자리까지 답해 주세요.")
    t.answer_number(value)
    t.tags.append("figure5")


# ------------------------------------------------------------------ companies with a 2025 annual report

async def _annual_filers(t: Draft, day: str) -> list[dict[str, Any]]:
    """Listed companies that filed a consolidated 2025 business report on ``day`` (an exploring call)."""
    filed = await t.explore("search_dart_disclosures", {"bgn_de": day, "end_de": day, "pblntf_ty": "A"}, size=100)
    return sorted((r for r in filed.records
                   if r["report_nm"] == "사업보고서 (2025.12)" and r["stock_code"] and "연" in (r["rm"] or "")
                   and r["corp_cls"] in ("Y", "K")), key=lambda r: r["corp_code"])


def _two_filers(t: Draft, filers: list[dict[str, Any]], attempt: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two companies of one market, both with a consolidated 2025 business report."""
    first = t.pick((r["corp_code"] for r in filers), offset=attempt)
    a = next(r for r in filers if r["corp_code"] == first)
    peers = [r["corp_code"] for r in filers if r["corp_cls"] == a["corp_cls"] and r["corp_code"] != first]
    second = t.pick(peers, offset=3 + attempt)
    b = next(r for r in filers if r["corp_code"] == second)
    return a, b




# --------------------------------------------------------------- two companies' ratios from key accounts

@template("finance", count=3)
async def ratio_compare(t: Draft) -> None:
    """Two names → two corp codes ∥ → their 2025 key accounts ∥ → a ratio each ∥ → the better one (or the gap)."""
    filers = await _annual_filers(t, ["20260310", "20260317", "20260324"][t.variant])

    async def body(attempt: int) -> None:
        a, b = _two_filers(t, filers, attempt)
        codes = [await _corp_code(t, r["corp_name"], step=0) for r in (a, b)]
        accounts = [await _key_accounts(t, c["corp_code"], "2025", "11011", step=1) for c in codes]
        if t.variant == 0:  # operating margin: which is higher
            ratios = [await t.evaluate(f"100 * {_account(acc, '영업이익')} / {_account(acc, '매출액')}", step=2)
                      for acc in accounts]
            if ratios[0] == ratios[1]:
                raise DraftError("tie")
            winner = codes[ratios.index(max(ratios))]
            overview = await t.call("get_dart_company_overview", {"corp_code": winner["corp_code"]}, step=3)
            if not overview.records[0]["ceo_nm"]:
                raise DraftError("no CEO")
            t.ask(f"{_josa(a['corp_name'], '과와')} {b['corp_name']} 가운데 2025년 연결 기준 영업이익률(영업이익÷매출액)이 "
                  f"더 높은 회사의 대표이사는 누구인가요?")
            t.answer_string(overview.records[0]["ceo_nm"])
        elif t.variant == 1:  # debt ratio gap in percentage points
            ratios = [await t.evaluate(f"100 * {_account(acc, '부채총계')} / {_account(acc, '자본총계')}", step=2)
                      for acc in accounts]
            gap = await t.evaluate(f"{ratios[0]} - {ratios[1]}", step=3)
            t.ask(f"2025년 말 연결재무제표 기준으로 {a['corp_name']}의 부채비율(부채총계÷자본총계×100)은 "
                  f"{b['corp_name']}보다 몇 %p 높은가요? 낮다면 음수로, 소수점 둘째 자리까지 알려 주세요.")
            t.answer_number(gap)
        else:  # net margin: which is lower
            ratios = [await t.evaluate(f"100 * {_account(acc, '당기순이익')} / {_account(acc, '매출액')}", step=2)
                      for acc in accounts]
            if ratios[0] == ratios[1]:
                raise DraftError("tie")
            loser = (a, b)[ratios.index(min(ratios))]["corp_name"]
            t.ask(f"{a['corp_name']}, {b['corp_name']} 두 회사의 2025 사업연도 연결 매출 대비 당기순이익 비율을 비교해서 "
                  f"더 낮은 쪽 회사명을 알려 주세요.")
            t.answer_string(loser)

    await t.retry(body)
    t.tags.append("comparison")


# ------------------------------------------------------------------ a year's quarters: fan-out over reports

@template("finance", count=2)
async def best_quarter(t: Draft) -> None:
    """Name → corp code → Q1, H1, Q3 and annual reports ∥ → Q4 = annual − Q3 cumulative → the best quarter's figure."""
    filers = await _annual_filers(t, ["20260312", "20260319"][t.variant])
    account = ["매출액", "영업이익"][t.variant]

    async def body(attempt: int) -> None:
        pick = t.pick((r["corp_code"] for r in filers), offset=attempt)
        name = next(r["corp_name"] for r in filers if r["corp_code"] == pick)
        corp = await _corp_code(t, name, step=0)
        reports = {code: await _key_accounts(t, corp["corp_code"], "2025", code, step=1)
                   for code in ("11013", "11012", "11014", "11011")}
        quarters = [_account(reports[c], account) for c in ("11013", "11012", "11014")]
        annual = _account(reports["11011"], account)
        q3_cumulative = _account(reports["11014"], account, "thstrm_add_amount")
        quarters.append(int(await t.evaluate(f"{annual} - {q3_cumulative}", step=2)))
        best = max(quarters)
        if quarters.count(best) != 1:
            raise DraftError("tie")
        if t.variant == 0:
            share = await t.evaluate(f"100 * {best} / {annual}", step=3)
            t.ask(f"{name}의 2025년 연결 매출액을 분기별(1~4분기, 각 3개월)로 나눴을 때 가장 많았던 분기는 연간 매출의 "
                  f"몇 %를 차지하나요? 소수점 둘째 자리까지 알려 주세요.")
            t.answer_number(share)
            return
        else:
            t.ask(f"{name}의 2025년 분기 실적(연결, 분기별 3개월 기준) 중 영업이익이 가장 컸던 분기의 영업이익 금액을 원 "
                  f"단위로 알려 주세요. 4분기는 연간 실적에서 3분기 누적을 빼서 구해 주세요.")
        t.answer_number(best)

    await t.retry(body)
    t.tags.append("fan-out")


# ----------------------------------------------------------- a whole market's day: top mover → its company

async def _market_day(t: Draft, day: date, *, step: int, market: str | None = None) -> tuple[list[dict[str, Any]], int]:
    args = {"basDt": _ymd(day)} if market is None else {"basDt": _ymd(day), "mrktCls": market}
    records, nxt = await t.call_all_pages("get_stock_price_trend", args, step=step)
    if len(records) < 1000:
        raise DraftError(f"{t.task_id}: {len(records)} prices on {day} ({market})")
    return records, nxt


async def _corp_of_stock(t: Draft, stock_code: str, *, step: int) -> dict[str, Any]:
    found = await t.call("find_dart_corp_code", {"stock_code": stock_code}, step=step)
    if len(found.records) != 1:
        raise DraftError(f"{t.task_id}: stock {stock_code} → {len(found.records)} corps")
    return found.records[0]


@template("finance", count=3)
async def top_mover_company(t: Draft) -> None:
    """Yesterday's prices, every market (3 pages) → the top mover → its corp code → its company overview."""

    async def body(attempt: int) -> None:
        today, yesterday = _today_after_trading_day(t, 2026, [3, 6, 10][t.variant])
        t.today(today.isoformat())
        records, step = await _market_day(t, yesterday, step=0)
        if t.variant == 0:
            top = _unique_top(records, _flt)
            what, field = "가장 많이 오른 종목(등락률 기준)", "ceo_nm"
        elif t.variant == 1:
            top = _unique_top(records, _flt, reverse=False)
            what, field = "하락률이 가장 컸던 종목", "adres"
        else:
            top = _unique_top(records, _flt, reverse=False)
            what, field = "가장 크게 떨어진 종목", "ceo_nm"
        corp = await _corp_of_stock(t, top["srtnCd"], step=step)
        overview = await t.call("get_dart_company_overview", {"corp_code": corp["corp_code"]}, step=step + 1)
        value = overview.records[0][field]
        if not value:
            raise DraftError(f"{t.task_id}: empty {field}")
        if t.variant == 0:
            t.ask(f"어제 코스피·코스닥·코넥스 전체 상장 종목 중 {what}을 발행한 회사의 대표이사가 누구인지 알려 주세요.")
        elif t.variant == 2:
            t.ask(f"어제 장에서 전 종목 통틀어 {what}이 궁금해요. 그 회사 대표이사 이름을 알려 주세요.")
        else:
            t.ask(f"어제 국내 주식시장 전 종목을 통틀어 {what}은 어디였고, 그 회사 본사 주소는 어떻게 되나요? "
                  f"주소만 답해 주세요.")
        t.answer_string(value)

    await t.retry(body, tries=4)
    t.tags.append("reduction")


# -------------------------------------------------------------------- market breadth: counts over pages

@template("finance", count=2)
async def market_breadth(t: Draft) -> None:
    """Whole-market pages on two days (or two markets) ∥ → threshold counts → their difference."""
    if t.variant == 0:
        d1, d2 = date(2026, 4, 14), date(2026, 4, 21)
        first, _ = await t.call_all_pages("get_stock_price_trend", {"basDt": _ymd(d1), "mrktCls": "KOSDAQ"}, step=0)
        second, _ = await t.call_all_pages("get_stock_price_trend", {"basDt": _ymd(d2), "mrktCls": "KOSDAQ"}, step=0)
        c1 = sum(1 for r in first if _flt(r) >= 5)
        c2 = sum(1 for r in second if _flt(r) >= 5)
        value = await t.evaluate(f"{c1} - {c2}", step=2)
        t.ask(f"코스닥에서 하루 5% 이상 오른 종목 수를 비교하려고 해요. 2026년 {_md(d1)}은 2026년 {_md(d2)}보다 "
              f"몇 종목 많았나요? 적었다면 음수로 답해 주세요.")
    else:
        day = date(2026, 8, 20)
        kospi, _ = await t.call_all_pages("get_stock_price_trend", {"basDt": _ymd(day), "mrktCls": "KOSPI"}, step=0)
        kosdaq, _ = await t.call_all_pages("get_stock_price_trend", {"basDt": _ymd(day), "mrktCls": "KOSDAQ"}, step=0)
        up1, up2 = sum(1 for r in kospi if _flt(r) > 0), sum(1 for r in kosdaq if _flt(r) > 0)
        value = await t.evaluate(f"100 * {up1} / {len(kospi)} - 100 * {up2} / {len(kosdaq)}", step=2)
        t.ask(f"2026년 {_md(day)} 종가 기준으로 상승 마감한 종목의 비율(%)이 코스피가 코스닥보다 몇 %p 높았나요? "
              f"낮았다면 음수로, 소수점 둘째 자리까지 알려 주세요.")
    t.answer_number(value)
    t.tags.append("threshold")


# ------------------------------------------------------------------------- watchlist: yesterday's extreme

@template("finance", count=2)
async def watchlist_extreme_stock(t: Draft) -> None:
    """Yesterday's prices, every market (3 pages) → the extreme stock → added to a named watchlist (ENVIRONMENT)."""

    async def body(attempt: int) -> None:
        today, yesterday = _today_after_trading_day(t, 2026, [5, 9][t.variant])
        t.today(today.isoformat())
        records, step = await _market_day(t, yesterday, step=0)
        if t.variant == 0:
            top = _unique_top(records, _flt, reverse=False)
            await t.call("add_to_watchlist", {"list_name": "급락주", "item": top["itmsNm"]}, step=step)
            t.ask("어제 전체 상장 종목 중 하락률이 가장 컸던 종목을 '급락주' 관심목록에 종목명으로 추가해 주세요. "
                  "메모는 필요 없어요.")
        else:
            top = _unique_top(records, _flt)
            await t.call("add_to_watchlist", {"list_name": "상승률 1위", "item": top["srtnCd"]}, step=step)
            t.ask("어제 코스피·코스닥·코넥스를 통틀어 등락률이 가장 높았던 종목을 '상승률 1위' 관심목록에 6자리 종목코드로 "
                  "넣어 주세요. 메모는 달지 마세요.")

    await t.retry(body, tries=4)
    t.state_only()
    t.tags.append("watchlist")


# --------------------------------------------------------------- watchlist: the sounder of two companies

@template("finance", count=2)
async def watchlist_sounder_company(t: Draft) -> None:
    """Two names → codes ∥ → 2025 key accounts ∥ → a ratio each ∥ → the sounder one's stock code into a watchlist."""
    filers = await _annual_filers(t, ["20260313", "20260326"][t.variant])

    async def body(attempt: int) -> None:
        a, b = _two_filers(t, filers, attempt)
        codes = [await _corp_code(t, r["corp_name"], step=0) for r in (a, b)]
        accounts = [await _key_accounts(t, c["corp_code"], "2025", "11011", step=1) for c in codes]
        if t.variant == 0:
            ratios = [await t.evaluate(f"100 * {_account(acc, '부채총계')} / {_account(acc, '자본총계')}", step=2)
                      for acc in accounts]
            pick = codes[ratios.index(min(ratios))]
            list_name = "재무안정"
            t.ask(f"{_josa(a['corp_name'], '과와')} {b['corp_name']} 중 2025년 말 연결 부채비율이 더 낮은 회사를 "
                  f"'{list_name}' 관심목록에 종목코드(6자리)로 추가해 줘. 메모에는 그 회사 대표이사 이름만 적어 줘.")
        else:
            ratios = [await t.evaluate(f"100 * {_account(acc, '자본총계')} / {_account(acc, '자산총계')}", step=2)
                      for acc in accounts]
            pick = codes[ratios.index(max(ratios))]
            list_name = "자기자본 우량"
            t.ask(f"{a['corp_name']}, {b['corp_name']} 두 곳의 2025년 연결 재무상태표로 자기자본비율(자본총계÷자산총계)을 "
                  f"계산해서 더 높은 회사의 종목코드를 '{list_name}' 관심목록에 넣고, 메모란에는 그 회사 대표이사 이름만 "
                  f"넣어 주세요.")
        if ratios[0] == ratios[1]:
            raise DraftError("tie")
        overview = await t.call("get_dart_company_overview", {"corp_code": pick["corp_code"]}, step=3)
        ceo = overview.records[0]["ceo_nm"]
        if not ceo:
            raise DraftError("no CEO")
        await t.call("add_to_watchlist", {"list_name": list_name, "item": pick["stock_code"], "note": ceo}, step=4)

    await t.retry(body)
    t.state_only()
    t.tags.append("watchlist")


# --------------------------------------------------------------- a month's exchange filings: paged counts

@template("finance", count=2)
async def exchange_filing_count(t: Draft) -> None:
    """A month's exchange disclosures for KOSPI and KOSDAQ (pages of 100) ∥ → counts of one kind → the gap."""
    year, month = [(2026, 3), (2026, 6)][t.variant]
    kind = ["단일판매ㆍ공급계약체결", "현금ㆍ현물배당결정"][t.variant]
    bgn, end = _month_range(year, month)
    counts = []
    for cls in ("Y", "K"):
        records, _ = await t.call_all_pages("search_dart_disclosures",
                                            {"bgn_de": bgn, "end_de": end, "pblntf_ty": "I", "corp_cls": cls}, step=0)
        counts.append(sum(1 for r in records if r["report_nm"] == kind))
    value = await t.evaluate(f"{counts[1]} - {counts[0]}", step=2)
    if t.variant == 0:
        t.ask(f"{year}년 {month}월 한 달 동안 거래소 공시로 올라온 단일판매ㆍ공급계약 체결 공시(정정 제외)가 "
              f"코스닥 상장사 쪽이 코스피 상장사보다 몇 건 더 많았나요? 적었으면 음수로 답해 주세요.")
    else:
        t.ask(f"{year}년 {month}월에 코스닥 상장사들이 낸 현금ㆍ현물배당 결정 공시 건수에서 코스피 상장사들의 건수를 빼면 "
              f"얼마인가요? 정정 공시는 세지 말아 주세요.")
    t.answer_number(value)
    t.tags.append("count")


# ------------------------------------------------------------ one day's CB decisions: fan-out over filings

@template("finance", count=3)
async def largest_cb_of_day(t: Draft) -> None:
    """A day's major-matter filings → each CB decision ∥ → the largest issue → (its close that day → premium %)."""

    async def body(attempt: int) -> None:
        day = [date(2026, 3, 11), date(2026, 4, 16), date(2026, 6, 10)][t.variant] + timedelta(days=attempt)
        if not _trading(day):
            raise DraftError(f"{day} is not a trading day")
        filings = await t.call("search_dart_disclosures",
                               {"bgn_de": _ymd(day), "end_de": _ymd(day), "pblntf_ty": "B"}, step=0, size=100)
        cbs = sorted({(r["corp_code"], r["corp_name"], r["stock_code"]) for r in filings.records
                      if r["report_nm"] == CB_FILING})
        if not 3 <= len(cbs) <= 6:
            raise DraftError(f"{t.task_id}: {len(cbs)} CB filings on {day}")
        decisions = []
        for code, name, stock in cbs:
            result = await t.call("get_dart_convertible_bond_issuance_decision",
                                  {"corp_code": code, "bgn_de": _ymd(day), "end_de": _ymd(day)}, step=1,
                                  compare=("corp_code",))
            if len(result.records) != 1:
                raise DraftError(f"{t.task_id}: {name}: {len(result.records)} CB rows")
            decisions.append((name, stock, result.records[0]))
        name, stock, cb = _unique_top(decisions, lambda d: int(number(d[2]["bd_fta"])))
        if t.variant == 0:
            code = next(c for c, n, _ in cbs if n == name)
            overview = await t.call("get_dart_company_overview", {"corp_code": code}, step=2)
            if not overview.records[0]["ceo_nm"]:
                raise DraftError("no CEO")
            t.ask(f"2026년 {_md(day)}에 전환사채 발행 결정을 공시한 회사들 가운데 사채 권면총액이 가장 큰 곳의 대표이사는 "
                  f"누구인가요?")
            t.answer_string(overview.records[0]["ceo_nm"])
            return
        price = await t.call("get_stock_price_trend", {"likeSrtnCd": stock, "basDt": _ymd(day)}, step=2,
                             compare=("likeSrtnCd", "basDt"))
        if len(price.records) != 1:
            raise DraftError(f"{t.task_id}: no price for {stock} on {day}")
        close, conv = int(number(price.records[0]["clpr"])), int(number(cb["cv_prc"]))
        value = await t.evaluate(f"100 * ({conv} - {close}) / {close}", step=3)
        if t.variant == 1:
            t.ask(f"2026년 {_md(day)} 하루 동안 전환사채 발행결정을 공시한 회사 중 권면총액이 제일 큰 회사를 찾아서, 그 사채의 "
                  f"전환가액이 같은 날 그 회사 종가보다 몇 % 높은지(낮으면 음수) 소수점 둘째 자리까지 구해 주세요.")
        else:
            t.ask(f"{day.year}년 {_md(day)}자 전환사채권 발행결정 공시들 중 발행 규모(권면총액)가 최대인 건에 대해, 전환가액이 "
                  f"공시 당일 종가 대비 얼마나 할증(+) 또는 할인(-)됐는지 %로 소수점 둘째 자리까지 알려 주세요.")
        t.answer_number(value)

    await t.retry(body)
    t.tags.append("fan-out")


# -------------------------------------------------------------------- KDIC: the fund's peak month, YoY

@template("finance", count=2)
async def fund_peak_month_growth(t: Draft) -> None:
    """An account's year of monthly fund build-up → its peak premium month → the same month a year earlier → growth %."""
    account, year = [("손해보험계정", "2025"), ("상호저축은행계정", "2024")][t.variant]
    months = await t.call("get_deposit_insurance_fund_buildup", {"baseYr": year, "fndMakDvsnNm": account}, step=0,
                          size=100)
    if len(months.records) != 12:
        raise DraftError(f"{t.task_id}: {len(months.records)} months")
    peak = _unique_top(list(months.records), lambda r: int(number(r["prmfeeAmt"])))
    earlier = await t.call("get_deposit_insurance_fund_buildup",
                           {"baseTm": f"{int(year) - 1}{peak['baseMn']}", "fndMakDvsnNm": account}, step=1, size=100)
    if len(earlier.records) != 1:
        raise DraftError(f"{t.task_id}: {len(earlier.records)} rows a year earlier")
    now, then = int(number(peak["prmfeeAmt"])), int(number(earlier.records[0]["prmfeeAmt"]))
    value = await t.evaluate(f"100 * ({now} - {then}) / {then}", step=2)
    if t.variant == 0:
        t.ask(f"예금보험기금 {account}에서 {year}년 중 보험료 수입이 가장 많았던 달을 찾고, 그 달의 보험료 수입이 "
              f"1년 전 같은 달보다 몇 % 늘었는지 소수점 둘째 자리까지 계산해 주세요.")
    else:
        t.ask(f"{year}년 예금보험기금 {account}의 월별 조성 현황에서 보험료 수입이 최대였던 달은 전년 동월 대비 "
              f"보험료 수입 증가율이 몇 %인가요? 소수점 둘째 자리까지요.")
    t.answer_number(value)
    t.tags.append("conditional")


# -------------------------------------------------------- PER of two companies: accounts ∥ prices ∥ ratio

@template("finance", count=2)
async def per_compare(t: Draft) -> None:
    """Two names → codes ∥ → 2025 accounts and yesterday's prices (4 ∥) → PERs ∥ → the cheaper company."""
    filers = await _annual_filers(t, ["20260318", "20260325"][t.variant])
    today, yesterday = _today_after_trading_day(t, 2026, [7, 11][t.variant])

    async def body(attempt: int) -> None:
        a, b = _two_filers(t, filers, attempt)
        t.today(today.isoformat())
        codes = [await _corp_code(t, r["corp_name"], step=0) for r in (a, b)]
        pers = []
        for corp in codes:
            acc = await _key_accounts(t, corp["corp_code"], "2025", "11011", step=1)
            price = await t.call("get_stock_price_trend", {"likeSrtnCd": corp["stock_code"], "basDt": _ymd(yesterday)},
                                 step=1, compare=("likeSrtnCd", "basDt"))
            if len(price.records) != 1:
                raise DraftError(f"{t.task_id}: no price")
            profit = _account(acc, "당기순이익")
            if profit <= 0:
                raise DraftError(f"{t.task_id}: {corp['corp_name']} lost money")
            pers.append(await t.evaluate(f"{int(number(price.records[0]['mrktTotAmt']))} / {profit}", step=2))
        if pers[0] == pers[1]:
            raise DraftError("tie")
        cheaper = (a, b)[pers.index(min(pers))]["corp_name"]
        if t.variant == 0:
            t.ask(f"어제 종가 기준 시가총액을 2025년 연결 당기순이익으로 나눈 PER로 보면 {_josa(a['corp_name'], '과와')} "
                  f"{b['corp_name']} 중 어느 쪽이 더 싼가요(PER이 낮은가요)?")
        else:
            t.ask(f"{a['corp_name']}, {b['corp_name']} 가운데 어제 시가총액 ÷ 2025 사업연도 연결 당기순이익(PER)이 더 낮은 "
                  f"회사는 어디예요?")
        t.answer_string(cheaper)

    await t.retry(body)
    t.tags.append("comparison")


# --------------------------------------------- KOSDAQ top mover → corp code → accounts → PBR (sequential)

@template("finance", count=3)
async def kosdaq_mover_pbr(t: Draft) -> None:
    """Yesterday's KOSDAQ (2 pages) → the extreme stock → corp code → 2025 accounts → market cap ÷ equity."""

    async def body(attempt: int) -> None:
        today, yesterday = _today_after_trading_day(t, 2026, [4, 8, 11][t.variant])
        t.today(today.isoformat())
        records, step = await _market_day(t, yesterday, step=0, market="KOSDAQ")
        if t.variant == 0:
            top, what = _unique_top(records, _flt), "가장 많이 오른 종목"
        elif t.variant == 1:
            top, what = _unique_top(records, _flt, reverse=False), "가장 많이 떨어진 종목"
        else:
            top, what = _unique_top(records, lambda r: int(r["trqu"])), "거래량이 가장 많았던 종목"
        corp = await _corp_of_stock(t, top["srtnCd"], step=step)
        acc = await _key_accounts(t, corp["corp_code"], "2025", "11011", step=step + 1)
        equity = _account(acc, "자본총계")
        value = await t.evaluate(f"{int(number(top['mrktTotAmt']))} / {equity}", step=step + 2)
        if t.variant == 2:
            t.ask(f"코스닥에서 어제 {what}의 PBR을 알고 싶어요. 어제 시가총액 ÷ 2025년 말 연결 자본총계로 계산해서 소수점 "
                  f"둘째 자리까지 알려 주세요.")
        elif t.variant == 1:
            t.ask(f"어제 코스닥에서 {what}의 어제 시가총액이 그 회사 2025년 말 연결 자본총계의 몇 배인지(PBR) "
                  f"소수점 둘째 자리까지 알려 주세요.")
        else:
            t.ask(f"어제 코스닥 {what}에 대해, 어제 시가총액을 2025년 말 연결 자본총계로 나눈 값(PBR)을 소수점 둘째 "
                  f"자리까지 구해 주세요.")
        t.answer_number(value)

    await t.retry(body, tries=4)
    t.tags.append("reduction")
