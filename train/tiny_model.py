"""A tiny random-initialised Qwen3-architecture model with a byte-level tokenizer, built here (no hub download).

    path = build_tiny_model(Path("out/tiny-qwen3"), corpus=texts)      # config.json, model.safetensors, tokenizer
    python -m train.tiny_model out/tiny-qwen3 [--tasks bench/tasks/kopa-bench.jsonl]

For smoke runs and tests of the training plumbing, not for learning anything: a 2-layer Qwen3 (hidden 64) whose
tokenizer is a byte-level BPE trained in a second on the given texts (so Korean and JSON stay a few tokens per
word), with the ChatML special tokens Qwen uses (``<|im_start|>``, ``<|im_end|>``, ``<|endoftext|>``), the
tool-call markers as added tokens, and a Qwen3.5-style chat template: tools listed in the system turn, calls in
the qwen3_coder XML format, tool results as ``<tool_response>`` blocks in a user turn. verl picks its Qwen
Continuous-Token builder from ``model_type`` ``qwen3``, and vLLM serves the architecture as it is.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path

from models.templates import CHATML_TOOL_RESPONSES

__all__ = ["CHAT_TEMPLATE", "build_tiny_model", "build_tokenizer", "corpus_from_tasks"]

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]

CHAT_TEMPLATE = (
    "{%- macro value(v) -%}{%- if v is string -%}{{ v }}{%- else -%}{{ v | tojson }}{%- endif -%}{%- endmacro -%}"
    "{%- if messages and messages[0].role == 'system' -%}"
    "{%- set system = messages[0].content -%}{%- set rest = messages[1:] -%}"
    "{%- else -%}{%- set system = '' -%}{%- set rest = messages -%}{%- endif -%}"
    "{%- if tools -%}"
    "{{- '<|im_start|>system\\n# Tools\\n\\nYou have access to the following functions:\\n\\n<tools>' -}}"
    "{%- for tool in tools -%}{{- '\\n' + (tool | tojson) -}}{%- endfor -%}"
    "{{- '\\n</tools>\\n\\nIf you choose to call a function ONLY reply in the following format with NO suffix:"
    "\\n\\n<tool_call>\\n<function=example_function_name>\\n<parameter=example_parameter_1>\\nvalue_1\\n"
    "</parameter>\\n</function>\\n</tool_call>' -}}"
    "{%- if system -%}{{- '\\n\\n' + system -}}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- elif system -%}{{- '<|im_start|>system\\n' + system + '<|im_end|>\\n' -}}{%- endif -%}"
    "{%- for message in rest -%}"
    "{%- if message.role == 'user' or message.role == 'system' -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}"
    "{%- elif message.role == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' + (message.content or '') -}}"
    "{%- for call in message.tool_calls or [] -%}"
    "{%- set fn = call.function if call.function is defined else call -%}"
    "{%- if not loop.first or message.content -%}{{- '\\n\\n' if loop.first else '\\n' -}}{%- endif -%}"
    "{{- '<tool_call>\\n<function=' + fn.name + '>\\n' -}}"
    "{%- for key, v in (fn.arguments if fn.arguments is mapping else {}) | items -%}"
    "{{- '<parameter=' + key + '>\\n' + value(v) + '\\n</parameter>\\n' -}}"
    "{%- endfor -%}"
    "{{- '</function>\\n</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|im_end|>\\n' -}}"
    + CHATML_TOOL_RESPONSES
)


def corpus_from_tasks(tasks_file: Path) -> list[str]:
    """Texts to train the tokenizer on: the tasks' queries and answers, and their tools' descriptions."""
    from bench.prompt import BASE_INSTRUCTION, RESPONSE_FORMATS
    from bench.task import load_tasks
    from mcp_gateway.catalog import load_catalog
    from mcp_gateway.catalog.export import to_openai_function

    tasks = load_tasks(tasks_file)
    catalog = load_catalog()
    texts = [BASE_INSTRUCTION, *RESPONSE_FORMATS.values()]
    tools = sorted({t for task in tasks for t in task.available_tools})
    texts += [json.dumps(to_openai_function(catalog.get(t), "bench"), ensure_ascii=False) for t in tools]
    texts += [task.query for task in tasks] + [a for task in tasks for a in task.accepted_answers]
    return texts


def build_tokenizer(corpus: Iterable[str], vocab_size: int = 4096):
    """A ``PreTrainedTokenizerFast``: byte-level BPE trained on ``corpus``, Qwen's special tokens, the template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(list(corpus) + [CHAT_TEMPLATE], trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, unk_token=None, additional_special_tokens=[],
                                   clean_up_tokenization_spaces=False)
    fast.add_tokens(ADDED)
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(out: Path, corpus: Iterable[str] = (), *, hidden: int = 64, layers: int = 2,
                     max_positions: int = 32768, seed: int = 0, weights: bool = True) -> Path:
    """Write the tokenizer, the Qwen3 config and (``weights``) random weights into ``out``; returns ``out``."""
    from transformers import Qwen3Config

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(list(corpus) or ["tool call ANSWER: {} \\boxed{}"])
    tokenizer.save_pretrained(out)
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 2,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2, head_dim=hidden // 4,
                         max_position_embeddings=max_positions, tie_word_embeddings=True,
                         eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
                         pad_token_id=tokenizer.pad_token_id, bos_token_id=None, torch_dtype="bfloat16")
    if not weights:
        config.save_pretrained(out)
        return out
    import torch
    from transformers import GenerationConfig, Qwen3ForCausalLM

    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(out, safe_serialization=True)
    GenerationConfig(eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id).save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--tasks", type=Path, default=Path(__file__).resolve().parent.parent / "bench" / "tasks"
                        / "kopa-bench.jsonl", help="tasks whose texts train the tokenizer")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args(argv)
    path = build_tiny_model(args.out, corpus_from_tasks(args.tasks), hidden=args.hidden, layers=args.layers)
    print(path)


if __name__ == "__main__":
    main()
