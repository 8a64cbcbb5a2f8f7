"""World generator for the finance domain: OpenDART, FSC/KRX prices and KDIC.

Order matters because the platforms chain: corporations first (real large caps plus
generated companies), then their KRX price paths, then the CB decisions priced off those
paths, then the disclosure list that carries the CB and periodic-report receipt numbers,
then the key accounts of those periodic reports. KDIC's tables stand alone.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..context import BuildContext
from .cb import CB_COUNT, build_cb
from .corps import REAL_CORPS, build_corps, listed_mask
from .disclosures import build_disclosures
from .kdic import build_fund, build_institutions, build_products
from .prices import build_item_info, build_prices
from .statements import build_statements

__all__ = ["CFS_SHARE", "build"]

CFS_SHARE = 0.6  # listed companies that file consolidated statements


def build(ctx: BuildContext) -> None:
    """Add the finance tables to the world."""
    corps = build_corps(ctx)
    listed = corps.filter(pa.array(listed_mask(corps)))
    n_listed = listed.num_rows
    prices, paths = build_prices(ctx.rng("finance.prices"), listed)
    cb_rows = build_cb(ctx.rng("finance.cb"), listed, paths, ctx.n(CB_COUNT))
    has_cfs = np.zeros(corps.num_rows, dtype=bool)
    has_cfs[:n_listed] = ctx.rng("finance.cfs").random(n_listed) < CFS_SHARE
    has_cfs[:len(REAL_CORPS)] = True  # the real large caps all head groups
    disclosures, rcept = build_disclosures(ctx.rng("finance.disclosures"), corps, n_listed, has_cfs, cb_rows)
    short_names = listed["stock_name"].to_pylist()
    for k, row in enumerate(cb_rows):
        row["rcept_no"] = rcept[f"C:{k}"]
        row["corp_name"] = short_names[row.pop("_company")]
    statements = build_statements(ctx.rng("finance.statements"), listed, paths.close[:, 0] * paths.shares,
                                  has_cfs[:n_listed], rcept)
    institutions = build_institutions(ctx.rng("finance.kdic.institutions"))

    ctx.add_table("dart_corp", corps, sort_by=["corp_code"], key=["corp_code"],
                  description="DART-registered corporations (company.json, corpCode.xml)")
    ctx.add_table("dart_disclosure", disclosures, sort_by=["rcept_dt DESC", "rcept_no DESC"], indexes=[["corp_code"]],
                  key=["rcept_no"], description="OpenDART disclosure list (list.json)")
    ctx.add_table("dart_cvbd", pa.Table.from_pylist(cb_rows), sort_by=["corp_code", "rcept_no"],
                  key=["rcept_no"], description="Convertible-bond issuance decisions (cvbdIsDecsn)")
    ctx.add_table("dart_fnltt", statements, sort_by=["corp_code", "bsns_year", "reprt_code", "fs_div", "ord"],
                  key=["corp_code", "bsns_year", "reprt_code", "fs_div", "account_nm"],
                  description="Key accounts of periodic reports (fnlttSinglAcnt)")
    # Date-major: one basDt is one or two row groups. One ticker over a range scans the 11 row
    # groups in ~2 ms at full scale; DuckDB does not use an ART index for it, so none is built.
    ctx.add_table("krx_price", prices, sort_by=["basDt DESC", "srtnCd"],
                  key=["basDt", "srtnCd"], description="Daily KRX prices (FSC getStockPriceInfo)")
    ctx.add_table("krx_item_info", build_item_info(listed, paths.days), sort_by=["basDt DESC", "srtnCd"],
                  key=["basDt", "srtnCd"], description="KRX listed items at month ends (getItemInfo)")
    ctx.add_table("kdic_institution", institutions, sort_by=["num"], key=["fnccmpNm"],
                  description="KDIC insured financial institutions")
    ctx.add_table("kdic_product", build_products(ctx.rng("finance.kdic.products"), institutions),
                  sort_by=["num"], key=["fnccmpNm", "prdNm"], description="Products of insured institutions")
    ctx.add_table("kdic_fund", build_fund(ctx.rng("finance.kdic.fund")), sort_by=["num"],
                  key=["baseYr", "baseMn", "fndMakDvsnNm"], description="Deposit-insurance fund build-up")
