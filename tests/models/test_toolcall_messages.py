"""``models.toolcalls.template_messages``: OpenAI chat messages with tool-call arguments as the typed objects chat
templates iterate over (the one value-typing rule), bad arguments as {}, the input untouched."""

from __future__ import annotations

import copy
import json

from models.toolcalls import template_messages

TOOLS = [{"type": "function", "function": {"name": "list_things", "parameters": {"type": "object", "properties": {
    "NAME": {"type": "string"}, "pageNo": {"type": "integer"}, "ratio": {"type": "number"},
    "exact": {"type": "boolean"}, "filter": {"type": "object"}}}}}]


def call(arguments, name="list_things", call_id="c1"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def conversation(*calls):
    return [{"role": "system", "content": "sys"}, {"role": "user", "content": "목록"},
            {"role": "assistant", "content": "", "tool_calls": list(calls)},
            {"role": "tool", "tool_call_id": "c1", "content": "{\"items\": []}"},
            {"role": "assistant", "content": "\\boxed{없음}"}]


def test_json_string_arguments_become_objects_typed_by_the_tools_schema():
    arguments = json.dumps({"NAME": "3", "pageNo": "3", "ratio": "0.5", "exact": "TRUE", "filter": "{\"a\": 1}"})
    out = template_messages(conversation(call(arguments)), TOOLS)
    assert out == conversation(call({"NAME": "3", "pageNo": 3, "ratio": 0.5, "exact": True, "filter": {"a": 1}}))


def test_arguments_of_an_unknown_tool_or_without_tools_are_read_as_json_and_kept_untyped():
    messages = conversation(call("{\"pageNo\": \"3\", \"n\": 2}", name="other"))
    assert template_messages(messages, TOOLS)[2]["tool_calls"][0]["function"]["arguments"] == {"pageNo": "3", "n": 2}
    assert template_messages(conversation(call("{\"pageNo\": \"3\"}")))[2]["tool_calls"][0]["function"] == {
        "name": "list_things", "arguments": {"pageNo": "3"}}


def test_arguments_that_are_not_one_json_object_become_an_empty_object():
    bad = [call("{\"pageNo\": 3", call_id="a"), call("[1, 2]", call_id="b"), call("", call_id="c"),
           call(None, call_id="d"), call(7, call_id="e")]
    out = template_messages(conversation(*bad), TOOLS)
    assert [c["function"]["arguments"] for c in out[2]["tool_calls"]] == [{}, {}, {}, {}, {}]
    assert [c["id"] for c in out[2]["tool_calls"]] == ["a", "b", "c", "d", "e"]


def test_object_arguments_are_typed_by_the_same_rule():
    out = template_messages(conversation(call({"pageNo": "3.0", "NAME": 5})), TOOLS)
    assert out[2]["tool_calls"][0]["function"]["arguments"] == {"pageNo": 3, "NAME": 5}


def test_the_input_is_not_mutated_and_the_output_shares_nothing_with_it():
    messages = conversation(call("{\"pageNo\": \"3\"}"), call({"pageNo": "3", "filter": {"a": [1]}}, call_id="c2"))
    before = copy.deepcopy(messages)
    out = template_messages(messages, TOOLS)
    assert messages == before
    assert [c["function"]["arguments"] for c in out[2]["tool_calls"]] == [{"pageNo": 3},
                                                                          {"pageNo": 3, "filter": {"a": [1]}}]
    out[0]["content"] = "changed"
    out[2]["tool_calls"][1]["function"]["arguments"]["filter"]["a"].append(2)
    assert messages == before


def test_only_assistant_tool_calls_are_touched():
    odd = {"role": "user", "content": "x", "tool_calls": [call("{\"pageNo\": \"3\"}")]}
    assert template_messages([odd], TOOLS) == [odd]
    assert template_messages([], TOOLS) == []
