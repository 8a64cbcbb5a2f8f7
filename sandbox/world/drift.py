"""World v2: world v1 after one round of the drift real services show.

Each change mirrors something the live portals have done:

* records added — a new trading day of FSC prices and new OpenDART disclosures on 2026-12-01;
* records changed — pending 22nd-term bills decided in committee; rest-area fuel prices moved;
* a field renamed — NEIS schoolInfo's awkward ``INDST_SPECL_CCCCL_EXST_YN`` respelled;
* a field added — NEIS schoolInfo gains a school-kind code;
* a service removed — the Assembly's ``ALLBILL`` (the portal moved it to ALLBILLV2);
* a code table changed — Hwaseong (41590) split into four districts (41591/41593/41595/41597)
  in Gyeonggi's datasets, as Gyeonggi's 2026 code table does.

``apply_v2`` returns the changelog: one item per difference, in ``drift_ops`` vocabulary.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .context import BuildContext
from .drift_ops import Drift

V2_DAY = "20261201"  # first trading day after v1's data ends (2026-11-30)
HWASEONG = "41590"
HWASEONG_DISTRICTS = ("41591", "41593", "41595", "41597")
SCHOOL_KIND_CODES = {"초등학교": "02", "중학교": "03", "고등학교": "04", "특수학교": "05", "각종학교": "06"}


def apply_v2(ctx: BuildContext) -> list[dict[str, Any]]:
    drift = Drift(ctx)
    rng = ctx.rng("drift.v2")
    _new_trading_day(drift, rng)
    _new_disclosures(drift, rng)
    _bills_decided(drift, rng)
    _fuel_prices_moved(drift, rng)
    drift.rename_field("edu_school", "INDST_SPECL_CCCCL_EXST_YN", "INDST_SPECL_CLASS_EXST_YN",
                       platform="edu", service="schoolInfo")
    kinds = ctx.table("edu_school")["SCHUL_KND_SC_NM"].to_pylist()
    drift.add_field("edu_school", "SCHUL_KND_SC_CODE", pa.array([SCHOOL_KIND_CODES.get(k, "07") for k in kinds]),
                    platform="edu", service="schoolInfo")
    drift.remove_service(platform="assembly", service="ALLBILL")
    drift.change_code("gg_dataset_rows", "SIGUN_CD", HWASEONG, HWASEONG_DISTRICTS, rng,
                      platform="gg", service="every Gyeonggi dataset keyed by SIGUN_CD")
    return drift.items


def _new_trading_day(drift: Drift, rng: np.random.Generator) -> None:
    prices = drift.ctx.table("krx_price")
    last_day = pc.max(prices["basDt"]).as_py()
    last = prices.filter(pc.equal(prices["basDt"], last_day))
    close = np.asarray(last["clpr"].to_numpy(), dtype=float)
    change = np.clip(rng.normal(0, 0.02, len(close)), -0.29, 0.29)
    new_close = np.maximum(1, np.round(close * (1 + change), -1)).astype(np.int64)
    opens = np.maximum(1, np.round(close * (1 + rng.normal(0, 0.005, len(close))), -1)).astype(np.int64)
    volume = np.maximum(0, (last["trqu"].to_numpy() * rng.lognormal(0, 0.3, len(close)))).astype(np.int64)
    shares = last["lstgStCnt"].to_numpy()
    columns = {
        "basDt": pa.array([V2_DAY] * len(close)), "clpr": new_close, "vs": new_close - close.astype(np.int64),
        "fltRt": np.round((new_close - close) / close * 100, 2), "mkp": opens,
        "hipr": np.maximum(new_close, opens), "lopr": np.minimum(new_close, opens), "trqu": volume,
        "trPrc": volume * new_close, "mrktTotAmt": new_close * shares,
    }
    new_rows = last
    for name, values in columns.items():
        new_rows = new_rows.set_column(new_rows.schema.get_field_index(name), name,
                                       pa.array(values, new_rows.schema.field(name).type))
    drift.add_records("krx_price", new_rows, platform="krx", service="getStockPriceInfo")


def _new_disclosures(drift: Drift, rng: np.random.Generator, count: int = 24) -> None:
    disclosures = drift.ctx.table("dart_disclosure")
    listed = disclosures.filter(pc.not_equal(pc.utf8_trim_whitespace(disclosures["stock_code"]), ""))
    picks = rng.choice(listed.num_rows, size=min(count, listed.num_rows), replace=False)
    rows = listed.take(pa.array(np.sort(picks)))
    rows = rows.set_column(rows.schema.get_field_index("rcept_dt"), "rcept_dt", pa.array([V2_DAY] * rows.num_rows))
    numbers = [f"{V2_DAY}{900001 + i:06d}" for i in range(rows.num_rows)]
    rows = rows.set_column(rows.schema.get_field_index("rcept_no"), "rcept_no", pa.array(numbers))
    drift.add_records("dart_disclosure", rows, platform="dart", service="list")


def _bills_decided(drift: Drift, rng: np.random.Generator) -> None:
    bills = drift.ctx.table("assembly_bill")
    pending = bills.filter(pc.and_(pc.equal(bills["AGE"], "22"), pc.is_null(bills["PROC_RESULT"])))
    ids = pending["BILL_ID"].to_pylist()
    chosen = sorted(rng.choice(ids, size=max(1, len(ids) // 20), replace=False).tolist())
    day = f"{V2_DAY[:4]}-{V2_DAY[4:6]}-{V2_DAY[6:]}"
    changes = [({"BILL_ID": bill}, field, value) for bill in chosen
               for field, value in (("CMT_PROC_DT", day), ("CMT_PROC_RESULT_CD", "대안반영폐기"),
                                    ("PROC_DT", day), ("PROC_RESULT", "대안반영폐기"))]
    drift.change_records("assembly_bill", changes, platform="assembly", service="nzmimeepazxkubdpn")


def _fuel_prices_moved(drift: Drift, rng: np.random.Generator) -> None:
    fuel = drift.ctx.table("ex_fuel")
    picks = np.sort(rng.choice(fuel.num_rows, size=max(1, fuel.num_rows // 10), replace=False))
    changes = []
    for i in picks.tolist():
        row = fuel.slice(i, 1).to_pylist()[0]
        for field in ("gasolinePrice", "diselPrice"):
            if row[field]:
                changes.append(({"stdRestCd": row["stdRestCd"]}, field, int(row[field]) + int(rng.choice([-20, -10, 10, 30]))))
    drift.change_records("ex_fuel", changes, platform="ex", service="business/curStateStation")
