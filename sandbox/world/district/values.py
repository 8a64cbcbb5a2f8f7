"""Vectorised value drawing for district rows: dates, phone numbers, topic-specific extras.

Numbers come back as float64 numpy arrays (stored as numbers, printed as strings by the
portals); everything else as pyarrow string arrays. Dates print as the portals print
them, ``YYYY-MM-DD``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .topics import Extra

END_DAY = np.datetime64("2025-06-30")  # the world's "today" for license and update dates
EPOCH = np.datetime64("1970-01-01")
HOURS = ("09:00~18:00", "09:00~22:00", "06:00~22:00", "10:00~19:00", "24시간", "09:00~17:00", "07:00~21:00")


def day_number(year: int) -> int:
    return int((np.datetime64(f"{year}-01-01") - EPOCH).astype(int))


def date_strings(days: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """Days since 1970 -> 'YYYY-MM-DD' (null where ``valid`` is False)."""
    text = np.datetime_as_string(EPOCH + days.astype("timedelta64[D]"), unit="D")
    return pa.array(text, mask=None if valid is None else ~valid)


def choice(rng: np.random.Generator, options: list[str] | tuple[str, ...], n: int) -> pa.Array:
    return pc.take(pa.array(list(options)), pa.array(rng.integers(0, len(options), n)))


def phones(rng: np.random.Generator, area: str, n: int, p_missing: float = 0.0) -> pa.Array:
    mid = pc.cast(pa.array(rng.integers(200, 9999, n)), pa.string())
    last = pc.utf8_lpad(pc.cast(pa.array(rng.integers(0, 10000, n)), pa.string()), 4, "0")
    codes = choice(rng, (area, area, area, area, "070"), n) if area != "070" else pa.array([area] * n)
    text = pc.binary_join_element_wise(codes, mid, last, "-")
    if p_missing:
        text = pc.if_else(pa.array(rng.random(n) < p_missing), pa.scalar(None, pa.string()), text)
    return text


def digits(rng: np.random.Generator, width: int, n: int) -> pa.Array:
    return pc.utf8_lpad(pc.cast(pa.array(rng.integers(0, 10 ** width, n)), pa.string()), width, "0")


def extra_values(rng: np.random.Generator, extra: Extra, n: int, *, kind_values: pa.Array, area_code: str,
                 region_names: pa.Array, dongs: pa.Array, web_host: str) -> np.ndarray | pa.Array:
    """Values of one extra field for ``n`` rows (``kind_values``: the rows' 업태, for kind "kind")."""
    kind, arg = extra.kind, extra.arg
    if kind in ("int", "year"):
        lo, hi = (int(x) for x in arg.split(","))
        return rng.integers(lo, hi + 1, n).astype(np.float64)
    if kind == "float":
        lo, hi = (float(x) for x in arg.split(","))
        return np.round(np.exp(rng.uniform(np.log(lo), np.log(hi), n)), 2)
    if kind == "date":
        y0, y1 = (int(x) for x in arg.split(","))
        return date_strings(rng.integers(day_number(y0), day_number(y1 + 1), n))
    if kind == "choice":
        return choice(rng, arg.split("|"), n)
    if kind == "kind":
        return kind_values
    if kind == "yn":
        return choice(rng, ("Y", "N"), n)
    if kind == "tel":
        return phones(rng, area_code, n, p_missing=0.1)
    if kind == "hours":
        return choice(rng, HOURS, n)
    if kind == "office":
        return pc.binary_join_element_wise(region_names, pa.scalar("청"), "")
    if kind == "emd":
        return dongs
    if kind == "url":
        return pc.binary_join_element_wise(pa.scalar(f"https://{web_host}/"), digits(rng, 4, n), "")
    if kind == "bizno":
        return pc.binary_join_element_wise(digits(rng, 3, n), digits(rng, 2, n), digits(rng, 5, n), "-")
    raise ValueError(f"unknown extra kind {kind!r} of field {extra.gg}")
