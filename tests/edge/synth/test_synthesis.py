"""Items synthesized over a real Phase A run: bench-scorable, parallel where they fan out, no leaked
intermediate value, valid in replay, reproducible by seed, spread over Table 12's classes."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from bench.agents import OracleAgent
from bench.agents.oracle import format_answer
from bench.episode import run_episode
from bench.task import ResponseType, validate_against_catalog
from edge.filter.contamination import ContaminationAudit
from edge.filter.funnel import run_funnel
from edge.synth.answer import arithmetic, recompute
from edge.synth.build import GIVE_UP, TABLE_12, quotas
from edge.synth.execute import Abandon, _check_determined, _primary, classify, untied
from edge.synth.item import FAN_BUDGET, FinalType, Junction, JunctionType, TaskType
from edge.synth.validity import check_validity, replay_records
from mcp_gateway.catalog import load_catalog
from recorder.cassette import CassetteStore

from .conftest import BENCH_TASKS, N_ITEMS, replay_gateway, synthesize_into


class WrongAnswerAgent(OracleAgent):
    """The golden trajectory, then a wrong answer."""

    name = "wrong"

    async def run(self, context):
        await super().run(context)
        task = context.task
        return format_answer(task, "-987654" if task.response_type is ResponseType.NUMBER else "전혀 다른 답")


@pytest.fixture(scope="module")
def episodes(synthesized):
    items, _, cassettes, _ = synthesized

    async def run():
        gateway = replay_gateway(cassettes, items[0].task.bundle)
        try:
            right = [await run_episode(i.task, OracleAgent(), gateway, seed=0) for i in items]
            wrong = [await run_episode(i.task, WrongAnswerAgent(), gateway, seed=0) for i in items]
            return right, wrong
        finally:
            await gateway.aclose()
    return asyncio.run(run())


def test_the_golden_trajectory_scores_one_and_a_wrong_answer_zero(synthesized, episodes):
    items, _, _, _ = synthesized
    right, wrong = episodes
    failed = {i.task.id: (o.error or o.transcript[-1:]) for i, o in zip(items, right, strict=True)
              if not (o.passed and o.action.action == 1.0)}
    assert failed == {}
    assert not any(o.passed for o in wrong)


def test_items_are_valid_tasks_with_their_types_recorded(synthesized):
    items, _, _, _ = synthesized
    assert validate_against_catalog([i.task for i in items], load_catalog()) == []
    for item in items:
        assert len(item.call_records) == len(item.task.golden_actions)
        assert item.writer.startswith("rule:") and item.graph_run == "graph.duckdb"
        for j in item.junctions:
            expected = {1: JunctionType.SEQ}.get(j.cardinality, JunctionType.FAN if j.cardinality <= 5 else JunctionType.DRV)
            assert j.type is expected
            assert (j.operator is not None) == (j.type is JunctionType.DRV)
        if not item.junctions:
            assert item.task_type.value == item.final.value  # the SEM/CMP/COND templates
        if item.task_type is TaskType.DRV:  # single-junction: the selection's ≤ φ values, one target call each
            (j,) = item.junctions
            values = [a for a in item.task.golden_actions if a.tool == j.target and a.args.get(j.param) is not None]
            assert 1 <= len({str(a.args[j.param]) for a in values}) <= FAN_BUDGET
        if item.task_type is TaskType.MIXED and item.final is FinalType.COND:  # a threshold composes with a chain
            assert len(item.junctions) >= 2, (item.task.id, item.junctions)
            if item.recipe["op"] == "cond":  # and its branches ask different things
                assert item.recipe["then"] != item.recipe["else"], (item.task.id, item.recipe)
        if item.recipe.get("op") == "compare":  # branches that tie would answer 0 whatever the question asks
            counts = [sum(item.call_records[c] for c in g["calls"]) for g in item.recipe["groups"]]
            assert len(set(counts)) > 1, (item.task.id, counts)
        if item.task_type is TaskType.SEM:  # two or three tools asked alike at one step, then the calculator
            first = [a for a in item.task.golden_actions if a.step == item.task.golden_actions[0].step]
            assert 2 <= len({a.tool for a in first}) == len(first) <= 3 and len({str(a.args) for a in first}) == 1
    kinds = Counter(i.task_type for i in items)
    assert len(kinds) >= 4, kinds  # a small graph still gives several of Table 12's classes


def test_parallel_calls_share_a_step(synthesized):
    items, _, _, _ = synthesized
    parallel = [i for i in items if any(j.type is JunctionType.FAN for j in i.junctions)
                or i.final in (FinalType.CMP,) or i.task_type is TaskType.SEM]
    assert parallel, "no item with parallel calls"
    for item in parallel:
        steps = Counter(a.step for a in item.task.golden_actions)
        assert max(steps.values()) >= 2, (item.task.id, item.task_type, steps)
        assert "parallel" in item.task.tags
    for item in items:
        for j in item.junctions:
            if j.type is JunctionType.FAN:  # one call per value, all at one step
                at_target = Counter(a.step for a in item.task.golden_actions if a.tool == j.target)
                branches = max(Counter(a.step for a in item.task.golden_actions if a.tool == j.source).values())
                if branches == 1:
                    assert max(at_target.values()) == j.cardinality
                else:  # a fan-out inside each branch of an earlier one: typed by its widest branch
                    assert j.cardinality <= max(at_target.values()) <= j.cardinality * branches


def test_queries_name_no_value_that_crossed_a_junction(synthesized):
    items, _, _, _ = synthesized
    checked = 0
    for item in items:
        actions = item.task.golden_actions
        user_given = {str(v) for v in actions[0].args.values()}
        for j in item.junctions:
            for action in actions:
                if action.tool == j.target and j.param in action.args:
                    value = str(action.args[j.param])
                    if len(value) >= 2 and value not in user_given:
                        checked += 1
                        assert value not in item.task.query, (item.task.id, value, item.task.query)
    assert checked > 0


def test_stage_one_keeps_sound_items_and_rejects_a_tampered_answer(synthesized):
    items, _, cassettes, _ = synthesized
    target = items[0]
    wrong = "-987654" if target.task.response_type is ResponseType.NUMBER else "전혀 다른 답"
    tampered = target.model_copy(update={"task": target.task.model_copy(update={"accepted_answers": (wrong,)})})
    fewer = items[1].model_copy(update={"call_records": tuple(n + 1 for n in items[1].call_records)})

    async def run():
        gateway = replay_gateway(cassettes, target.task.bundle)
        try:
            good = await check_validity(items, gateway)
            bad = await check_validity([tampered, fewer], gateway)
            records, failure = await replay_records(items[0], gateway)
            return good, bad, records, failure
        finally:
            await gateway.aclose()

    (kept, rejected), (_, bad), records, failure = asyncio.run(run())
    assert rejected == [] and kept == list(items)
    assert [r.item_id for r in bad] == [target.task.id, items[1].task.id]
    assert all(r.stage == "validity" for r in bad)
    assert wrong in bad[0].reason and "records" in bad[1].reason
    assert failure is None and recompute(target.recipe, records) == target.task.accepted_answers[0]


def test_the_same_graph_and_seed_give_byte_identical_items_on_any_number_of_workers(synthesized, graph_path,
                                                                                     tmp_path):
    """Byte-identical, bundle version included: attempts are seeded by (seed, attempt) and planned per batch from
    earlier batches only, and the recording is stamped with a fixed time and no timings, so two worker processes
    make the same calls and the same content-addressed version as one process, in another cassette folder. With
    workers, the workers record the golden calls and the recording gateway makes none itself: it only writes the
    kept items' exchanges, and they are the ones it would have recorded."""
    items, abandoned, _, first = synthesized
    seen: dict = {}
    again = synthesize_into(graph_path, tmp_path / "cassettes", workers=2, seen=seen)
    assert seen["recorded_here"] == 0
    assert items[0].task.bundle.split("@")[0] == "edge-synth"
    assert [i.model_dump_json() for i in again.items] == [i.model_dump_json() for i in items]
    assert (again.abandoned, again.screened, again.attempts) == (abandoned, first.screened, first.attempts)
    other = synthesize_into(graph_path, tmp_path / "other", n=6, seed=7)
    assert [i.task.query for i in other.items] != [i.task.query for i in items[:6]]


