"""Rows of the district datasets, in the two shared storage tables' layouts.

All long-tail rows live in ``gg_dataset_rows`` and ``seoul_dataset_rows``: ``_ds`` (the
dataset id) and ``_seq`` (row order within it) lead the physical order, so one dataset is a
contiguous range DuckDB's zone maps find without scanning. Columns common to a portal's
datasets carry their real names (``SIGUN_CD``, ``REFINE_WGS84_LAT``, LOCALDATA's ``BPLCNM`` …);
the name column is ``_name``/``BPLCNM`` whatever the dataset calls it, and topic-specific
fields sit in generic slots ``_s1…`` (strings) and ``_n1…`` (numbers). The catalog
(``district_catalog``) records, per dataset, which column each real field comes from.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .geo import AddressBook, tm5174
from .licenses import FAMILIES
from .stats import StatsTopic, stats_values
from .topics import Extra, Topic
from .values import (
    END_DAY,
    EPOCH,
    date_strings,
    day_number,
    digits,
    extra_values,
    phones,
)

STRING_SLOTS = tuple(f"_s{i}" for i in range(1, 7))
NUMBER_SLOTS = tuple(f"_n{i}" for i in range(1, 6))
_SLOTS = [pa.field(c, pa.string()) for c in STRING_SLOTS] + [pa.field(c, pa.float64()) for c in NUMBER_SLOTS]
_KEYS = [pa.field("_ds", pa.int32()), pa.field("_seq", pa.int32())]

GG_SCHEMA = pa.schema(_KEYS + [pa.field(c, pa.string()) for c in (
    "SIGUN_CD", "SIGUN_NM", "_name", "REFINE_ROADNM_ADDR", "REFINE_LOTNO_ADDR", "REFINE_ZIP_CD")]
    + [pa.field("REFINE_WGS84_LAT", pa.float64()), pa.field("REFINE_WGS84_LOGT", pa.float64())]
    + [pa.field(c, pa.string()) for c in ("LICENSG_DE", "BSN_STATE_NM", "CLSBIZ_DE", "LOCPLC_FACLT_TELNO",
                                         "UNITY_BSN_STATE_NM", "MANAGE_NO")]
    + [pa.field("LOCPLC_AR", pa.float64())] + _SLOTS)

SEOUL_SCHEMA = pa.schema(_KEYS + [pa.field(c, pa.string()) for c in (
    "OPNSFTEAMCODE", "MGTNO", "APVPERMYMD", "APVCANCELYMD", "TRDSTATEGBN", "TRDSTATENM", "DTLSTATEGBN",
    "DTLSTATENM", "DCBYMD", "CLGSTDT", "CLGENDDT", "ROPNYMD", "SITETEL")]
    + [pa.field("SITEAREA", pa.float64())]
    + [pa.field(c, pa.string()) for c in ("SITEPOSTNO", "SITEWHLADDR", "RDNWHLADDR", "RDNPOSTNO", "BPLCNM",
                                         "LASTMODTS", "UPDATEGBN", "UPDATEDT", "UPTAENM")]
    + [pa.field("X", pa.float64()), pa.field("Y", pa.float64()), pa.field("_gu", pa.string()),
       pa.field("_lat", pa.float64()), pa.field("_lon", pa.float64())] + _SLOTS)

# (TRDSTATEGBN, TRDSTATENM, BSN_STATE_NM/UNITY detail) per state: operating, suspended, closed.
STATES = (("01", "영업/정상", "영업"), ("02", "휴업", "휴업"), ("03", "폐업", "폐업"))


def extra_slots(extras: tuple[Extra, ...]) -> list[tuple[Extra, str]]:
    """Assign each extra field a generic storage column (strings and numbers separately)."""
    out, s, n = [], iter(STRING_SLOTS), iter(NUMBER_SLOTS)
    for e in extras:
        out.append((e, next(n) if e.type == "number" else next(s)))
    return out


def spread_regions(rng: np.random.Generator, n: int, weights: np.ndarray, jitter: float = 0.35) -> np.ndarray:
    """Region index per row: population-weighted with topic-specific unevenness."""
    w = weights * rng.lognormal(0, jitter, len(weights))
    return rng.choice(len(weights), size=n, p=w / w.sum())


def topic_rows(rng: np.random.Generator, topic: Topic, platform: str, book: AddressBook, region_idx: np.ndarray,
               ds_of_region: np.ndarray, words: pa.Array) -> pa.Table:
    """Rows of one topic on one portal; ``ds_of_region`` maps a row's region to its dataset id."""
    n = len(region_idx)
    region_idx = np.sort(region_idx)
    place = book.place(rng, region_idx)
    suffixes = topic.suffixes.split("|")
    suffix = pc.take(pa.array(suffixes), pa.array(rng.integers(0, len(suffixes), n)))
    if topic.name_from_dong:
        name = pc.binary_join_element_wise(place["dong"], suffix, " ")
    else:
        name = pc.binary_join_element_wise(pc.take(words, pa.array(rng.integers(0, len(words), n))), suffix, "")
    kinds = topic.kinds.split("|")
    kind = pc.take(pa.array(kinds), pa.array(rng.integers(0, len(kinds), n)))  # 업태: one value per row
    area_code = "031" if platform == "gg" else "02"
    cols: dict[str, object] = {}
    for extra, slot in extra_slots(topic.extras):
        cols[slot] = extra_values(rng, extra, n, kind_values=kind, area_code=area_code, region_names=place["name"],
                                  dongs=place["dong"], web_host=f"lib.{platform}.go.kr")
    order_key = np.zeros(n, dtype=np.int64)
    if topic.license:
        lic = _license_columns(rng, topic, platform, book, region_idx, kind)
        order_key = lic.pop("_days")
        cols.update(lic)
    if platform == "gg":
        cols.update({"SIGUN_CD": place["code"], "SIGUN_NM": place["name"], "_name": name,
                     "REFINE_ROADNM_ADDR": place["road"], "REFINE_LOTNO_ADDR": place["lot"],
                     "REFINE_ZIP_CD": place["zip"], "REFINE_WGS84_LAT": place["lat"], "REFINE_WGS84_LOGT": place["lon"]})
    else:
        cols.update({"_gu": place["name"], "BPLCNM": name, "_lat": place["lat"], "_lon": place["lon"],
                     "SITEWHLADDR": place["lot"],
                     "RDNWHLADDR": pc.binary_join_element_wise(place["road"], pc.binary_join_element_wise(
                         pa.scalar("("), place["dong"], pa.scalar(")"), ""), " ")})
        if topic.license:
            cols["X"], cols["Y"] = tm5174(place["lat"], place["lon"])
            cols["RDNPOSTNO"] = place["zip"]
            post = pc.take(pa.array([r.old_post for r in book.regions]), pa.array(region_idx))
            cols["SITEPOSTNO"] = pc.binary_join_element_wise(post, digits(rng, 3, n), "")
    return _finish(cols, ds_of_region[region_idx], region_idx, order_key,
                   GG_SCHEMA if platform == "gg" else SEOUL_SCHEMA)


