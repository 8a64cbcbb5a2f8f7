"""One tool-call reader per wire format, with one value-typing rule: a model's reply means the same thing to the
bench agents, the agent endpoint, the training rollouts (``train.episode``, ``train.engines.verl.agent_loop``) and the reward.

    from models.toolcalls import read_message, read_text, render_assistant, ToolCall
    turn = read_message(completion["choices"][0]["message"], tools)   # structured tool_calls, else the text
    turn = read_text(generated_text, tools)                           # qwen3_coder XML or hermes JSON blocks
    turn.content, [(c.name, c.arguments) for c in turn.calls], turn.problems
    text = render_assistant("", [ToolCall("get_x", {"KEY": "kopa-…"})])  # qwen3_coder, as Qwen3.5 writes it
    messages = template_messages(chat_messages, tools)  # tool-call arguments as typed objects, for chat templates

The wire formats:

* **qwen3_coder** XML (Qwen3.5; ``models.toolcalls.qwen3_coder``):
  ``<tool_call>\\n<function=NAME>\\n<parameter=P>\\nV\\n</parameter>\\n</function>\\n</tool_call>``;
* **hermes** JSON in ``<tool_call>`` (Qwen2.5-style templates; ``models.toolcalls.hermes``):
  ``<tool_call>\\n{"name": NAME, "arguments": {...}}\\n</tool_call>``;
* **OpenAI structured** ``tool_calls`` (``models.toolcalls.openai_format``).

``tools`` are OpenAI ``tools`` entries: their parameter schemas type the values (``models.toolcalls.values``
states the rule). A call that cannot be read is never dropped silently: it is a ``problems`` entry naming the
fault and the right format, for the model to be told (consumers answer it as an ``INVALID_CALL`` tool call that
is not run). Structured arguments that are not JSON stay a call, with their raw text and a ``problem``.

vLLM's and verl's own qwen3_coder parsers are behind the same interface (``VllmQwen3CoderParser``,
``VerlQwen3CoderParser``) for the parity checks only; they import on first use.
"""

from .arguments import read_arguments
from .messages import template_messages
from .openai_format import read_message, read_structured_call
from .text import (
    FORMATS,
    HERMES,
    QWEN3_CODER,
    TextFormat,
    TextReader,
    ToolCallParser,
    choose_parser,
    read_text,
    render_assistant,
)
from .turn import INVALID_CALL, AssistantTurn, ToolCall
from .values import declared_types, parameter_types, read_value, type_arguments
from .verl_parser import VERL_PARSER, VerlQwen3CoderParser
from .vllm_parser import VLLM_PARSER, VllmQwen3CoderParser, vllm_importable

__all__ = ["FORMATS", "HERMES", "INVALID_CALL", "QWEN3_CODER", "VERL_PARSER", "VLLM_PARSER", "AssistantTurn",
           "TextFormat", "TextReader", "ToolCall", "ToolCallParser", "VerlQwen3CoderParser", "VllmQwen3CoderParser",
           "choose_parser", "declared_types", "parameter_types", "read_arguments", "read_message",
           "read_structured_call", "read_text", "read_value", "render_assistant", "template_messages",
           "type_arguments", "vllm_importable"]