def test_quotas_follow_table_12():
    split = quotas(1000)
    assert sum(split.values()) == 1000
    for kind, share in TABLE_12.items():
        assert abs(split[kind] / 10 - share) <= 0.1
    small = quotas(N_ITEMS)
    assert sum(small.values()) == N_ITEMS and small[TaskType.MIXED] == 6


def test_screened_synthesis_fills_the_quotas_with_items_the_filter_keeps(synthesized):
    """The screen runs the funnel's rule stages as items are made: the funnel then refuses exactly the items the
    screen refused, and what it keeps fills each class's quota (short only where a class was given up)."""
    items, abandoned, _, done = synthesized
    result = asyncio.run(run_funnel(items, catalog=load_catalog(), audit=ContaminationAudit(BENCH_TASKS)))
    # a near-duplicate question is refused before its calls are recorded: the funnel never sees one
    early = done.screened["quality: near-duplicate"]
    assert len(result.rejections) == sum(done.screened.values()) - early
    assert not [r for r in result.rejections if "near-duplicate" in r.reason]
    kept = Counter(i.task_type for i in result.kept)
    quota = quotas(N_ITEMS)
    given_up = {t for t in TaskType if f"{t.value}: gave up after {GIVE_UP}" in " ".join(abandoned)}
    assert {t: kept[t] for t in quota if t not in given_up} == {t: quota[t] for t in quota if t not in given_up}
    assert all(kept[t] <= quota[t] for t in quota)  # a class never takes another's room
    missing = N_ITEMS - len(result.kept)
    assert missing <= N_ITEMS // 4, (kept, abandoned.most_common(8))
    assert json.dumps(sorted(abandoned.items()), ensure_ascii=False)  # reasons are plain text