def _license_columns(rng: np.random.Generator, topic: Topic, platform: str, book: AddressBook,
                     region_idx: np.ndarray, kind: pa.Array) -> dict[str, object]:
    fam = FAMILIES[topic.family]
    n = len(region_idx)
    end = int((END_DAY - EPOCH).astype(int))
    first = day_number(fam.since)
    age = rng.exponential(3300, n)
    age = np.where(age < end - first, age, rng.uniform(0, end - first, n)).astype(np.int64)  # no pile-up at the start
    lic = end - age
    u = rng.random(n)
    state = np.where(u < fam.p_open, 0, np.where(u < fam.p_open + 0.02, 1, 2))
    closed = state == 2
    close_day = lic + (rng.uniform(0.05, 1.0, n) * (end - lic)).astype(np.int64)
    susp_start = end - rng.integers(30, 700, n)
    suspended = state == 1
    area = np.round(np.exp(rng.uniform(np.log(fam.area[0]), np.log(fam.area[1]), n)), 2)
    team = pc.take(pa.array([r.team_code for r in book.regions]), pa.array(region_idx))
    year = pc.utf8_slice_codeunits(date_strings(lic), 0, 4)
    mgtno = pc.binary_join_element_wise(team, pa.scalar(fam.group), year, digits(rng, 5, n), "-")
    tel = phones(rng, "031" if platform == "gg" else "02", n, p_missing=0.3)
    state_arr = pa.array(state)
    if platform == "gg":
        return {"_days": lic, "LICENSG_DE": date_strings(lic), "MANAGE_NO": mgtno, "LOCPLC_FACLT_TELNO": tel,
                "BSN_STATE_NM": pc.take(pa.array([s[1] for s in STATES]), state_arr),
                "UNITY_BSN_STATE_NM": pc.take(pa.array([s[2] for s in STATES]), state_arr),
                "CLSBIZ_DE": date_strings(close_day, closed), "LOCPLC_AR": area}
    detail_open = ("13", "영업중") if topic.family == "health" else ("01", "영업")
    details = (detail_open, ("02", "휴업"), ("03", "폐업"))
    lastmod = np.maximum(lic, end - rng.integers(0, 1500, n))
    stamp = pc.binary_join_element_wise(date_strings(lastmod), _clock(rng, n), " ")
    updated = pc.binary_join_element_wise(date_strings(lastmod + 2), pa.scalar("02:40:00.0"), " ")
    return {"_days": lic, "OPNSFTEAMCODE": team, "MGTNO": mgtno, "APVPERMYMD": date_strings(lic),
            "TRDSTATEGBN": pc.take(pa.array([s[0] for s in STATES]), state_arr),
            "TRDSTATENM": pc.take(pa.array([s[1] for s in STATES]), state_arr),
            "DTLSTATEGBN": pc.take(pa.array([d[0] for d in details]), state_arr),
            "DTLSTATENM": pc.take(pa.array([d[1] for d in details]), state_arr),
            "DCBYMD": date_strings(close_day, closed), "CLGSTDT": date_strings(susp_start, suspended),
            "CLGENDDT": date_strings(susp_start + 180, suspended), "SITETEL": tel, "SITEAREA": area,
            "LASTMODTS": stamp, "UPDATEGBN": pc.take(pa.array(["I", "U"]), pa.array((lastmod > lic + 30).astype(int))),
            "UPDATEDT": updated, "UPTAENM": kind}


