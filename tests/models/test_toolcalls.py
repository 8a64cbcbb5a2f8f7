"""The tool-call readers one by one: qwen3_coder XML (strict about structure), hermes JSON, structured arguments,
the value-typing rule, rendering, and the choice of reader. (What every consumer makes of the same replies:
``test_reply_table.py``; verl's and vLLM's own parsers: ``test_parity.py``.)"""

from __future__ import annotations

import pytest

from models.toolcalls import (
    AssistantTurn,
    ToolCall,
    choose_parser,
    declared_types,
    read_arguments,
    read_text,
    read_value,
    render_assistant,
)

TOOLS = [{"type": "function", "function": {"name": "list_things", "parameters": {"type": "object", "properties": {
    "NAME": {"type": "string"}, "pageNo": {"type": "integer"}, "ratio": {"type": "number"},
    "exact": {"type": "boolean"}, "filter": {"type": "object"}, "codes": {"type": ["array", "null"]}}}}}]

parse = choose_parser("qwen3_coder").parse


# ----------------------------------------------------------------------------------- the qwen3_coder reader


def test_calls_are_read_with_their_declared_types_and_the_text_before_them_kept():
    text = ("목록을 찾겠습니다.\n<tool_call>\n<function=list_things>\n<parameter=NAME>\n서울 역\n</parameter>\n"
            "<parameter=pageNo>\n2\n</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n<parameter=exact>\nTrue\n"
            "</parameter>\n<parameter=filter>\n{\"a\": 1}\n</parameter>\n<parameter=codes>\n[\"01\", \"02\"]\n"
            "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=evaluate_expression>\n"
            "<parameter=expression>\n1 + 2\n</parameter>\n</function>\n</tool_call>")
    assert parse(text, TOOLS) == AssistantTurn(content="목록을 찾겠습니다.", calls=(
        ToolCall("list_things", {"NAME": "서울 역", "pageNo": 2, "ratio": 0.5, "exact": True, "filter": {"a": 1},
                                 "codes": ["01", "02"]}),
        ToolCall("evaluate_expression", {"expression": "1 + 2"})))


def test_text_without_calls_is_the_answer_and_a_value_that_does_not_convert_stays_text():
    assert parse("ANSWER: {0228}", TOOLS) == AssistantTurn(content="ANSWER: {0228}")
    turn = parse("<tool_call><function=list_things><parameter=pageNo>two</parameter></function>", TOOLS)
    assert turn.calls == (ToolCall("list_things", {"pageNo": "two"}),) and not turn.problems  # no </tool_call>


@pytest.mark.parametrize(("text", "problem"), [
    ("<tool_call>\n<function=list_things>\n<parameter=NAME>\nx\n</function>\n</tool_call>", "unclosed <parameter"),
    ("<tool_call>\n<function=list_things>\n<parameter=NAME>x</parameter>\n</tool_call>", "not closed by </function>"),
    ('<tool_call>\n{"name": "list_things", "arguments": {}}\n</tool_call>', "holds JSON"),
    ("<tool_call>\nlist_things(NAME=1)\n</tool_call>", "no <function=NAME>"),
    ("<tool_call>\n<function=list things!>\n</function>\n</tool_call>", "is not a tool name"),
    ("<function=list_things>\n</function>", "without <tool_call>"),
    ("<tool_call><function=list_things>oops<parameter=NAME>x</parameter></function></tool_call>", "stray text"),
])
def test_a_call_that_cannot_be_read_is_a_problem_naming_the_fault_and_the_format(text, problem):
    turn = parse("앞말 " + text, TOOLS)
    assert turn.calls == () and len(turn.problems) == 1
    assert problem in turn.problems[0] and "<tool_call>" in turn.problems[0]


def test_one_bad_call_does_not_lose_the_good_one_beside_it():
    text = ("<tool_call><function=list_things><parameter=NAME>a</parameter></function></tool_call>"
            "<tool_call><function=list_things><parameter=NAME>b</function></tool_call>")
    turn = parse(text, TOOLS)
    assert turn.calls == (ToolCall("list_things", {"NAME": "a"}),)
    assert turn.problems[0].startswith("tool call 2 could not be read")


