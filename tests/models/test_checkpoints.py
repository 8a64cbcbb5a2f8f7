"""``models.checkpoints`` and ``models.templates``: the packaged SmolLM2 GGUF as a trainable Hugging Face folder
(converted once, ~30 s), its fixed tokenizer as measured, and the tool-carrying chat template rendered the same
by the tokenizer and by ``render_conversation``, with the assistant mask on exactly the assistant's text."""

from __future__ import annotations

import json

import pytest

from models.checkpoints import (
    BASE_NAME,
    base_checkpoint,
    checkpoint_info,
    current_template,
    is_checkpoint,
    tiny_checkpoint,
)
from models.errors import ModelServerError
from models.llama_cpp import smollm2_gguf
from models.templates import GEMMA_TEMPLATE_NAME, HERMES_CHATML, HERMES_GEMMA, TEMPLATE_NAME, render_conversation
from models.toolcalls.hermes import render_calls
from models.toolcalls.turn import ToolCall

from .template_cases import CONVERSATION, TOOLS, learnt_spans_with_weight_0, masked_spans

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def base(home):
    return base_checkpoint(home)


@pytest.fixture(scope="module")
def tokenizer(base):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(base)


def test_the_base_folder_is_made_once_and_says_what_it_is_made_from(home, base):
    assert base == home / "models" / BASE_NAME and is_checkpoint(base)
    assert checkpoint_info(base) == {"source_gguf": str(smollm2_gguf()), "template": TEMPLATE_NAME, "parent": None}
    assert not (home / "models" / f"{BASE_NAME}.partial").exists()
    weights = base / "model.safetensors"
    made = weights.stat().st_mtime_ns
    assert base_checkpoint(home) == base and weights.stat().st_mtime_ns == made  # not converted again
    config = json.loads((base / "config.json").read_text())
    assert (config["eos_token_id"], config["pad_token_id"], config["num_hidden_layers"]) == (2, 0, 30)


def test_the_tokenizer_ends_pads_and_splits_as_measured(tokenizer):
    assert tokenizer.chat_template == HERMES_CHATML
    assert (tokenizer.eos_token, tokenizer.eos_token_id) == ("<|im_end|>", 2)
    assert (tokenizer.pad_token, tokenizer.pad_token_id) == ("<|endoftext|>", 0)
    digits = tokenizer("2025120599", add_special_tokens=False).input_ids
    assert [tokenizer.decode([i]) for i in digits] == list("2025120599")  # one token per digit
    assert len(tokenizer("서울특별시 강남구", add_special_tokens=False).input_ids) == 24  # byte-level Hangul
    assert len(tokenizer("<tool_call>", add_special_tokens=False).input_ids) == 5  # plain text, no special token


def test_the_tokenizer_renders_the_template_as_render_conversation(tokenizer):
    for prompt in (False, True):
        rendered = tokenizer.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False,
                                                 add_generation_prompt=prompt)
        assert rendered == render_conversation(CONVERSATION, TOOLS, add_generation_prompt=prompt)
    text = render_conversation(CONVERSATION, TOOLS)
    assert text.startswith("<|im_start|>system\nYou solve the user's request with tools.\n\n# Tools\n")
    assert "\n" + json.dumps(TOOLS[0]["function"], ensure_ascii=False) + "\n</tools>" in text
    calls = render_calls([ToolCall("get_bus_arrivals", {"stop_id": "서울역", "limit": 2}),
                          ToolCall("get_bus_arrivals", {"stop_id": "01-234"})])
    assert f"<|im_start|>assistant\n{calls}<|im_end|>\n" in text  # the bench's hermes reader's own layout
    assert ("<|im_start|>user\n<tool_response>\n{\"arrivals\": [3, 7]}\n</tool_response>\n<tool_response>\n"
            "{\"arrivals\": []}\n</tool_response><|im_end|>\n") in text  # both results in one user turn
    assert text.endswith("<|im_start|>assistant\n서울역에 3분, 7분 뒤 버스가 옵니다.<|im_end|>\n")


def test_a_checkpoint_converted_before_a_template_change_reads_the_current_template(base, tmp_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base)  # its own: the module's is shared
    tokenizer.chat_template = "{{ 'the template of an older release' }}"
    named = tmp_path / "named"
    named.mkdir()
    (named / "kopa-checkpoint.json").write_text(json.dumps({"template": GEMMA_TEMPLATE_NAME}))
    assert current_template(tokenizer, named).chat_template == HERMES_GEMMA
    tokenizer.chat_template = "{{ 'a template of its own' }}"  # a checkpoint made elsewhere keeps its template
    assert current_template(tokenizer, tmp_path).chat_template == "{{ 'a template of its own' }}"


def test_a_turn_of_weight_0_is_rendered_alike_and_left_out_of_the_mask(tokenizer):
    assert learnt_spans_with_weight_0(tokenizer) == ["서울역에 3분, 7분 뒤 버스가 옵니다.<|im_end|>"]


def test_the_assistant_mask_covers_exactly_the_assistant_text_and_its_end(tokenizer):
    out = tokenizer.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True)
    ids, mask = out["input_ids"], out["assistant_masks"]
    spans = masked_spans(ids, mask)
    calls = render_calls([ToolCall("get_bus_arrivals", {"stop_id": "서울역", "limit": 2}),
                          ToolCall("get_bus_arrivals", {"stop_id": "01-234"})])
    assert [tokenizer.decode(span) for span in spans] == [calls + "<|im_end|>",
                                                          "서울역에 3분, 7분 뒤 버스가 옵니다.<|im_end|>"]
    assert sum(mask) == sum(len(span) for span in spans) < len(ids) // 2


def test_a_missing_gguf_is_one_error_and_leaves_nothing(tmp_path):
    with pytest.raises(ModelServerError, match=r"cannot read .*absent\.gguf as a trainable model") as caught:
        base_checkpoint(tmp_path, gguf=tmp_path / "absent.gguf")
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "models").exists()


def test_a_tiny_checkpoint_has_the_real_tokenizer_and_two_layers(tmp_path, tokenizer):
    from transformers import AutoConfig, AutoTokenizer

    tiny = tiny_checkpoint(tmp_path / "tiny", layers=2, seed=0)
    assert AutoConfig.from_pretrained(tiny).num_hidden_layers == 2
    small = AutoTokenizer.from_pretrained(tiny)
    assert small.get_vocab() == tokenizer.get_vocab() and small.chat_template == HERMES_CHATML
    assert small.eos_token == "<|im_end|>" and small.pad_token == "<|endoftext|>"