def test_the_bundle_holds_exactly_the_kept_items_golden_calls(synthesized):
    """Attempts explore a runtime that records nothing; the kept items' calls are made again through the
    recording one. So the bundle's interactions are the golden calls (pages included), nothing abandoned."""
    items, _, cassettes, _ = synthesized
    bundle = CassetteStore(cassettes).open(items[0].task.bundle)
    golden = [a for i in items for a in i.task.golden_actions]
    upstream = {a.tool for a in golden if load_catalog().get(a.tool).endpoint is not None}  # not the calculator
    assert {i.tool for i in bundle.interactions()} == upstream
    # the client reads ahead a page, so a call may hold two interactions, but one request (query fingerprint)
    assert 0 < len({i.query_fingerprint for i in bundle.interactions()}) <= len(golden)


def test_a_drv_junction_is_the_drv_pattern_however_many_values_its_selection_keeps():
    """§3.3 types a junction by its field's cardinality; the DRV items of Table 12 are single-junction trajectories
    (§5), so a selection keeping several values (one downstream call each) does not add a FAN pattern."""
    drv = Junction(source="a", target="b", field="f", param="p", cardinality=40, type=JunctionType.DRV,
                   operator="ge", pivot=3)
    lookup = Junction(source="find", target="a", field="code", param="code", cardinality=1, type=JunctionType.SEQ)
    fan = Junction(source="b", target="c", field="g", param="q", cardinality=3, type=JunctionType.FAN)
    assert classify([drv], FinalType.SEM) is TaskType.DRV
    assert classify([lookup, drv], FinalType.SEM) is TaskType.MIXED  # two patterns
    assert classify([drv, fan], FinalType.SEM) is TaskType.MIXED
    assert classify([drv], FinalType.CMP) is TaskType.MIXED


def test_a_calculated_answer_closes_with_the_calculator_whose_value_is_the_answer(synthesized):
    """As KOPA-Bench's trajectories do: counts added or subtracted go through evaluate_expression, its expression
    made of the counts the golden calls returned, and its replayed value is the accepted answer."""
    items, _, cassettes, _ = synthesized
    calculated = [i for i in items if any(a.tool == "evaluate_expression" for a in i.task.golden_actions)]
    assert calculated, "no item adds or subtracts counts"

    async def run():
        gateway = replay_gateway(cassettes, items[0].task.bundle)
        try:
            return [await replay_records(i, gateway) for i in calculated]
        finally:
            await gateway.aclose()

    for item, (records, failure) in zip(calculated, asyncio.run(run()), strict=True):
        actions = item.task.golden_actions
        k = max(n for n, a in enumerate(actions) if a.tool == "evaluate_expression")
        last = actions[k]
        assert failure is None and last.value_compare_args == ()
        # the calculator closes the data calls; only a workspace call keeping its answer may follow it
        assert all(a.tool in ("write_note", "add_to_watchlist") for a in actions[k + 1:]), actions[k + 1:]
        assert last.step > max(a.step for a in actions[:k])  # after every count it reads
        terms = [int(t) for t in last.args["expression"].replace("-", "+").split("+")]  # counts, nothing else
        assert len(terms) >= 2 and all(t >= 0 for t in terms)
        assert float(records[k][0]["value"]) == float(item.task.accepted_answers[0])
        assert recompute(item.recipe, records) == item.task.accepted_answers[0]  # the recipe reads the data calls
    plain = [i for i in items if i not in calculated and i.recipe["op"] == "field"]
    assert all(i.task.golden_actions[-1].tool != "evaluate_expression" for i in plain)


