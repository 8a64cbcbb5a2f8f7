"""The Korean exchange calendar the finance world runs on (KRX trading days, 2023–2026).

Prices exist only on trading days and filings are dated on business days, so both use the
weekdays minus the real KRX market holidays (public holidays, substitute and temporary
holidays, election days, 근로자의 날 and the year-end closing day).
"""

from __future__ import annotations

import numpy as np

# KRX closing days that fall on weekdays (KRX 휴장일 notices 2023–2026).
KRX_HOLIDAYS: tuple[str, ...] = (
    # 2023
    "2023-01-23", "2023-01-24", "2023-03-01", "2023-05-01", "2023-05-05", "2023-05-29",
    "2023-06-06", "2023-08-15", "2023-09-28", "2023-09-29", "2023-10-02", "2023-10-03",
    "2023-10-09", "2023-12-25", "2023-12-29",
    # 2024 (04-10: 22nd National Assembly election; 10-01: Armed Forces Day, temporary holiday)
    "2024-01-01", "2024-02-09", "2024-02-12", "2024-03-01", "2024-04-10", "2024-05-01",
    "2024-05-06", "2024-05-15", "2024-06-06", "2024-08-15", "2024-09-16", "2024-09-17",
    "2024-09-18", "2024-10-01", "2024-10-03", "2024-10-09", "2024-12-25", "2024-12-31",
    # 2025 (01-27: temporary holiday; 06-03: presidential election)
    "2025-01-01", "2025-01-27", "2025-01-28", "2025-01-29", "2025-01-30", "2025-03-03",
    "2025-05-01", "2025-05-05", "2025-05-06", "2025-06-03", "2025-06-06", "2025-08-15",
    "2025-10-03", "2025-10-06", "2025-10-07", "2025-10-08", "2025-10-09", "2025-12-25",
    "2025-12-31",
    # 2026 (06-03: local elections; 08-17 and 10-05: substitute holidays)
    "2026-01-01", "2026-02-16", "2026-02-17", "2026-02-18", "2026-03-02", "2026-05-01",
    "2026-05-05", "2026-05-25", "2026-06-03", "2026-08-17", "2026-09-24", "2026-09-25",
    "2026-10-05", "2026-10-09", "2026-12-25", "2026-12-31",
)

_HOLIDAYS = np.array(KRX_HOLIDAYS, dtype="datetime64[D]")
PRICE_START, PRICE_END = "2024-11-01", "2026-11-30"  # daily prices are published for this window
FILING_START, FILING_END = "2024-01-01", "2026-11-30"  # list.json disclosures cover this window


def trading_days(start: str, end: str) -> np.ndarray:
    """Trading days in [start, end] as numpy datetime64[D]."""
    days = np.arange(np.datetime64(start), np.datetime64(end) + 1, dtype="datetime64[D]")
    return days[np.is_busday(days, holidays=_HOLIDAYS)]


def next_trading_day(days: np.ndarray) -> np.ndarray:
    """Roll each date forward to a trading day (itself when it already is one)."""
    return np.busday_offset(days.astype("datetime64[D]"), 0, roll="forward", holidays=_HOLIDAYS)


def ymd(days: np.ndarray) -> np.ndarray:
    """datetime64[D] → 'YYYYMMDD' strings."""
    return np.char.replace(np.datetime_as_string(days.astype("datetime64[D]")), "-", "")