def test_qwen3_coder_calls_round_trip_with_their_declared_types():
    tools = [{"type": "function", "function": {"name": "f", "description": "", "parameters": {"type": "object",
        "properties": {"KEY": {"type": "string"}, "n": {"type": "integer"}, "x": {"type": "number"},
                       "ok": {"type": "boolean"}, "ids": {"type": "array", "items": {"type": "string"}},
                       "code": {"type": "string"}}}}}]
    calls = [ToolCall("f", {"KEY": "kopa-dart-1", "n": 3, "x": 2.5, "ok": True, "ids": ["a", "서울"], "code": "007"}),
             ToolCall("f", {"n": 1})]
    turn = read_text(render_assistant("확인합니다.", calls), tools)
    assert turn.content.strip() == "확인합니다."
    assert [c.arguments for c in turn.calls] == [c.arguments for c in calls]
    assert read_text("ANSWER: {42}", tools).calls == ()
    hermes = read_text(render_assistant("확인합니다.", calls, text_format="hermes"), tools)
    assert hermes == turn  # the same calls, written the other way


# ----------------------------------------------------------------------------------- hermes and the choice of reader


def test_each_format_alone_refuses_the_other_and_the_default_reads_both():
    xml = "<tool_call>\n<function=list_things>\n<parameter=pageNo>\n2\n</parameter>\n</function>\n</tool_call>"
    json_call = '<tool_call>\n{"name": "list_things", "arguments": {"pageNo": "2"}}\n</tool_call>'
    both = read_text(xml + "\n" + json_call, TOOLS)
    assert both.calls == (ToolCall("list_things", {"pageNo": 2}),) * 2 and not both.problems
    only_hermes = choose_parser("hermes").parse(xml, TOOLS)
    assert only_hermes.calls == () and "holds <function=...> XML" in only_hermes.problems[0]
    assert '{"name": NAME' in only_hermes.problems[0]  # the hint shows the format this reader takes
    neither = read_text("<tool_call>\nlist_things(2)\n</tool_call>", TOOLS)
    assert "<function=NAME>" in neither.problems[0] and '{"name": NAME' in neither.problems[0]


def test_the_appliance_reads_with_its_own_rule_whether_or_not_vllm_is_installed():
    assert choose_parser().name == "kopa.qwen3_coder+hermes"
    assert choose_parser("qwen3_coder").name == "kopa.qwen3_coder"
    with pytest.raises(ValueError, match="qwen3_coder, hermes"):
        choose_parser("qwen3")


# ----------------------------------------------------------------------------------- the typing rule


@pytest.mark.parametrize(("schema", "types"), [
    ({"type": "integer"}, ("integer",)),
    ({"type": ["null", "number"]}, ("number",)),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}, {"type": "string"}]}, ("integer", "string")),
    ({"oneOf": [{"type": "boolean"}]}, ("boolean",)),
    ({"enum": [True, 1, 2.5, "a", None]}, ("boolean", "integer", "number", "string")),
    ({"description": "no type"}, ()),
    ({"type": "null"}, ()),
])
def test_the_declared_types_come_from_type_then_alternatives_then_enum_values(schema, types):
    assert declared_types(schema) == types


@pytest.mark.parametrize(("text", "types", "value"), [
    (" 3 ", ("integer",), 3), ("-3.00", ("integer",), -3), ("3.5", ("integer",), "3.5"),
    ("1_000", ("integer",), "1_000"), ("٣", ("integer",), "٣"), ("1e3", ("number",), 1000),
    ("1e999", ("number",), "1e999"), ("inf", ("number",), "inf"),
    ("-0.25", ("number",), -0.25), ("TRUE", ("boolean",), True), ("1", ("boolean",), "1"),
    ("NULL", ("string",), None), ("[1]", ("object",), "[1]"), ("(1, 2)", ("array",), "(1, 2)"),
    ("NaN", ("array",), "NaN"), ("abc", ("integer", "string"), "abc"), ("true", ("integer", "boolean"), True),
    ("3", ("gibberish",), "3"), ("x\udfff", (), "x\ufffd"),
])
def test_a_text_value_is_the_first_declared_type_it_converts_to_else_text(text, types, value):
    assert read_value(text, types) == value and type(read_value(text, types)) is type(value)


def test_structured_arguments_convert_strings_only_where_the_schema_wants_another_type():
    types = {"n": ("integer",), "s": ("string",), "a": ("array",), "u": ("string", "integer")}
    assert read_arguments('{"n": "2", "s": "null", "a": "null", "u": "3", "x": "4"}', types) == (
        {"n": 2, "s": "null", "a": None, "u": "3", "x": "4"}, None)
    assert read_arguments({"n": 2.0, "s": 5}, types) == ({"n": 2.0, "s": 5}, None)  # JSON-typed values are kept
    assert read_arguments("  ", types) == ({}, None) and read_arguments("[1]", types) == ([1], None)
    raw, problem = read_arguments('{"n": 2', types)
    assert raw == '{"n": 2' and "not valid JSON" in problem and "send them as one JSON object" in problem
