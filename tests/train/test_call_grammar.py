"""Guided tool calls (``train.engines.trl.call_grammar``): once a turn opens ``<tool_call>``, the call is written to
one of the offered tools, with arguments in its schema, and closed; outside a call the model writes freely.

Models: SmolLM2's shape cut to 2 layers with the real tokenizer (the loop's tiny model, random weights: it never
writes a call on its own, so the opening of the call is put in its prompt). Calls are read back with the product's
reader (``models.toolcalls``), as the bench reads a model's reply.
"""

from __future__ import annotations

import pytest

from models.toolcalls import read_text
from train.engines.trl.call_grammar import CallGrammar, call_grammar_text
from train.engines.trl.kv_reuse import EpisodeCache, greedy_decode

from ..conftest import shared_tiny_smollm2

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")


def tool(name: str, properties: dict, required: list[str]) -> dict:
    return {"type": "function", "function": {"name": name, "description": "", "parameters": {
        "type": "object", "properties": properties, "required": required, "additionalProperties": False}}}


TOOLS = [
    tool("get_rest_area_fuel_prices", {"routeNo": {"type": "string", "enum": ["0010", "0020"]}}, ["routeNo"]),
    tool("get_rest_area_oil_list", {"KEY": {"type": "string"}, "pageNo": {"type": "integer"}}, ["KEY"]),
    tool("search_all_bills", {"BILL_NAME": {"type": "string"}}, []),
]
OPENING = 'Let me look.\n<tool_call>\n{"name": "'


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from train.engines.trl.model import load_for_inference, resolve_model

    model, tokenizer = load_for_inference(resolve_model(shared_tiny_smollm2(), home=tmp_path_factory.mktemp("home")))
    return model.eval(), tokenizer


def allowed_texts(tokenizer, written: str) -> set[str] | None:
    """What a fresh guide lets follow ``written`` (token texts), None where it leaves the model free."""
    guide = CallGrammar.for_tools(tokenizer, TOOLS)
    mask = guide.allowed(tokenizer.encode(written, add_special_tokens=False))
    if mask is None:
        return None
    anchor = tokenizer.encode("a", add_special_tokens=False)
    return {tokenizer.decode([*anchor, i])[1:] for i in mask.nonzero().flatten().tolist()}


def test_inside_a_call_only_an_offered_tool_its_schema_and_the_calls_end_may_follow(tiny):
    _, tokenizer = tiny
    assert allowed_texts(tokenizer, "I will answer in words.") is None  # no call opened: the model is free

    names = allowed_texts(tokenizer, OPENING)
    assert names and all(any(t and name.startswith(t) for name in [t["function"]["name"] for t in TOOLS])
                         for t in names)
    assert {"get", "search"} <= names and "find" not in names

    call = OPENING + 'get_rest_area_oil_list", "arguments": {"'
    keys = allowed_texts(tokenizer, call)
    assert keys and all("KEY".startswith(t) or "pageNo".startswith(t) for t in keys)  # the schema's, none invented
    assert {"KEY", "page"} & keys and any("pageNo".startswith(t) for t in keys)  # in any order
    assert any("KEY".startswith(t) for t in allowed_texts(tokenizer, call + 'pageNo": 2, "'))
    assert allowed_texts(tokenizer, call + 'pageNo": ') <= {str(d) for d in range(10)} | {"-", " -"}  # an integer
    after_value = allowed_texts(tokenizer, call + 'KEY": "kopa-ex-1"')
    assert "}" in after_value and any(t.startswith(",") for t in after_value)
    # the arguments closed: only the call's end may follow (run4's model repeated its arguments here)
    closed = allowed_texts(tokenizer, call + 'KEY": "kopa-ex-1"}')
    assert closed and all("}\n</tool_call>".startswith(t) for t in closed)
    assert allowed_texts(tokenizer, call + 'KEY": "kopa-ex-1"}}\n</tool_call>') is None  # free again

    enum = allowed_texts(tokenizer, OPENING + 'get_rest_area_fuel_prices", "arguments": {"routeNo": "')
    assert enum and all("0010".startswith(t) or "0020".startswith(t) for t in enum)


def test_greedy_decoding_writes_a_readable_call_to_an_offered_tool_whatever_the_weights_prefer(tiny):
    model, tokenizer = tiny
    prompt = tokenizer.encode("Find the diesel price on route 10.\n" + OPENING)
    eos = tokenizer.eos_token_id
    guide = CallGrammar.for_tools(tokenizer, TOOLS[:1], written_before=OPENING)  # the prompt opened the call

    [free] = greedy_decode(model, [(EpisodeCache(), prompt, 40)], eos=eos)
    [guided, unguided] = greedy_decode(model, [(EpisodeCache(), prompt, 40), (EpisodeCache(), prompt, 40)],
                                       eos=eos, guides=[guide.allowed, None])

    assert unguided == free  # a row without a guide decodes as before, beside a guided one
    written = OPENING + tokenizer.decode(guided)
    assert "</tool_call>" in written, written
    turn = read_text(written, TOOLS)
    assert len(turn.calls) == 1, written
    [call] = turn.calls
    assert not turn.problems and not call.problem
    assert call.name == "get_rest_area_fuel_prices"
    assert set(call.arguments) <= {"routeNo"} and set(call.arguments.values()) <= {"0010", "0020"}, written
    assert "</tool_call>" not in OPENING + tokenizer.decode(free)  # random weights alone write no call


def test_a_schema_the_grammar_cannot_take_leaves_the_name_guided(tiny):
    _, tokenizer = tiny
    broken = [tool("search_all_bills", {"BILL_NAME": {"$ref": "#/nowhere"}}, [])]
    guide = CallGrammar.for_tools(tokenizer, broken)
    assert guide.grammar == call_grammar_text(broken, strict=False)
    mask = guide.allowed(tokenizer.encode(OPENING, add_special_tokens=False))
    assert mask is not None and 0 < int(mask.sum()) < 10
    with pytest.raises(ValueError, match="at least one offered tool"):
        call_grammar_text([])