def test_arithmetic_is_the_sum_of_results_or_the_largest_minus_the_smallest_group():
    rows = [[{}] * 8, [], [{}] * 5, [{}] * 3]  # call 1 is call 0's second page: its records sit at call 0
    assert arithmetic({"op": "count", "calls": [0, 1, 2]}, rows) == "8 + 5"
    assert arithmetic({"op": "count", "calls": [0, 1]}, rows) is None  # one result: a count, no calculation
    diff = {"op": "compare", "pick": "diff", "groups": [{"label": "a", "calls": [3]}, {"label": "b", "calls": [0, 1]}]}
    assert arithmetic(diff, rows) == "8 - 3"
    assert arithmetic({**diff, "pick": "max"}, rows) is None  # the answer is a label
    assert arithmetic({"op": "field", "calls": [0], "field": "x"}, rows) is None
    cond = {"op": "cond", "test": {"calls": [3], "cmp": "ge", "threshold": 1}, "taken": "then",
            "then": {"op": "count", "calls": [2, 3]}, "else": {"op": "count", "calls": [3]}}
    assert arithmetic(cond, rows) == "5 + 3"
    assert arithmetic({**cond, "taken": "else"}, rows) is None


def test_a_comparison_of_branches_picks_what_names_one_branch():
    """A tie had abandoned a chain at its last step, after every call was made."""
    assert untied("max", [8, 3, 5]) == "max" and untied("min", [8, 3, 5]) == "min"
    assert untied("max", [8, 8, 5]) == "min"  # two largest: the one smallest still names a branch
    assert untied("min", [8, 5, 5]) == "max"
    assert untied("max", [5, 5, 5]) == "diff" and untied("min", [4, 9, 4, 9]) == "diff"
    assert untied("diff", [8, 3]) == "diff"
    recipe = {"op": "compare", "pick": untied("max", [2, 2, 1]), "measure": "count",
              "groups": [{"label": "a", "calls": [0]}, {"label": "b", "calls": [1]}, {"label": "c", "calls": [2]}]}
    assert recompute(recipe, [[{}] * 2, [{}] * 2, [{}]]) == "c"


def test_branches_that_tie_are_summed_not_compared():
    """Comparing branches that returned as many records answers 0 whatever is asked (258 of 1,029 items did: a
    bill's detail is one record per bill): a MIXED chain sums such branches instead, and compares those that
    differ."""
    import numpy as np

    from edge.synth.execute import Trace, _chain_final

    fan = Junction(source="s", target="t", field="f", param="p", cardinality=3, type=JunctionType.FAN)

    def final(counts):
        branches = [(f"b{k}", [{}] * n, [k]) for k, n in enumerate(counts)]
        return _chain_final(None, Trace("chain", "s", {}), [fan], branches, TaskType.MIXED, np.random.default_rng(0))

    tied = final([1, 1, 1])
    assert tied.final is FinalType.SEM and tied.recipe["op"] == "count" and tied.answer[0] == "3"
    differ = final([1, 4, 2])
    assert differ.final is FinalType.CMP and differ.recipe["op"] == "compare" and differ.answer[0] != "0"


def test_an_item_that_keeps_its_answer_closes_with_the_workspace_call_and_is_scored_on_the_state(graph_path,
                                                                                              tmp_path):
    """As KOPA-Bench's tasks ask to add a name to a watchlist or note a value: the question says where, the golden
    trajectory ends with the write, and the oracle's replay reaches the golden workspace state."""
    cassettes = tmp_path / "cassettes"
    done = synthesize_into(graph_path, cassettes, n=6, seed=3, save_share=1.0)
    assert done.items

    async def run():
        gateway = replay_gateway(cassettes, done.items[0].task.bundle)
        try:
            return [await run_episode(i.task, OracleAgent(), gateway, seed=0) for i in done.items]
        finally:
            await gateway.aclose()

    for item, outcome in zip(done.items, asyncio.run(run()), strict=True):
        task, last = item.task, item.task.golden_actions[-1]
        answer = task.accepted_answers[0]
        if task.response_type is ResponseType.NUMBER:
            assert last.tool == "write_note" and last.args["text"] == answer
            assert f"'{last.args['key']}'" in task.query and "메모해 두세요" in task.query
        else:
            assert last.tool == "add_to_watchlist" and last.args["item"] == answer
            assert f"'{last.args['list_name']}' 관심목록에" in task.query
        assert set(last.value_compare_args) == set(last.args)  # where and what are both checked
        assert "ENVIRONMENT" in task.reward_basis and task.golden_state_hash
        assert outcome.passed and outcome.action.action == 1.0, (task.id, outcome.error)
    with pytest.raises(ValueError, match="save_share"):
        synthesize_into(graph_path, tmp_path / "bad", n=1, save_share=1.5)


