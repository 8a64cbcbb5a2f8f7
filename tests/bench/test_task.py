"""The task schema refuses bad tasks with the task and the field named; the loader reads JSON and JSONL."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from bench.task import (
    GoldenAction,
    ResponseType,
    RewardBasis,
    StateAction,
    SystemState,
    Task,
    TaskLoadError,
    load_tasks,
    parse_task,
    validate_against_catalog,
)
from mcp_gateway.catalog import load_catalog

DATA = Path(__file__).parent / "data"
JSONL = DATA / "tasks_small.jsonl"
HASH = "5eb22150aa3da529432ac611d4268db036f99b260eac8e221b0dc079c366eaaa"


@pytest.fixture(scope="module")
def raw_tasks() -> list[dict]:
    return [json.loads(line) for line in JSONL.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _write_jsonl(path: Path, records: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return path


def _refusal(path: Path) -> TaskLoadError:
    with pytest.raises(TaskLoadError) as info:
        load_tasks(path)
    return info.value


# ------------------------------------------------------------------------------------------------ the model


def test_a_task_loads_into_the_documented_fields():
    task = load_tasks(JSONL)[0]
    assert task == Task(
        id="fin-001", query="라이트론이 2026년 1월에 발행한 전환사채의 리픽싱 하한가 대비 어제 종가는 몇 퍼센트 높은가요?",
        domain="finance", platforms=("dart", "krx"),
        system_state=SystemState(predefined={"current_date": "2026-01-30"}, actions=(
            StateAction(name="dart_api_key", tool="get_dart_api_key", output_field="api_key"),
            StateAction(name="krx_api_key", tool="get_krx_api_key", output_field="api_key"))),
        available_tools=("find_dart_corp_code", "get_dart_convertible_bond_issuance_decision", "get_stock_price_trend",
                         "evaluate_expression"),
        golden_actions=(
            GoldenAction(step=0, tool="find_dart_corp_code", args={"corp_name": "라이트론"},
                         value_compare_args=("corp_name",)),
            GoldenAction(step=1, tool="get_dart_convertible_bond_issuance_decision",
                         args={"corp_code": "00367482", "bgn_de": "20260101", "end_de": "20260130"},
                         value_compare_args=("corp_code",)),
            GoldenAction(step=1, tool="get_stock_price_trend", args={"likeSrtnCd": "069540", "basDt": "20260129"},
                         value_compare_args=("likeSrtnCd", "basDt")),
            GoldenAction(step=2, tool="evaluate_expression", args={"expression": "100 * (1680 - 532) / 532"})),
        reward_basis=frozenset({RewardBasis.ACTION, RewardBasis.RESPONSE}), response_type=ResponseType.NUMBER,
        accepted_answers=("215.79",), max_allowed_calls=8, bundle="kopa-default@3f2a9c1d", tags=("chain", "parallel"))
    assert task.n_steps == 3  # two parallel calls share step 1
    assert task.system_state.names() == ["current_date", "dart_api_key", "krx_api_key"]


def test_json_and_jsonl_files_give_the_same_tasks():
    assert load_tasks(DATA / "tasks_small.json") == load_tasks(JSONL)


def test_a_plain_json_list_loads_too(tmp_path, raw_tasks):
    path = tmp_path / "list.json"
    path.write_text(json.dumps(raw_tasks, ensure_ascii=False), encoding="utf-8")
    assert [t.id for t in load_tasks(path)] == ["fin-001", "fin-002", "law-001"]


def test_a_dumped_task_reads_back_equal_and_lists_the_basis_in_a_fixed_order():
    for task in load_tasks(JSONL):
        dumped = task.model_dump(mode="json")
        assert dumped["reward_basis"] == [b.value for b in RewardBasis if b in task.reward_basis]
        assert parse_task(json.loads(json.dumps(dumped))) == task


# ------------------------------------------------------------------------------------------------ refusals


def test_a_bad_jsonl_task_is_refused_with_line_id_and_field(tmp_path, raw_tasks):
    bad = copy.deepcopy(raw_tasks[0])
    bad["id"] = "fin-007"
    bad["golden_actions"][1]["step"] = -1
    path = _write_jsonl(tmp_path / "tasks.jsonl", [raw_tasks[1], {}, bad])
    path.write_text(path.read_text().replace("{}\n", "\n"), encoding="utf-8")  # a blank second line is skipped
    error = _refusal(path)
    assert error.problems == [
        'tasks.jsonl:3 (task "fin-007"): golden_actions.1.step: Input should be greater than or equal to 0']
    assert str(error).startswith(f"{path}: 1 problem(s) in the task file:")


def test_a_bad_json_task_is_named_by_its_position(tmp_path, raw_tasks):
    bad = {k: v for k, v in raw_tasks[2].items() if k != "bundle"}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [raw_tasks[0], bad]}, ensure_ascii=False), encoding="utf-8")
    assert _refusal(path).problems == ['tasks.json: tasks[1] (task "law-001"): bundle: Field required']


def test_every_bad_task_is_reported_not_just_the_first(tmp_path, raw_tasks):
    first = {**raw_tasks[0], "domain": "weather"}
    second = {**raw_tasks[1], "surprise": 1}
    problems = _refusal(_write_jsonl(tmp_path / "t.jsonl", [first, second, "not a task"])).problems
    assert problems[0].startswith('t.jsonl:1 (task "fin-001"): domain: Input should be ')
    assert problems[1] == 't.jsonl:2 (task "fin-002"): surprise: Extra inputs are not permitted'
    assert problems[2].startswith("t.jsonl:3: Input should be a valid dictionary")


def test_a_duplicate_id_is_refused_with_where_it_was_first_defined(tmp_path, raw_tasks):
    path = _write_jsonl(tmp_path / "t.jsonl", [raw_tasks[0], raw_tasks[1], raw_tasks[0]])
    assert _refusal(path).problems == ['t.jsonl:3 (task "fin-001"): id: duplicate id, first defined at t.jsonl:1']


def test_unreadable_files_are_refused_with_the_reason(tmp_path):
    broken = tmp_path / "t.jsonl"
    broken.write_text('{"id": "x"\n', encoding="utf-8")
    assert _refusal(broken).problems[0].startswith("t.jsonl:1: not valid JSON (column 11")
    scalar = tmp_path / "t.json"
    scalar.write_text("42", encoding="utf-8")
    assert _refusal(scalar).problems == ['t.json: expected a list of tasks or {"tasks": [...]}, got int']
    yaml = tmp_path / "t.yaml"
    yaml.write_text("[]", encoding="utf-8")
    assert _refusal(yaml).problems == ["unknown task file type '.yaml'; use .json or .jsonl"]
    assert _refusal(tmp_path / "missing.jsonl").problems[0].startswith("cannot read the task file:")


def _number_task(raw_tasks: list[dict], **changes) -> dict:
    task = copy.deepcopy(raw_tasks[0])
    task.update(changes)
    return task


CROSS_FIELD = [
    ({"reward_basis": ["RESPONSE"]}, "reward_basis: ACTION is always part of the reward basis"),
    ({"reward_basis": ["ACTION"]}, "reward_basis: needs RESPONSE and/or ENVIRONMENT besides ACTION"),
    ({"reward_basis": ["ACTION", "RESPONSE", "ENVIRONMENT"]},
     "golden_state_hash: required because ENVIRONMENT is in reward_basis"),
    ({"golden_state_hash": HASH}, "golden_state_hash: given but ENVIRONMENT is not in reward_basis"),
    ({"golden_state_hash": "ABC"}, "golden_state_hash: Value error, 'ABC' is not a SHA-256 hex digest"),
    ({"response_type": None}, "response_type: required because RESPONSE is in reward_basis"),
    ({"accepted_answers": []}, "accepted_answers: RESPONSE needs at least one accepted answer"),
    ({"accepted_answers": ["215.79", " "]}, "accepted_answers.1: empty answer"),
    ({"accepted_answers": ["1,680"]}, "accepted_answers.0: '1,680' is not a plain decimal number"),
    ({"reward_basis": ["ACTION", "ENVIRONMENT"], "golden_state_hash": HASH},
     "accepted_answers: given but RESPONSE is not in reward_basis"),
    ({"max_allowed_calls": 3}, "max_allowed_calls: 3 is below the 4 golden actions"),
    ({"available_tools": ["find_dart_corp_code", "evaluate_expression", "get_dart_convertible_bond_issuance_decision"]},
     "golden_actions.2.tool: 'get_stock_price_trend' is not in available_tools"),
    ({"available_tools": ["evaluate_expression", "evaluate_expression"]},
     "available_tools: Value error, tool(s) listed twice: ['evaluate_expression']"),
    ({"bundle": "kopa-default"}, "bundle: Value error, 'kopa-default' is not a pinned bundle reference NAME@VERSION"),
    ({"platforms": ["dart", "naver"]}, "platforms: Value error, unknown platform(s) ['naver']; known: ex, seoul"),
    ({"query": "How far above the floor price?"}, "query: Value error, the query 'How far above the floor price?' has"),
    ({"id": "fin 1"}, "id: Value error, 'fin 1' is not a valid task id"),
    ({"system_state": {"predefined": {"current date": "2026-01-30"}}},
     "system_state.predefined.current date: 'current date' is not a valid runtime-context key"),
    ({"system_state": {"predefined": {"k": 1}, "actions": [{"name": "k", "tool": "get_dart_api_key"}]}},
     "system_state.actions.0.name: 'k' is defined twice"),
]


@pytest.mark.parametrize(("changes", "expected"), CROSS_FIELD, ids=[c[1].split(":")[0] + f"-{i}"
                                                                    for i, c in enumerate(CROSS_FIELD)])
def test_each_rule_names_the_field_it_breaks(tmp_path, raw_tasks, changes, expected):
    problems = _refusal(_write_jsonl(tmp_path / "t.jsonl", [_number_task(raw_tasks, **changes)])).problems
    assert len(problems) == 1
    assert problems[0].startswith(f't.jsonl:1 (task "{changes.get("id", "fin-001")}"): {expected}'), problems[0]


def _golden(*steps_and_tools: tuple[int, str]) -> list[dict]:
    return [{"step": s, "tool": t, "args": {}} for s, t in steps_and_tools]


@pytest.mark.parametrize(("golden", "expected"), [
    (_golden((1, "find_dart_corp_code")), "golden_actions.0.step: the first step is 1; steps start at 0"),
    (_golden((0, "find_dart_corp_code"), (2, "evaluate_expression")),
     "golden_actions.1.step: jumps from 0 to 2; steps are numbered without gaps"),
    (_golden((0, "find_dart_corp_code"), (1, "evaluate_expression"), (0, "evaluate_expression")),
     "golden_actions.2.step: 0 comes after step 1; list actions in step order"),
    ([{"step": 0, "tool": "find_dart_corp_code", "args": {"corp_name": "x"}, "value_compare_args": ["stock_code"]}],
     "golden_actions.0.value_compare_args: ['stock_code'] are not among the action's args ['corp_name']"),
    ([], "golden_actions: Value error, no golden actions; ACTION scoring needs the annotated trajectory"),
])
def test_golden_steps_and_compare_args_are_checked(raw_tasks, golden, expected):
    with pytest.raises(ValidationError) as info:
        parse_task(_number_task(raw_tasks, golden_actions=golden))
    from bench.task import _error_lines  # the loader's formatting, applied to a bare ValidationError

    assert _error_lines(info.value) == [expected]


# ------------------------------------------------------------------------------------------------ catalog


def test_the_fixture_tasks_agree_with_the_real_catalog(catalog):
    assert validate_against_catalog(load_tasks(JSONL), catalog) == []


def test_a_golden_value_its_schema_rejects_stops_the_load_with_task_argument_and_reason(raw_tasks, catalog, tmp_path):
    raw = _number_task(raw_tasks)
    raw["golden_actions"][2]["args"] = {**raw["golden_actions"][2]["args"], "mrktCls": "코스피"}  # enum: KOSPI, ...
    path = _write_jsonl(tmp_path / "tasks.jsonl", [raw])
    assert load_tasks(path)[0].id == "fin-001"  # without a catalog only the task model is checked
    with pytest.raises(TaskLoadError) as info:
        load_tasks(path, catalog=catalog)
    assert info.value.problems == [
        "task 'fin-001': golden_actions.2.args.mrktCls: '코스피' violates the schema of 'get_stock_price_trend': "
        "'코스피' is not one of ['KOSPI', 'KOSDAQ', 'KONEX']"]
    assert "mrktCls" in str(info.value) and "fin-001" in str(info.value)


def test_catalog_problems_name_the_task_the_field_and_the_fix(raw_tasks, catalog):
    raw = _number_task(raw_tasks, platforms=["dart"], available_tools=[
        "find_dart_corp_code", "get_dart_convertible_bond_issuance_decision", "get_stock_price_trend",
        "evaluate_expression", "find_dart_corp_cod"])
    raw["system_state"]["actions"][0]["tool"] = "get_dart_key"
    raw["golden_actions"][0]["args"] = {"corp_name": "라이트론", "corp_nm": "라이트론"}
    raw["golden_actions"][1]["args"] = {"corp_code": "00367482", "bgn_de": "20260101", "pageNo": 2}
    raw["golden_actions"][1]["value_compare_args"] = []
    raw["golden_actions"][3]["args"] = {"expression": 42}
    assert validate_against_catalog([parse_task(raw)], catalog) == [
        "task 'fin-001': available_tools: unknown tool 'find_dart_corp_cod'; did you mean find_dart_corp_code?",
        "task 'fin-001': system_state.actions.0.tool: unknown tool 'get_dart_key'; did you mean get_dart_api_key, "
        "get_edu_api_key, get_kdic_api_key?",
        "task 'fin-001': golden_actions.0.args.corp_nm: 'find_dart_corp_code' has no parameter 'corp_nm' "
        "(parameters: KEY, corp_name, stock_code, pageNo, numOfRows)",
        "task 'fin-001': golden_actions.1.args: required parameter 'end_de' of "
        "'get_dart_convertible_bond_issuance_decision' is missing",
        "task 'fin-001': golden_actions.2.tool: 'get_stock_price_trend' is a 'krx' tool but the task's platforms "
        "are ['dart']",
        "task 'fin-001': golden_actions.3.args.expression: 42 is not of type string",
        "task 'fin-001': pages: a golden action asks for a page past the first, so pages must be true",
    ]
