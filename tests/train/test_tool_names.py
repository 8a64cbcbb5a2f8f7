"""Guided tool names (``train.engines.trl.tool_names``): inside ``<tool_call>{"name": "`` a model writes one of the
offered tools and its closing quote, whatever its weights prefer; outside a name it writes freely.

Models: SmolLM2's shape cut to 2 layers with the real tokenizer (the loop's tiny model, random weights: it never
writes a call on its own, so the opening of the call is put in its prompt).
"""

from __future__ import annotations

import pytest

from train.engines.trl.kv_reuse import EpisodeCache, greedy_decode
from train.engines.trl.tool_names import TokenTexts, ToolNameGuide

from ..conftest import shared_tiny_smollm2

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")

OFFERED = ["get_rest_area_fuel_prices", "get_rest_area_oil_list", "search_all_bills"]
OPENING = 'Let me look.\n<tool_call>\n{"name": "'


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from train.engines.trl.model import load_for_inference, resolve_model

    model, tokenizer = load_for_inference(resolve_model(shared_tiny_smollm2(), home=tmp_path_factory.mktemp("home")))
    return model.eval(), tokenizer


def texts_of(tokenizer, ids):
    return {tokenizer.decode([*tokenizer.encode("a", add_special_tokens=False), i])[1:] for i in ids}


def test_only_the_rest_of_an_offered_name_may_follow_an_opened_name(tiny):
    _, tokenizer = tiny
    guide = ToolNameGuide(TokenTexts.of(tokenizer), OFFERED)

    assert guide.allowed("I will answer in words.") is None  # no call opened: the model is free
    assert guide.allowed(OPENING + 'search_all_bills", "arguments": {"') is None  # the name is closed

    at_start = texts_of(tokenizer, guide.allowed(OPENING))
    assert at_start and all(any(name.startswith(t) for name in OFFERED) for t in at_start)
    assert "get" in at_start and "search" in at_start and "find" not in at_start

    shared = texts_of(tokenizer, guide.allowed(OPENING + "get_rest_area_"))
    assert {"fuel", "oil"} <= shared and "bills" not in shared
    assert all(any(rest.startswith(t) for rest in ('fuel_prices"', 'oil_list"')) for t in shared)

    closing = texts_of(tokenizer, guide.allowed(OPENING + "search_all_bills"))
    assert '"' in closing and '",' in closing  # the closing quote, alone or with what follows it in one token
    assert all(t.startswith('"') for t in closing)
    assert guide.allowed(OPENING + "get_all_traffic") is None  # never reached when guided from the start


def test_greedy_decoding_spells_an_offered_name_whatever_the_weights_prefer(tiny):
    model, tokenizer = tiny
    guide = ToolNameGuide(TokenTexts.of(tokenizer), OFFERED)
    prompt = tokenizer.encode("Find the diesel price.\n" + OPENING)
    eos = tokenizer.eos_token_id

    [free] = greedy_decode(model, [(EpisodeCache(), prompt, 24)], eos=eos)
    [guided, unguided] = greedy_decode(
        model, [(EpisodeCache(), prompt, 24), (EpisodeCache(), prompt, 24)], eos=eos,
        guides=[lambda ids: guide.allowed(OPENING + tokenizer.decode(ids)), None])

    written = tokenizer.decode(guided)
    assert any(written.startswith(name + '"') for name in OFFERED), written
    assert not any(tokenizer.decode(free).startswith(name + '"') for name in OFFERED)  # random weights alone do not
    assert unguided == free  # a row without a guide decodes as before, beside a guided one