def test_a_seq_chain_starts_from_part_of_what_named_one_entity(graph_path, tmp_path):
    """A SEQ start with two or more known inputs keeps only part of them (``attempt.BROADEN``), so its one value is
    read from every record that carries it rather than from the one record all of its inputs name."""
    from edge.graph.store import GraphStore
    from edge.synth.walk import LiveGraph

    store = GraphStore.open(graph_path, read_only=True)
    try:
        graph = LiveGraph.from_store(store, load_catalog())
    finally:
        store.close()
    done = synthesize_into(graph_path, tmp_path / "c", n=10, seed=3, screen=False, type_mix={TaskType.SEQ: 1.0})
    seq = [i for i in done.items if i.task_type is TaskType.SEQ]
    assert len(seq) >= 5, done.abandoned.most_common(5)
    broadened = 0
    for item in seq:
        start = item.junctions[0].source
        call = next(a for a in item.task.golden_actions if a.tool == start)
        whole = [known for known in graph.inputs[start] if len(known) >= 2]
        # no start call is asked with every input of a multi-input one Phase A saw working
        assert not any(known.items() <= call.args.items() for known in whole), (item.task.id, call.args)
        broadened += bool(whole)
    assert broadened, "no SEQ start had a multi-input to broaden: the graph no longer tests the rule"


def test_a_junction_is_the_bound_field_that_picks_what_the_target_is_asked_about():
    plan = [{"kind": "upstream", "param": "AGE", "field": "AGE"},
            {"kind": "upstream", "param": "BILL_ID", "field": "BILL_ID"}]
    votes = [{"AGE": "22", "BILL_ID": f"PRC_{n}", "HOUSE": "본회의" if n % 2 else "위원회"} for n in range(6)]
    assert _primary(plan, votes) == ("BILL_ID", "BILL_ID")  # six bills, one term: the junction is the bill's
    assert _primary(plan, votes[:1]) == ("AGE", "AGE")  # a tie goes to the plan's order
    assert _primary([{"kind": "given", "param": "AGE", "value": "22"}], votes) is None

    class Edge:
        source, target = "votes", "detail"

    _check_determined(plan, votes, "BILL_ID", "PRC_3", Edge)  # the term follows from the bill
    by_term = [{"kind": "upstream", "param": "AGE", "field": "AGE"},
               {"kind": "upstream", "param": "HOUSE", "field": "HOUSE"}]
    with pytest.raises(Abandon, match="HOUSE varies among the records whose AGE is '22'"):
        _check_determined(by_term, votes, "AGE", "22", Edge)  # which house would be the first record's pick


def test_a_conditional_checks_and_branches_within_one_platform_about_what_it_checked(graph_path, tmp_path):
    """COND's check and both branches are one platform's tools, and a branch asks about the value the check asked
    about where its known inputs allow (the same city): not a count of Suwon's budget lines deciding between Seoul's
    hospitals and a DART filing."""
    done = synthesize_into(graph_path, tmp_path / "cassettes", n=12, seed=3, type_mix={TaskType.COND: 1.0})
    items = [i for i in done.items if i.task_type is TaskType.COND]
    assert len(items) >= 8, done.abandoned.most_common(5)
    catalog = load_catalog()
    shared = 0
    for item in items:
        data = [a for a in item.task.golden_actions if catalog.get(a.tool).endpoint is not None]
        assert len(data) == 2 and len({catalog.get(a.tool).platform for a in data}) == 1, item.task.golden_actions
        check, branch = ({str(v) for k, v in a.args.items() if not catalog.get(a.tool).param(k).is_generic}
                         for a in data)
        shared += bool(check & branch)
    assert shared >= len(items) // 2, [i.task.query for i in items]
