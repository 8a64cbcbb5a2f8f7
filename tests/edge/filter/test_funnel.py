"""The funnel: stages in order, every rejection kept with its stage and reason, counts that add up."""

from __future__ import annotations

import asyncio

from edge.filter.contamination import ContaminationAudit
from edge.filter.funnel import STAGES, run_funnel
from edge.synth.item import Rejection, SynthItem
from mcp_gateway.catalog import load_catalog
from tests.edge.filter.items import bench, task_like, wrap


async def invalid_fin_019(item: SynthItem) -> Rejection | None:  # stands in for edge.synth.validity's check
    if item.task.id == "fin-019":
        return Rejection(item_id=item.task.id, stage="validity", reason="a golden call did not replay")
    return None


def test_funnel_counts_add_up():
    b = bench()
    code = b["fin-001"].golden_actions[1].args["corp_code"]
    items = [wrap(b[i]) for i in ("trf-001", "trf-002", "fin-019", "edu-029")] + [
        wrap(task_like("fin-001", query=f"고유번호 {code}인 회사의 전환사채 리픽싱 최저 조정가액을 알려 주세요.")),
        wrap(task_like("edu-030", id="zz-dup", query=b["edu-029"].query.replace("제과기능사", "제빵기능사"))),
    ]
    audit = ContaminationAudit([b["trf-002"]])  # trf-002 is then a verbatim bench query
    result = asyncio.run(run_funnel(items, validity=invalid_fin_019, catalog=load_catalog(), audit=audit))
    assert list(result.counts) == list(STAGES)
    assert {r.item_id: r.stage for r in result.rejections} == {
        "fin-019": "validity", "fin-001": "answerability", "zz-dup": "quality", "trf-002": "contamination"}
    assert [i.task.id for i in result.kept] == ["edu-029", "trf-001"]
    counts = list(result.counts.values())
    assert counts[0]["in"] == len(items) and counts[-1]["out"] == len(result.kept)
    for before, after in zip(counts, counts[1:]):
        assert before["out"] == after["in"]
    assert all(c["in"] - c["rejected"] == c["out"] for c in counts)
    assert sum(c["rejected"] for c in counts) == len(result.rejections) == len(items) - len(result.kept)
    assert "validity" in result.table()


def test_plain_function_and_no_stages():
    items = [wrap(bench()["trf-001"])]
    result = asyncio.run(run_funnel(items, validity=lambda item: None))
    assert [i.task.id for i in result.kept] == ["trf-001"] and result.rejections == []
    assert result.counts["contamination"] == {"in": 1, "rejected": 0, "out": 1}
