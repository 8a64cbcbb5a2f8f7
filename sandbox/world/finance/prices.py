"""Daily KRX prices (FSC getStockPriceInfo) and listed-item info (getItemInfo).

Prices are vectorised geometric random walks, one per listed company, over the real KRX
trading days. Every price sits on the KRX tick grid and each day's move stays inside the
±30% daily limit, so vs = clpr − previous clpr and fltRt agree with the printed prices the
way the real feed's do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .calendar import PRICE_END, PRICE_START, trading_days, ymd
from .corps import isin_for

MARKET_NAMES = {"Y": "KOSPI", "K": "KOSDAQ", "N": "KONEX"}
_TICK_STEPS = ((2_000, 1), (5_000, 5), (20_000, 10), (50_000, 50), (200_000, 100), (500_000, 500))
_DAILY_TURNOVER = {"Y": 0.004, "K": 0.012, "N": 0.002}


@dataclass(frozen=True)
class PricePaths:
    """Closing prices (company × trading day) that the filings generator prices CBs from."""

    days: np.ndarray  # datetime64[D]
    close: np.ndarray  # int64, shape (companies, days)
    shares: np.ndarray  # int64 listed shares per company


def tick_size(price: np.ndarray) -> np.ndarray:
    """KRX tick size (호가가격단위, 2023 unified table) for each price."""
    price = np.asarray(price)
    ticks = np.full(price.shape, 1_000, dtype=np.int64)
    for bound, tick in reversed(_TICK_STEPS):
        ticks = np.where(price < bound, tick, ticks)
    return ticks


def to_tick(price: np.ndarray) -> np.ndarray:
    tick = tick_size(price)
    return np.maximum(np.round(price / tick).astype(np.int64) * tick, 1)


def simulate(rng: np.random.Generator, price0: np.ndarray, sigma: np.ndarray, n_days: int) -> np.ndarray:
    """Closing prices for n_days + 1 days (the first is the day before the window)."""
    n = len(price0)
    shocks = rng.standard_t(4, size=(n, n_days)) * sigma[:, None] / np.sqrt(2)
    jumps = np.where(rng.random((n, n_days)) < 0.004, rng.normal(0, 0.12, (n, n_days)), 0.0)
    returns = np.clip(shocks + jumps + 0.0002, -0.29, 0.29)
    raw = price0[:, None] * np.cumprod(np.concatenate([np.ones((n, 1)), 1 + returns], axis=1), axis=1)
    return to_tick(np.maximum(raw, 60.0))


def build_prices(rng: np.random.Generator, listed: pa.Table) -> tuple[pa.Table, PricePaths]:
    """The krx_price table (date-major) and the closing-price matrix."""
    days = trading_days(PRICE_START, PRICE_END)
    n, t = listed.num_rows, len(days)
    cls = np.asarray(listed["corp_cls"].to_numpy(zero_copy_only=False))
    sigma = listed["_sigma"].to_numpy()
    closes = simulate(rng, listed["_price0"].to_numpy(), sigma, t)
    prev, close = closes[:, :-1], closes[:, 1:]
    lo_limit, hi_limit = prev * 0.7, prev * 1.3
    s = sigma[:, None]
    open_ = to_tick(np.clip(prev * (1 + rng.normal(0, 1, (n, t)) * s / 3), lo_limit, hi_limit))
    high = to_tick(np.maximum(open_, close) * (1 + np.abs(rng.normal(0, 1, (n, t))) * s / 2))
    low = to_tick(np.minimum(open_, close) * (1 - np.abs(rng.normal(0, 1, (n, t))) * s / 2))
    high = np.minimum(np.maximum(high, np.maximum(open_, close)), to_tick(hi_limit))
    high = np.maximum(high, np.maximum(open_, close))
    low = np.maximum(np.minimum(low, np.minimum(open_, close)), to_tick(lo_limit))
    low = np.minimum(low, np.minimum(open_, close))
    vs = close - prev
    flt = np.round(vs / prev * 100, 2)
    shares = listed["_shares"].to_numpy()
    turnover = np.array([_DAILY_TURNOVER[c] for c in cls])[:, None]
    volume = np.round(shares[:, None] * turnover * rng.lognormal(0, 0.8, (n, t)) * (1 + 20 * np.abs(flt) / 100))
    volume = np.maximum(volume.astype(np.int64), 1)
    value = (volume * (open_ + high + low + close) / 4).astype(np.int64)

    # Date-major order: rows of one basDt are contiguous, the layout the table is stored in.
    def flat(a: np.ndarray) -> np.ndarray:
        return a.T.reshape(-1)

    company = np.tile(np.arange(n), t)
    codes = listed["stock_code"].to_numpy(zero_copy_only=False)
    market = np.array([MARKET_NAMES[c] for c in cls], dtype=object)
    table = pa.table({
        "basDt": pa.array(np.repeat(ymd(days), n).astype(object)),
        "srtnCd": pa.array(codes).take(company),
        "isinCd": pa.array([isin_for(c) for c in codes]).take(company),
        "itmsNm": listed["stock_name"].combine_chunks().take(company),
        "mrktCtg": pa.array(market).take(company),
        "clpr": flat(close), "vs": flat(vs), "fltRt": flat(flt), "mkp": flat(open_),
        "hipr": flat(high), "lopr": flat(low), "trqu": flat(volume), "trPrc": flat(value),
        "lstgStCnt": np.tile(shares, t), "mrktTotAmt": flat(close * shares[:, None]),
    })
    return table, PricePaths(days, close, shares)


def build_item_info(listed: pa.Table, days: np.ndarray) -> pa.Table:
    """getItemInfo rows: every listed company on the last trading day of each month."""
    months = days.astype("datetime64[M]")
    month_ends = days[np.r_[months[1:] != months[:-1], True]]
    n = listed.num_rows
    company = np.tile(np.arange(n), len(month_ends))
    cls = listed["corp_cls"].to_numpy(zero_copy_only=False)
    codes = listed["stock_code"].to_numpy(zero_copy_only=False)
    return pa.table({
        "basDt": pa.array(np.repeat(ymd(month_ends), n).astype(object)),
        "srtnCd": pa.array(codes).take(company),
        "isinCd": pa.array([isin_for(c) for c in codes]).take(company),
        "mrktCtg": pa.array([MARKET_NAMES[c] for c in cls]).take(company),
        "itmsNm": listed["stock_name"].combine_chunks().take(company),
        "crno": listed["jurir_no"].combine_chunks().take(company),
        "corpNm": listed["corp_name"].combine_chunks().take(company),
    })
