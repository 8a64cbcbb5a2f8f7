"""Export: verl parquet and SFT JSONL from bench tasks replayed through the checked-in bundle (strict replay)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bench.runner import open_bench_gateway
from bench.tool_order import presented_order
from edge.dataset.export import ExportError, bundle_for, export_sft, export_verl, replay_items
from edge.synth.item import TaskType
from mcp_gateway.catalog import load_catalog
from tests.edge.filter.items import bench, task_like, wrap

CASSETTES = Path(__file__).resolve().parents[3] / "cassettes"
IDS = ("trf-001", "fin-001", "fin-019", "edu-029")  # chains, parallel steps, number / string / state answers


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def items():
    return [wrap(bench()[i], task_type=TaskType.MIXED if i == "edu-029" else TaskType.SEQ) for i in IDS]


@pytest.fixture(scope="module")
def replays(items):
    async def replay():
        gateway = open_bench_gateway(items[0].task.bundle, cassettes=CASSETTES)
        try:
            return await replay_items(items, gateway)
        finally:
            await gateway.aclose()

    return asyncio.run(replay())


def test_verl_parquet_round_trips(tmp_path, items, replays, catalog):
    path = export_verl(items, tmp_path / "train.parquet", replays=replays, catalog=catalog)
    rows = pq.read_table(path).to_pylist()
    by_id = {i.task.id: i for i in items}
    assert [json.loads(r["extra_info"])["item_id"] for r in rows] == sorted(IDS)
    for index, row in enumerate(rows):
        extra = json.loads(row["extra_info"])
        task = by_id[extra["item_id"]].task
        truth = json.loads(row["reward_model"]["ground_truth"])
        assert row["data_source"] == "kopa-edge" and row["ability"] == "tool-calling"
        assert row["reward_model"]["style"] == "rule"
        assert [m["role"] for m in row["prompt"]] == ["system", "user"] and row["prompt"][1]["content"] == task.query
        assert "<RUNTIME_CONTEXT>" in row["prompt"][0]["content"]  # the bench prompt with the episode's key token
        dumped = task.model_dump(mode="json")
        assert truth["accepted_answers"] == dumped["accepted_answers"]
        assert truth["response_type"] == dumped["response_type"] and truth["reward_basis"] == dumped["reward_basis"]
        assert truth["golden_actions"] == dumped["golden_actions"] == extra["golden_actions"]
        assert extra["index"] == index and extra["tools"] == presented_order(task.id, task.available_tools, 0)
        assert extra["bundle"] == task.bundle and extra["task_type"] == by_id[task.id].task_type.value
        assert extra["answer_spec"] == truth


def test_sft_jsonl_round_trips(tmp_path, items, replays, catalog):
    path = export_sft(items, tmp_path / "sft.jsonl", replays=replays, catalog=catalog)
    records = {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    assert sorted(records) == sorted(IDS)
    for item in items:
        task, messages = item.task, records[item.task.id]["messages"]
        assert messages[0]["role"] == "system" and messages[1] == {"role": "user", "content": task.query}
        calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
        assert [c["function"]["name"] for c in calls] == [a.tool for a in task.golden_actions]
        tool_messages = [m for m in messages if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_messages] == [c["id"] for c in calls]
        assert all(json.loads(m["content"])["outcome"] == "semantic_success" for m in tool_messages)
        # one assistant turn per golden step; placeholders resolved to the episode's key token
        assert sum(1 for m in messages if m.get("tool_calls")) == task.n_steps
        assert all("{" not in json.loads(c["function"]["arguments"]).get("KEY", "") for c in calls)
        assert messages[-1]["role"] == "assistant" and "tool_calls" not in messages[-1]
    assert records["fin-019"]["messages"][-1]["content"] == "\\boxed{37}"
    assert records["trf-001"]["messages"][-1]["content"] == "ANSWER: {떡만둣국}"
    # the tools as the replayed episode (seed 0) showed them: shuffled, never golden-first (bench.tool_order)
    trf = bench()["trf-001"]
    assert [t["function"]["name"] for t in records["trf-001"]["tools"]] == presented_order(trf.id, trf.available_tools, 0)


def test_same_items_give_byte_identical_files(tmp_path, items, replays, catalog):
    a = export_verl(items, tmp_path / "a.parquet", replays=replays, catalog=catalog)
    b = export_verl(list(reversed(items)), tmp_path / "b.parquet", replays=replays, catalog=catalog)
    assert a.read_bytes() == b.read_bytes()
    c = export_sft(items, tmp_path / "a.jsonl", replays=replays, catalog=catalog)
    d = export_sft(list(reversed(items)), tmp_path / "b.jsonl", replays=replays, catalog=catalog)
    assert c.read_bytes() == d.read_bytes()


def test_existing_file_is_not_overwritten(tmp_path, items, replays, catalog):
    path = tmp_path / "sft.jsonl"
    path.write_text("keep me\n", encoding="utf-8")
    with pytest.raises(ExportError, match="exists; pass overwrite=True"):
        export_sft(items, path, replays=replays, catalog=catalog)
    assert path.read_text(encoding="utf-8") == "keep me\n"
    export_sft(items, path, replays=replays, catalog=catalog, overwrite=True)
    assert path.read_text(encoding="utf-8") != "keep me\n"
    assert [p.name for p in tmp_path.iterdir()] == ["sft.jsonl"]  # no temporary file left behind


def test_item_with_unknown_tool_is_refused_with_its_id(tmp_path, items, replays, catalog):
    dumped = bench()["fin-019"].model_dump(mode="json")
    bad = task_like("fin-019", id="syn-bad", available_tools=[*dumped["available_tools"], "get_weather_forecast_x"],
                    golden_actions=[{**dumped["golden_actions"][0], "tool": "get_weather_forecast_x"},
                                    *dumped["golden_actions"][1:]])
    for export, name in ((export_verl, "x.parquet"), (export_sft, "x.jsonl")):
        with pytest.raises(ExportError, match=r"task 'syn-bad': .*unknown tool 'get_weather_forecast_x'"):
            export(items + [wrap(bad)], tmp_path / name, replays=replays, catalog=catalog)
        assert not (tmp_path / name).exists()


def test_unreplayed_item_is_refused(tmp_path, items, replays, catalog):
    with pytest.raises(ExportError, match="item 'trf-002' has no replay"):
        export_verl(items + [wrap(bench()["trf-002"])], tmp_path / "x.parquet", replays=replays, catalog=catalog)


def test_bundle_for_one_pinned_bundle_returns_it_verified(items):
    ref = bundle_for(items, CASSETTES, "kopa-edge")
    assert str(ref) == items[0].task.bundle and ref.folder.is_dir()


def test_bundle_for_several_pinned_bundles_writes_their_union(tmp_path, items):
    import shutil

    from recorder import CassetteStore

    cassettes = tmp_path / "cassettes"
    shutil.copytree(CASSETTES / "kopa-default", cassettes / "kopa-default")
    store = CassetteStore(cassettes)
    versions = [m.version for m in store.versions("kopa-default")]
    assert len(versions) == 2
    other = wrap(task_like("trf-002", bundle=f"kopa-default@{versions[0]}" if f"kopa-default@{versions[0]}" !=
                           items[0].task.bundle else f"kopa-default@{versions[1]}"))
    ref = bundle_for([items[0], other], cassettes, "kopa-edge")
    assert ref.name == "kopa-edge" and store.head("kopa-edge") == ref.version
    merged = {i.fingerprint for i in store.open(str(ref)).interactions()}
    for version in versions:
        assert {i.fingerprint for i in store.open(f"kopa-default@{version}").interactions()} <= merged


def test_slipped_rows_show_a_keyless_call_untrained_its_error_and_then_the_golden_trajectory(tmp_path, items, replays,
                                                                                          catalog):
    from edge.dataset.export import slipped

    async def replay():
        gateway = open_bench_gateway(items[0].task.bundle, cassettes=CASSETTES)
        try:
            return await replay_items(items, gateway, slips=1.0)
        finally:
            await gateway.aclose()

    clean = export_sft(items, tmp_path / "clean.jsonl", replays=replays, catalog=catalog)
    slips = export_sft(items, tmp_path / "slips.jsonl", replays=asyncio.run(replay()), catalog=catalog)
    clean_rows = {r["id"]: r for r in map(json.loads, clean.read_text(encoding="utf-8").splitlines())}
    for row in map(json.loads, slips.read_text(encoding="utf-8").splitlines()):
        messages = row["messages"]
        at = next(i for i, m in enumerate(messages) if m.get("weight") == 0)
        slip, answer, golden = messages[at], messages[at + 1], messages[at + 2]
        assert [m for m in messages if "weight" in m] == [slip]  # one slip, the only turn not learnt
        (call,) = slip["tool_calls"]
        keyed = next(c for c in golden["tool_calls"] if "KEY" in json.loads(c["function"]["arguments"]))
        assert call["function"]["name"] == keyed["function"]["name"]
        assert json.loads(call["function"]["arguments"]) == {
            k: v for k, v in json.loads(keyed["function"]["arguments"]).items() if k != "KEY"}
        told = json.loads(answer["content"])
        assert answer["tool_call_id"] == call["id"] == "call_slip" and told["outcome"] == "missing_field"
        assert "this session was given" in told["message"] and "kopa-" not in told["message"]  # no token in it
        # the first keyed call of the trajectory is the one slipped, and without the slip the row is the clean one
        assert not any("KEY" in json.loads(c["function"]["arguments"])
                       for m in messages[:at] for c in m.get("tool_calls") or [])
        assert messages[:at] + messages[at + 2:] == clean_rows[row["id"]]["messages"]
    # which items slip: a share of them, by a seeded hash of the id
    ids = [f"edge-{n:05d}" for n in range(2000)]
    chosen = [i for i in ids if slipped(i, 0.25)]
    assert 0.22 < len(chosen) / len(ids) < 0.28 and chosen == [i for i in ids if slipped(i, 0.25)]
    assert chosen != [i for i in ids if slipped(i, 0.25, seed=1)]
    assert not any(slipped(i, 0.0) for i in ids) and all(slipped(i, 1.0) for i in ids)
    with pytest.raises(ExportError, match="slips is a share of the items, from 0 to 1; got 1.5"):
        asyncio.run(replay_items(items, None, slips=1.5))
