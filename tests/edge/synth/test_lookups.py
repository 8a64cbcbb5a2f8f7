"""Name lookups (issue 25): a question that names an identifier ("학교명이 청주덕봉고등학교인") has a golden call that
finds its code before the first call taking it; without one, the attempt is dropped for its own reason."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import numpy as np
import pytest
from typer.testing import CliRunner

from appliance.cli import app
from bench.taskset.build import open_sandbox_gateway
from edge.filter.answerability import leaked_answer
from edge.synth.attempt import new_draft
from edge.synth.execute import Abandon, Trace, _executed, _said, fetch
from edge.synth.grounding import ungrounded
from edge.synth.item import FinalType, JunctionType, TaskType
from edge.synth.lookups import NO_LOOKUP, add_lookups
from edge.synth.realise import realise
from edge.synth.validity import check_validity, replay_records
from edge.synth.walk import LiveGraph
from mcp_gateway.catalog import load_catalog
from tests.conftest import TEST_DATA_DIR, TEST_SCALE
from tests.edge.synth.conftest import ENV, replay_gateway, synthesize_into

CATALOG = load_catalog()
SCHOOL = {"ATPT_OFCDC_SC_CODE": "M10", "SD_SCHUL_CODE": "8000394"}  # 청주덕봉고등학교 in the test world
NAME = "청주덕봉고등학교"
SEARCH_TO_CLASSES = SimpleNamespace(source="search_school_info", target="get_school_class_info",
                                    plan=[{"param": "SD_SCHUL_CODE", "kind": "upstream", "field": "SD_SCHUL_CODE"}])


def _graph(*edges) -> LiveGraph:
    outgoing: dict = {}
    for e in edges:
        outgoing.setdefault(e.source, []).append(e)
    return LiveGraph(outgoing, {})


async def _named_school_sem(graph: LiveGraph):
    """A SEM over one school's classes and majors, asked by the school's code, with the lookups added."""
    gateway = open_sandbox_gateway(TEST_DATA_DIR, scale=TEST_SCALE)
    try:
        draft = new_draft(gateway.runtime, 0, 0, TaskType.SEM)
        got1, calls1, _ = await fetch(draft, "get_school_class_info", dict(SCHOOL), 0)
        got2, calls2, _ = await fetch(draft, "get_school_major_info", dict(SCHOOL), 0)
        trace = Trace("sem", "get_school_class_info", dict(SCHOOL), others=[("get_school_major_info", dict(SCHOOL))],
                      final={"kind": "sum"})
        trace.name_identifiers(draft.spec("get_school_class_info"), SCHOOL, got1)
        executed = _executed(trace, [], FinalType.SEM, {"op": "count", "calls": [*calls1, *calls2]},
                             [("", got1, calls1), ("", got2, calls2)])
        try:
            await add_lookups(draft, executed, graph)
        except Abandon as exc:
            return draft, executed, str(exc), gateway.catalog
        return draft, executed, None, gateway.catalog
    finally:
        await gateway.aclose()


def test_a_named_code_is_looked_up_by_its_name_before_its_first_use():
    draft, executed, dropped, catalog = asyncio.run(_named_school_sem(_graph(SEARCH_TO_CLASSES)))
    assert dropped is None
    assert executed.trace.spoken[SCHOOL["SD_SCHUL_CODE"]] == ("학교명", NAME)
    lookup = draft.calls[-1]
    assert (lookup.tool, lookup.step, lookup.args.get("SCHUL_NM")) == ("search_school_info", 0, NAME)
    assert [c.step for c in draft.calls[:-1]] == [1, 1]  # the school's own calls moved a step on
    assert [i.step for i in draft.invocations] == [c.step for c in draft.calls]  # and so does what is re-recorded
    junction = executed.junctions[0]
    assert (junction.source, junction.target, junction.field, junction.param) == (
        "search_school_info", "get_school_class_info", "SD_SCHUL_CODE", "SD_SCHUL_CODE")
    assert junction.type is JunctionType.SEQ and executed.task_type is TaskType.SEQ  # a real junction, classed
    assert SCHOOL["SD_SCHUL_CODE"] in executed.trace.bound_values
    query, _ = realise(executed.trace, catalog, np.random.default_rng(0))
    assert NAME in query and SCHOOL["SD_SCHUL_CODE"] not in query


def test_a_named_code_without_a_lookup_drops_the_attempt_for_that_reason():
    _, _, dropped, _ = asyncio.run(_named_school_sem(_graph()))  # no edge into the class list, no name parameter
    assert dropped is not None and dropped.startswith(NO_LOOKUP)
    assert "get_school_class_info.SD_SCHUL_CODE" in dropped


LAW_AND_SCHOOL = ["search_laws", "get_law_text", "get_law_text_by_effective_date", "search_school_info",
                  "get_school_class_info", "get_school_major_info", "get_dart_company_overview", "find_dart_corp_code"]


@pytest.fixture(scope="module")
def named_items(tmp_path_factory):
    graph = tmp_path_factory.mktemp("lookup-graph") / "graph.duckdb"
    done = CliRunner().invoke(app, ["edge", "graph", "build", "--rounds", "2", "--trials", "16", "--run", str(graph),
                                    *[f"--tool={t}" for t in LAW_AND_SCHOOL]], env=ENV)
    assert done.exit_code == 0, done.output
    cassettes = tmp_path_factory.mktemp("lookup-cassettes")
    run = synthesize_into(graph, cassettes, n=16)
    return run, cassettes


def test_items_that_name_an_identifier_find_it_first_and_replay(named_items):
    run, cassettes = named_items
    looked_up = [i for i in run.items if "lookup" in i.task.tags]
    assert looked_up, f"no item names an identifier; abandoned: {run.abandoned.most_common(8)}"

    async def replay():
        gateway = replay_gateway(cassettes, run.items[0].task.bundle)
        try:
            kept, rejected = await check_validity(run.items, gateway)  # replays, answers recompute, grounded
            return kept, rejected, [await replay_records(i, gateway) for i in looked_up], gateway.catalog
        finally:
            await gateway.aclose()

    kept, rejected, replayed, catalog = asyncio.run(replay())
    assert not rejected, rejected
    for item, (records, failure) in zip(looked_up, replayed, strict=True):
        assert failure is None and ungrounded(item, records, catalog) == []
        lookup, actions = item.junctions[0], item.task.golden_actions
        use = next(a for a in actions if a.tool == lookup.target and lookup.param in a.args)
        code = str(use.args[lookup.param])
        assert code not in item.task.query  # the question names it, and a call before its first use finds it
        found = [k for k, a in enumerate(actions) if a.tool == lookup.source and a.step < use.step]
        assert any(code in {str(v) for r in records[k] for v in r.values()} for k in found)


def test_a_comparison_answers_a_branch_as_the_question_says_it():
    status = CATALOG.get("seoul_localdata_010101_db").param("TRDSTATEGBN")
    assert _said(status, "03", {}) == "폐업"  # the question says 영업상태가 폐업; the answer is the word too
    assert _said(CATALOG.get("get_bill_detail").param("BILL_NO"), "2211220", {"2211220": ("의안명", "법원조직법")}) \
        == "법원조직법"
    task = SimpleNamespace(query="영업상태 영업/정상, 폐업 각각의 인허가 정보를 비교하면 어느 쪽이 많나요?",
                           accepted_answers=["폐업"], golden_actions=[])
    assert leaked_answer(task, ["영업/정상", "폐업"]) is None  # one of the options the question offers
    assert leaked_answer(task) == "폐업"
