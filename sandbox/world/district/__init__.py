"""World generator for the district domain: Gyeonggi Data Dream and the dataset long tail.

Both portals publish hundreds of uniform datasets: business-license lists per license type
(Seoul's LOCALDATA services, one per type and 자치구 for the big types), facility and
registry lists, and yearly statistics. This module decides which datasets exist (from the
real categories in ``district_licenses``, ``district_facilities`` and ``district_stats``),
gives each a dataset id, generates its rows and writes three tables:

* ``gg_dataset_rows`` / ``seoul_dataset_rows`` — every row, ordered by (``_ds``, ``_seq``);
* ``district_datasets`` — the catalog (one entry per served service; see ``district_catalog``).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from ..context import BuildContext
from ..korean import place_words
from .catalog import (
    DatasetEntry,
    gg_topic_entry,
    seoul_facility_entry,
    seoul_license_entry,
    stats_entry,
)
from .facilities import FACILITY_TOPICS, NAMED_GG
from .geo import AddressBook, gyeonggi_regions, seoul_regions
from .licenses import FAMILIES, LICENSE_TYPES
from .rows import spread_regions, stats_rows, topic_rows
from .stats import STATS_TOPICS, YEARS
from .topics import Topic, camel

__all__ = ["SEOUL_PER_DISTRICT_TYPES", "build", "localdata_codes"]

SEOUL_PER_DISTRICT_TYPES = 64  # the largest license types are split into one service per 자치구


class _Ids:
    """Dataset ids in catalog order (the build order is fixed, so ids are stable)."""

    def __init__(self) -> None:
        self.next = 1

    def take(self, n: int = 1) -> np.ndarray:
        ids = np.arange(self.next, self.next + n)
        self.next += n
        return ids


def build(ctx: BuildContext) -> None:
    """Add the district tables to the world."""
    gg_book = AddressBook(ctx.rng("district:gg:geo"), gyeonggi_regions())
    seoul_book = AddressBook(ctx.rng("district:seoul:geo"), seoul_regions())
    wrng = ctx.rng("district:words")
    words = pa.array(place_words(wrng, 5000, 2) + place_words(wrng, 2500, 3))
    ids = _Ids()
    entries: list[DatasetEntry] = []
    gg_parts = list(_gyeonggi(ctx, ids, entries, gg_book, words))
    seoul_parts = list(_seoul(ctx, ids, entries, seoul_book, words))
    gg_rows = pa.concat_tables(gg_parts)
    seoul_rows = pa.concat_tables(seoul_parts)
    counts = np.bincount(np.concatenate([gg_rows["_ds"].to_numpy(), seoul_rows["_ds"].to_numpy()]),
                         minlength=ids.next)
    for e in entries:
        e.row_count = int(counts[e.dataset_id])
    _check_unique(entries)
    ctx.add_table("gg_dataset_rows", gg_rows, sort_by=("_ds", "_seq"), key=("_ds", "_seq"),
                  description="경기데이터드림 데이터셋 행 (모든 데이터셋 공용, _ds = district_datasets.dataset_id)")
    ctx.add_table("seoul_dataset_rows", seoul_rows, sort_by=("_ds", "_seq"), key=("_ds", "_seq"),
                  description="서울 열린데이터광장 데이터셋 행 (LOCALDATA 인허가·시설·통계 공용)")
    catalog = [e.record() for e in entries]
    ctx.add_table("district_datasets", pa.Table.from_pylist(catalog), sort_by=("platform", "service"),
                  key=("platform", "service"),
                  description="경기·서울 데이터셋 서비스 카탈로그 (필드·필터·저장 위치·행 수)")


def _rows(ctx: BuildContext, full: int) -> int:
    return 0 if full == 0 else ctx.n(full)


def _gyeonggi(ctx: BuildContext, ids: _Ids, entries: list[DatasetEntry], book: AddressBook,
              words: pa.Array) -> Iterator[pa.Table]:
    weights = np.array([r.weight for r in book.regions], dtype=float)
    topics = [*NAMED_GG, *(t for t in LICENSE_TYPES if t.gg_rows), *(t for t in FACILITY_TOPICS if t.gg_rows)]
    for topic in topics:
        service = topic.gg_service or camel(topic.gloss)
        (ds,) = ids.take()
        entries.append(gg_topic_entry(int(ds), topic, service))
        rng = ctx.rng(f"district:gg:{service}")
        regions = spread_regions(rng, _rows(ctx, topic.gg_rows), weights)
        yield topic_rows(rng, topic, "gg", book, regions, np.full(len(weights), ds), words)
    for topic in STATS_TOPICS:
        year_ids = ids.take(len(YEARS))
        for ds, year in zip(year_ids, YEARS):
            entries.append(stats_entry(int(ds), topic, "gg", f"{camel(topic.gloss)}Stat{year}", year))
        yield stats_rows(ctx.rng(f"district:gg:stats:{topic.gloss}"), topic, "gg", book, year_ids, YEARS)


def _seoul(ctx: BuildContext, ids: _Ids, entries: list[DatasetEntry], book: AddressBook,
           words: pa.Array) -> Iterator[pa.Table]:
    weights = np.array([r.weight for r in book.regions], dtype=float)
    licenses = list(LICENSE_TYPES)  # types Seoul has none of are still served, empty (INFO-200)
    # Types with a known real code first (their per-district services are the documented ones), then the largest.
    ranked = sorted(range(len(licenses)), key=lambda i: (not licenses[i].seoul_code, -licenses[i].seoul_rows, i))
    per_district = {licenses[i].ko for i in ranked[:SEOUL_PER_DISTRICT_TYPES]}
    codes = localdata_codes(LICENSE_TYPES)
    for topic in licenses:
        code = codes[topic.ko]
        rng = ctx.rng(f"district:seoul:LOCALDATA_{code}")
        if topic.ko in per_district:
            ds_of_region = ids.take(len(book.regions))
            for ds, region in zip(ds_of_region, book.regions):
                entries.append(seoul_license_entry(int(ds), topic, f"LOCALDATA_{code}_{region.suffix}",
                                                   region.name, region.code))
        else:
            (ds,) = ids.take()
            ds_of_region = np.full(len(book.regions), ds)
            entries.append(seoul_license_entry(int(ds), topic, f"LOCALDATA_{code}"))
        regions = spread_regions(rng, _rows(ctx, topic.seoul_rows), weights)
        yield topic_rows(rng, topic, "seoul", book, regions, ds_of_region, words)
    for topic in (t for t in FACILITY_TOPICS if t.seoul_rows):
        service = topic.seoul_service or f"Tb{camel(topic.gloss)}Info"
        (ds,) = ids.take()
        entries.append(seoul_facility_entry(int(ds), topic, service))
        rng = ctx.rng(f"district:seoul:{service}")
        regions = spread_regions(rng, _rows(ctx, topic.seoul_rows), weights)
        yield topic_rows(rng, topic, "seoul", book, regions, np.full(len(weights), ds), words)
    for topic in STATS_TOPICS:
        (ds,) = ids.take()
        entries.append(stats_entry(int(ds), topic, "seoul", f"Seoul{camel(topic.gloss)}Stat", None))
        yield stats_rows(ctx.rng(f"district:seoul:stats:{topic.gloss}"), topic, "seoul", book,
                         np.full(len(YEARS), ds), YEARS)


def localdata_codes(types: tuple[Topic, ...]) -> dict[str, str]:
    """6-digit LOCALDATA business-type code per license type: the real one, else a generated one.

    Generated codes use the family's real group prefix and sub-groups from 60 up, which the
    real code table does not use, so they never collide with a real code.
    """
    out: dict[str, str] = {}
    counters: dict[str, int] = {}
    for t in types:
        if t.seoul_code:
            out[t.ko] = t.seoul_code
            continue
        prefix = FAMILIES[t.family].code_prefix
        k = counters.get(prefix, 0)
        counters[prefix] = k + 1
        out[t.ko] = f"{prefix}{60 + k // 99:02d}{k % 99 + 1:02d}"
    return out


def _check_unique(entries: list[DatasetEntry]) -> None:
    seen: set[tuple[str, str]] = set()
    for e in entries:
        key = (e.platform, e.service)
        if key in seen:
            raise ValueError(f"district dataset service {key} is defined twice")
        seen.add(key)