def _clock(rng: np.random.Generator, n: int) -> pa.Array:
    hh = pc.utf8_lpad(pc.cast(pa.array(rng.integers(0, 24, n)), pa.string()), 2, "0")
    mm = pc.utf8_lpad(pc.cast(pa.array(rng.integers(0, 60, n)), pa.string()), 2, "0")
    ss = pc.utf8_lpad(pc.cast(pa.array(rng.integers(0, 60, n)), pa.string()), 2, "0")
    return pc.binary_join_element_wise(hh, mm, ss, ":")


def stats_rows(rng: np.random.Generator, topic: StatsTopic, platform: str, book: AddressBook,
               ds_of_year: np.ndarray, years: tuple[int, ...]) -> pa.Table:
    """Statistics rows: one per (year, region, category); ``ds_of_year`` maps a year index to a dataset."""
    weights = np.array([r.weight for r in book.regions], dtype=float)
    year, region, cat, values = stats_values(rng, topic, weights, len(years))
    cats = pa.array(topic.categories.split("|")) if topic.categories else None
    cols: dict[str, object] = {"_s1": pc.take(pa.array([str(y) for y in years]), pa.array(year))}
    if cats is not None:
        cols["_s2"] = pc.take(cats, pa.array(cat))
    for slot, v in zip(NUMBER_SLOTS, values):
        cols[slot] = v
    names = pc.take(book.names, pa.array(region))
    if platform == "gg":
        cols["SIGUN_CD"], cols["SIGUN_NM"] = pc.take(book.codes, pa.array(region)), names
    else:
        cols["_gu"] = names
    order = year * 10_000 + region * 100 + cat
    return _finish(cols, ds_of_year[year], np.zeros(len(year), dtype=np.int64), order,
                   GG_SCHEMA if platform == "gg" else SEOUL_SCHEMA)


def _finish(cols: dict[str, object], ds: np.ndarray, region_idx: np.ndarray, order_key: np.ndarray,
            schema: pa.Schema) -> pa.Table:
    """Order rows by (dataset, region, key), number them within their dataset, fill unused columns."""
    n = len(ds)
    order = np.lexsort((order_key, region_idx, ds))
    ds_sorted = ds[order]
    starts = np.searchsorted(ds_sorted, ds_sorted, side="left")
    cols = dict(cols, _ds=ds_sorted.astype(np.int32), _seq=(np.arange(n) - starts + 1).astype(np.int32))
    idx = pa.array(order)
    arrays = []
    for f in schema:
        value = cols.get(f.name)
        if value is None:
            arrays.append(pa.nulls(n, f.type))
            continue
        arr = value if isinstance(value, (pa.Array, pa.ChunkedArray)) else pa.array(value)
        if f.name not in ("_ds", "_seq"):
            arr = pc.take(arr, idx)
        arrays.append(arr.cast(f.type))
    return pa.Table.from_arrays(arrays, schema=schema)
