"""The chat templates that carry tools and tool calls (ChatML for SmolLM2, ``HERMES_GEMMA`` for Gemma 3): one text
per model, in training, bench and serving.

    from models.templates import HERMES_CHATML, render_conversation
    tokenizer.chat_template = HERMES_CHATML                  # training (TRL, verl), the rollout's token ids
    gguf metadata tokenizer.chat_template = HERMES_CHATML    # serving: llama.cpp renders requests with it
    text = render_conversation(messages, tools, add_generation_prompt=True)   # what the model sees

SmolLM2 speaks ChatML (``<|im_start|>role\\n…<|im_end|>``) but its own template knows no tools. This one is the
Qwen2.5 layout over the same tokens, so that TRL, vLLM and verl know its call format (hermes): the tools as one
JSON object per line inside ``<tools>`` in the system turn, each call as
``<tool_call>\\n{"name": …, "arguments": {…}}\\n</tool_call>`` (``models.toolcalls.hermes`` reads and renders
it), tool results as ``<tool_response>`` blocks inside one user turn. The assistant's part of each turn is
wrapped in ``{% generation %}`` so that trainers can mask the loss to it (transformers' assistant-token mask;
llama.cpp ignores the tag).

Written with ``{%- … -%}`` and string literals only, so that transformers' Jinja environment and llama-cpp-python's
(both ``trim_blocks``/``lstrip_blocks``, ``tojson`` without ASCII escapes) render the same bytes: a test checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["CHATML_TOOL_RESPONSES", "GEMMA_TEMPLATE_NAME", "HERMES_CHATML", "HERMES_GEMMA", "TEMPLATE_NAME",
           "TOOLS_PREAMBLE", "render_conversation"]

TEMPLATE_NAME = "kopa-hermes-chatml"
GEMMA_TEMPLATE_NAME = "kopa-hermes-gemma"

TOOLS_PREAMBLE = ("# Tools\\n\\nYou may call one or more functions. Their signatures are inside <tools></tools>:"
                  "\\n<tools>")
_CALL_RULE = ("\\n</tools>\\n\\nTo call a function, answer with one JSON object per call inside <tool_call></tool_call>"
              " tags:\\n<tool_call>\\n{\"name\": <function-name>, \"arguments\": <arguments-json-object>}\\n</tool_call>")

# The tools and the rule for calling them, inside the first turn: the same text in both templates (Jinja, with
# ``system`` and ``tools`` set by the caller's template).
_TOOLS_BLOCK = (
    "{%- if system -%}{{- '\\n\\n' -}}{%- endif -%}"
    "{{- '" + TOOLS_PREAMBLE + "' -}}"
    "{%- for tool in tools -%}{%- set fn = tool.function if tool.function is defined else tool -%}"
    "{{- '\\n' + (fn | tojson) -}}{%- endfor -%}"
    "{{- '" + _CALL_RULE + "' -}}"
)

# An assistant message's tool calls, hermes style: one <tool_call> block each (both templates)
_CALLS_HERMES = (
    "{%- for call in message.tool_calls or [] -%}"
    "{%- set fn = call.function if call.function is defined else call -%}"
    "{%- if message.content or not loop.first -%}{{- '\\n' -}}{%- endif -%}"
    "{{- '<tool_call>\\n{\\\"name\\\": \\\"' + fn.name + '\\\", \\\"arguments\\\": ' -}}"
    "{%- if fn.arguments is string -%}{{- fn.arguments -}}{%- else -%}{{- fn.arguments | tojson -}}{%- endif -%}"
    "{{- '}\\n</tool_call>' -}}"
    "{%- endfor -%}"
)


def _trained(part: str) -> str:
    """``part`` inside ``{% generation %}`` (the loss is taken on it), unless the message says ``"weight": 0``, as
    OpenAI's fine-tuning format does for an assistant turn shown but not learnt (EDGE's slipped calls)."""
    return ("{%- if message.weight is defined and message.weight == 0 -%}" + part
            + "{%- else -%}{%- generation -%}" + part + "{%- endgeneration -%}{%- endif -%}")


# The end of a ChatML template's message loop: consecutive tool results as <tool_response> blocks in one user turn,
# then the generation prompt (shared with train.tiny_model's qwen3_coder template for the tiny test model)
CHATML_TOOL_RESPONSES = (
    "{%- elif message.role == 'tool' -%}"
    "{%- if loop.first or rest[loop.index0 - 1].role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}"
    "{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' -}}"
    "{%- if loop.last or rest[loop.index0 + 1].role != 'tool' -%}{{- '<|im_end|>\\n' -}}{%- endif -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

HERMES_CHATML = (
    "{%- if messages and messages[0].role == 'system' -%}"
    "{%- set system = messages[0].content -%}{%- set rest = messages[1:] -%}"
    "{%- else -%}{%- set system = '' -%}{%- set rest = messages -%}{%- endif -%}"
    "{%- if system or tools -%}{{- '<|im_start|>system\\n' + system -}}"
    "{%- if tools -%}"
    + _TOOLS_BLOCK +
    "{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}{%- endif -%}"
    "{%- for message in rest -%}"
    "{%- if message.role == 'user' or message.role == 'system' -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' -}}"
    "{%- elif message.role == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    + _trained("{{- message.content or '' -}}" + _CALLS_HERMES + "{{- '<|im_end|>' -}}") +
    "{{- '\\n' -}}"
    + CHATML_TOOL_RESPONSES
)

# The same calls, tools and results in Gemma's turns (``<start_of_turn>user|model\n…<end_of_turn>\n``, opened by
# ``<bos>``, which the template writes: transformers and llama.cpp tokenize its output without adding one). Gemma
# has no system role: the system text and the tools open the first user turn (a turn of their own when the
# conversation does not start with the user), a later system message is a user turn. The model's part, from its
# text to its ``<end_of_turn>``, is inside ``{% generation %}``.
HERMES_GEMMA = (
    "{%- macro preamble(system, tools) -%}"
    "{{- system -}}"
    "{%- if tools -%}"
    + _TOOLS_BLOCK +
    "{%- endif -%}"
    "{%- endmacro -%}"
    "{{- '<bos>' -}}"
    "{%- if messages and messages[0].role == 'system' -%}"
    "{%- set system = messages[0].content or '' -%}{%- set rest = messages[1:] -%}"
    "{%- else -%}{%- set system = '' -%}{%- set rest = messages -%}{%- endif -%}"
    "{%- if (system or tools) and (not rest or rest[0].role != 'user') -%}"
    "{{- '<start_of_turn>user\\n' + preamble(system, tools) + '<end_of_turn>\\n' -}}"
    "{%- endif -%}"
    "{%- for message in rest -%}"
    "{%- if message.role == 'user' or message.role == 'system' -%}"
    "{{- '<start_of_turn>user\\n' -}}"
    "{%- if loop.first and message.role == 'user' and (system or tools) -%}"
    "{{- preamble(system, tools) + '\\n\\n' -}}"
    "{%- endif -%}"
    "{{- (message.content or '') + '<end_of_turn>\\n' -}}"
    "{%- elif message.role == 'assistant' -%}"
    "{{- '<start_of_turn>model\\n' -}}"
    + _trained("{{- message.content or '' -}}" + _CALLS_HERMES + "{{- '<end_of_turn>' -}}") +
    "{{- '\\n' -}}"
    "{%- elif message.role == 'tool' -%}"
    "{%- if loop.first or rest[loop.index0 - 1].role != 'tool' -%}{{- '<start_of_turn>user' -}}{%- endif -%}"
    "{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' -}}"
    "{%- if loop.last or rest[loop.index0 + 1].role != 'tool' -%}{{- '<end_of_turn>\\n' -}}{%- endif -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<start_of_turn>model\\n' -}}{%- endif -%}"
)


def render_conversation(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None, *,
                        add_generation_prompt: bool = False, template: str = HERMES_CHATML) -> str:
    """The conversation as the model sees it, rendered by transformers' chat-template renderer (no tokenizer)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(conversations=[list(messages)], tools=list(tools) if tools else None,
                                        chat_template=template, add_generation_prompt=add_generation_prompt)
    return rendered[0]
