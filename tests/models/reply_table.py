"""One table of model replies, each with what it means: the content, the calls (name and typed arguments) and the
problems. Every consumer of ``models.toolcalls`` is held to it (``test_reply_table.py``), and verl's and vLLM's own
qwen3_coder parsers to its well-formed rows (``test_parity.py``).

A reply is text (what a model generated: a policy's reply, a completion's ``content``) or an OpenAI assistant
message dict (structured ``tool_calls``). A call is (name, arguments, problem substring or None); a problem is a
substring its message must hold (every problem also names the right format: ``<tool_call>``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

TOOLS = [{"type": "function", "function": {"name": "list_things", "parameters": {"type": "object", "properties": {
    "NAME": {"type": "string"}, "pageNo": {"type": "integer"}, "ratio": {"type": "number"},
    "exact": {"type": "boolean"}, "filter": {"type": "object"}, "codes": {"type": ["array", "null"]},
    "when": {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "mode": {"enum": [1, 2]}}}}},
    {"type": "function", "function": {"name": "evaluate_expression", "parameters": {"type": "object", "properties": {
        "expression": {"type": "string"}}}}}]


@dataclass(frozen=True)
class Row:
    id: str
    reply: str | dict[str, Any]
    content: str
    calls: tuple[tuple[str, Any, str | None], ...] = ()
    problems: tuple[str, ...] = ()
    well_formed: bool = True  # a qwen3_coder reply other parsers must read alike (only text rows)

    @property
    def structured(self) -> bool:
        return isinstance(self.reply, dict)


def xml(name: str, **params: str) -> str:
    body = "".join(f"<parameter={p}>\n{v}\n</parameter>\n" for p, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def hermes(name: str, arguments: Any) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>"


def message(content: str | None, *calls: tuple[str, Any]) -> dict[str, Any]:
    """An assistant message with structured calls; a str argument is sent as it is, anything else as JSON."""
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": f"srv_{i}", "type": "function", "function": {"name": name, "arguments": args if isinstance(args, str)
                                                            or args is None else json.dumps(args, ensure_ascii=False)}}
        for i, (name, args) in enumerate(calls)]}


def one(args: dict[str, Any], name: str = "list_things") -> tuple[tuple[str, Any, None]]:
    return ((name, args, None),)


ROWS: tuple[Row, ...] = (
    # ------------------------------------------------------------------ qwen3_coder XML, well-formed
    Row("answer only", "ANSWER: {0228}", "ANSWER: {0228}"),
    Row("a string", xml("list_things", NAME="서울 역"), "", one({"NAME": "서울 역"})),
    Row("integer 3", xml("list_things", pageNo="3"), "", one({"pageNo": 3})),
    Row("integer 3.0", xml("list_things", pageNo="3.0"), "", one({"pageNo": 3})),
    Row("integer 3.5", xml("list_things", pageNo="3.5"), "", one({"pageNo": "3.5"})),
    Row("integer abc", xml("list_things", pageNo="abc"), "", one({"pageNo": "abc"})),
    Row("number 3", xml("list_things", ratio="3"), "", one({"ratio": 3})),
    Row("number 3.0", xml("list_things", ratio="3.0"), "", one({"ratio": 3})),
    Row("number 3.5", xml("list_things", ratio="3.5"), "", one({"ratio": 3.5})),
    Row("number abc", xml("list_things", ratio="abc"), "", one({"ratio": "abc"})),
    Row("number nan", xml("list_things", ratio="nan"), "", one({"ratio": "nan"})),
    Row("boolean true", xml("list_things", exact="true"), "", one({"exact": True})),
    Row("boolean False", xml("list_things", exact="False"), "", one({"exact": False})),
    Row("boolean yes", xml("list_things", exact="yes"), "", one({"exact": "yes"})),
    Row("null in any case", xml("list_things", codes="null", NAME="Null"), "", one({"codes": None, "NAME": None})),
    Row("nested object", xml("list_things", filter='{"a": {"b": [1, 2]}, "c": true}'), "",
        one({"filter": {"a": {"b": [1, 2]}, "c": True}})),
    Row("nested array", xml("list_things", codes='[{"x": 1}, ["01", "02"]]'), "",
        one({"codes": [{"x": 1}, ["01", "02"]]})),
    Row("array with JSON literals", xml("list_things", codes='["a", true, null]'), "",
        one({"codes": ["a", True, None]})),
    Row("python literal object", xml("list_things", filter="{'a': 1}"), "", one({"filter": {"a": 1}})),
    Row("object that is not one", xml("list_things", filter="a=1"), "", one({"filter": "a=1"})),
    Row("anyOf and enum types", xml("list_things", when="3", mode="2"), "", one({"when": 3, "mode": 2})),
    Row("lone surrogates", "찾아\ud800볼게요\n" + xml("list_things", NAME="a\udc4cb"), "찾아\ufffd볼게요",
        one({"NAME": "a\ufffdb"})),
    Row("two calls", xml("list_things", NAME="a") + "\n" + xml("evaluate_expression", expression="1 + 2"), "",
        (("list_things", {"NAME": "a"}, None), ("evaluate_expression", {"expression": "1 + 2"}, None))),
    Row("text before and around calls", "앞말입니다.\n\n" + xml("list_things", pageNo="2") + "\n사이 말\n"
        + xml("list_things", pageNo="3") + "\n뒷말", "앞말입니다.",
        (("list_things", {"pageNo": 2}, None), ("list_things", {"pageNo": 3}, None))),
    Row("no </tool_call> at the stop token", "<tool_call>\n<function=list_things>\n<parameter=NAME>\nx\n</parameter>\n"
        "</function>", "", one({"NAME": "x"})),
    Row("multi-line string", xml("evaluate_expression", expression="(1 +\n2) * 3"), "",
        one({"expression": "(1 +\n2) * 3"}, "evaluate_expression")),
    Row("undeclared parameter", xml("list_things", extra="7"), "", one({"extra": "7"})),
    Row("unknown tool", xml("no_such_tool", n="3"), "", one({"n": "3"}, "no_such_tool")),
    Row("no parameters", xml("list_things"), "", one({})),
    # ------------------------------------------------------------------ qwen3_coder XML, malformed
    Row("unclosed parameter", "찾아볼게요.\n<tool_call>\n<function=list_things>\n<parameter=NAME>\nx\n</function>\n"
        "</tool_call>", "찾아볼게요.", problems=("unclosed <parameter",), well_formed=False),
    Row("no </function>", "<tool_call>\n<function=list_things>\n<parameter=NAME>x</parameter>\n</tool_call>", "",
        problems=("not closed by </function>",), well_formed=False),
    Row("call syntax inside", "<tool_call>\nlist_things(NAME=1)\n</tool_call>", "",
        problems=("no <function=NAME>",), well_formed=False),
    Row("bad tool name", "<tool_call>\n<function=list things!>\n</function>\n</tool_call>", "",
        problems=("is not a tool name",), well_formed=False),
    Row("no <tool_call>", "<function=list_things>\n</function>", "<function=list_things>\n</function>",
        problems=("without <tool_call>",), well_formed=False),
    Row("a bad call beside a good one", xml("list_things", NAME="a") + "<tool_call><function=list_things>"
        "<parameter=NAME>b</function></tool_call>", "", one({"NAME": "a"}), ("tool call 2 could not be read",),
        well_formed=False),
    # ------------------------------------------------------------------ hermes JSON in <tool_call>
    Row("hermes call", hermes("list_things", {"pageNo": "2", "ratio": 0.5, "exact": "true", "NAME": "null"}), "",
        one({"pageNo": 2, "ratio": 0.5, "exact": True, "NAME": "null"}), well_formed=False),
    Row("hermes two calls after text", "확인합니다.\n" + hermes("list_things", {"NAME": "a"}) + "\n"
        + hermes("evaluate_expression", {"expression": "1 + 2"}), "확인합니다.",
        (("list_things", {"NAME": "a"}, None), ("evaluate_expression", {"expression": "1 + 2"}, None)),
        well_formed=False),
    Row("hermes arguments as a JSON string", hermes("list_things", '{"pageNo": "3.0", "codes": "[1, 2]"}'), "",
        one({"pageNo": 3, "codes": [1, 2]}), well_formed=False),
    Row("hermes without arguments", '<tool_call>\n{"name": "list_things"}\n</tool_call>', "", one({}),
        well_formed=False),
    Row("hermes JSON that does not parse", '<tool_call>\n{"name": "list_things", "arguments": {"NAME": "a"}\n'
        '</tool_call>', "", problems=("its JSON does not parse",), well_formed=False),
    Row("hermes without a name", '<tool_call>\n{"arguments": {}}\n</tool_call>', "", problems=("has no name",),
        well_formed=False),
    # ------------------------------------------------------------------ OpenAI structured tool_calls
    Row("structured numbers as text", message(None, ("list_things", {
        "pageNo": "2", "ratio": "3.0", "exact": "False", "filter": '{"a": 1}', "codes": "null", "NAME": "null",
        "when": "5"})), "", one({"pageNo": 2, "ratio": 3, "exact": False, "filter": {"a": 1}, "codes": None,
                                 "NAME": "null", "when": 5})),
    Row("structured values already typed", message("확인합니다.", ("list_things", {
        "pageNo": 2, "exact": True, "NAME": 5, "ratio": "abc"})), "확인합니다.",
        one({"pageNo": 2, "exact": True, "NAME": 5, "ratio": "abc"})),
    Row("structured arguments not JSON", message(None, ("list_things", '{"NAME": 서울')), "",
        (("list_things", '{"NAME": 서울', "not valid JSON"),)),
    Row("structured raw newline and empty arguments", message(None, ("evaluate_expression", '{"expression": "1 +\n2"}'),
                                                              ("list_things", ""), ("list_things", None)), "",
        (("evaluate_expression", {"expression": "1 +\n2"}, None), ("list_things", {}, None),
         ("list_things", {}, None))),
    Row("structured lone surrogate escape", message(None, ("list_things", '{"NAME": "a\\udc4c"}')), "",
        one({"NAME": "a\ufffd"})),
    Row("structured calls win over text calls", message("<tool_call>x</tool_call>", ("list_things", {"NAME": "a"})),
        "<tool_call>x</tool_call>", one({"NAME": "a"})),
    Row("a message with text calls only", {"role": "assistant", "content": "보겠습니다.\n" + xml("list_things",
                                                                                              pageNo="7")},
        "보겠습니다.", one({"pageNo": 7})),
)

TEXT_ROWS = tuple(r for r in ROWS if not r.structured)


def typed(calls: Any) -> str:
    """``calls`` (names and arguments) with every value's JSON type showing: 3, 3.0 and True compare unequal."""
    return json.dumps(calls, sort_keys=True)


def expected(row: Row) -> str:
    return typed([(n, a) for n, a, _ in row.calls])
WELL_FORMED = tuple(r for r in ROWS if r.well_formed and not r.structured and "<tool_call>" in r.reply)
