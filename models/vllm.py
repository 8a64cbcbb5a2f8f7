"""vLLM on a CUDA machine (the ``[vllm]`` extra): the command and how to tell whether it can run here.

    from models.vllm import vllm_command
    command = vllm_command("/models/qwen3.5-4b-grpo", host="127.0.0.1", port=8001)

vLLM is started as ``vllm serve PATH --enable-auto-tool-choice --tool-call-parser qwen3_coder --reasoning-parser
qwen3``: the XML tool calls Qwen3.5 writes come back as structured ``tool_calls``, and its ``<think>`` block as
``reasoning_content``. The thinking setting is the one training uses: the recipes in ``train/engines/verl/configs``
set no ``enable_thinking``, so the chat template's default applies in both; ``enable_thinking=`` overrides it for
serving only when asked (``--default-chat-template-kwargs``). vLLM runs offline (``OFFLINE_ENV``): the appliance
fetches nothing at run time.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["DEFAULT_SERVED_NAME", "OFFLINE_ENV", "VLLM_REASONING_PARSER", "VLLM_TOOL_PARSER", "cuda_available",
           "vllm_command", "vllm_installed"]

VLLM_TOOL_PARSER = "qwen3_coder"
VLLM_REASONING_PARSER = "qwen3"
DEFAULT_SERVED_NAME = "kopa-agent-model"
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}


def vllm_installed() -> bool:
    return importlib.util.find_spec("vllm") is not None


def cuda_available() -> bool:
    """A CUDA device torch can use (torch is imported only when vLLM is installed: vLLM needs it anyway)."""
    if not vllm_installed() or importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def vllm_command(model: str, *, host: str, port: int, served_name: str = DEFAULT_SERVED_NAME,
                 enable_thinking: bool | None = None, extra_args: Sequence[str] = ()) -> list[str]:
    """The ``vllm serve`` command line for ``model`` (the ``vllm`` script beside this interpreter if present)."""
    script = Path(sys.executable).with_name("vllm")
    command = [str(script) if script.exists() else "vllm", "serve", model, "--host", host, "--port", str(port),
               "--served-model-name", served_name, "--enable-auto-tool-choice",
               "--tool-call-parser", VLLM_TOOL_PARSER, "--reasoning-parser", VLLM_REASONING_PARSER]
    if enable_thinking is not None:
        command += ["--default-chat-template-kwargs", json.dumps({"enable_thinking": enable_thinking})]
    return command + list(extra_args)
