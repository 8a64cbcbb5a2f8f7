"""The model server behind the agent: vLLM on a CUDA machine with the ``[vllm]`` extra, llama.cpp otherwise.

    plan = plan_model_server("/models/qwen3.5-4b-grpo")      # what would run, and why (nothing started)
    with ModelServer(plan) as server:                         # starts it, waits until it is healthy
        server.base_url                                       # http://127.0.0.1:PORT/v1, OpenAI-compatible
    # stopped: SIGTERM, then SIGKILL after a grace period; also when the start failed

vLLM is started as ``vllm serve PATH --enable-auto-tool-choice --tool-call-parser qwen3_coder --reasoning-parser
qwen3``: the XML tool calls Qwen3.5 writes come back as structured ``tool_calls``, and its ``<think>`` block as
``reasoning_content``. The thinking setting is the one training uses: the recipes in ``train/configs`` set no
``enable_thinking``, so the chat template's default applies in both; ``enable_thinking=`` overrides it for
serving only when asked (``--default-chat-template-kwargs``). vLLM runs offline (``HF_HUB_OFFLINE=1``): the
appliance fetches nothing at run time.

Without CUDA or vLLM (the CPU appliance), llama-cpp-python serves a GGUF: the given path, or the packaged
SmolLM2-135M (``bench.agents.local``), with the local agent's settings. A model that is not a GGUF cannot
run there, and the error says what to install.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import httpx

from bench.agents.local import LOCAL_DEFAULTS, LOCAL_MODEL_ALIAS, LocalModel, log_tail, smollm2_gguf

__all__ = ["BACKENDS", "ModelServer", "ModelServerError", "ServerPlan", "cuda_available", "plan_model_server",
           "vllm_command"]

Backend = Literal["vllm", "llama.cpp"]
BACKENDS = ("auto", "vllm", "llama.cpp")
VLLM_TOOL_PARSER = "qwen3_coder"
VLLM_REASONING_PARSER = "qwen3"
DEFAULT_SERVED_NAME = "kopa-agent-model"
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}


class ModelServerError(RuntimeError):
    """The model server cannot be planned or did not come up; the message says why and what to do."""


def cuda_available() -> bool:
    """A CUDA device torch can use (torch is imported only when vLLM is installed: vLLM needs it anyway)."""
    if importlib.util.find_spec("vllm") is None or importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


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


@dataclass(frozen=True)
class ServerPlan:
    """What ``ModelServer`` will run: the backend, its command and environment, and how to reach it."""

    backend: Backend
    command: tuple[str, ...]
    env: Mapping[str, str]
    host: str
    port: int
    served_name: str
    health_path: str
    reason: str  # why this backend was chosen, for the operator
    agent_defaults: Mapping[str, Any] = field(default_factory=dict)  # the agent settings this server needs
    tokenizer: str | None = None  # the model folder, for vLLM's tool-call parser on the endpoint side

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


def plan_model_server(model: str | None = None, *, backend: str = "auto", host: str = "127.0.0.1",
                      port: int | None = None, served_name: str | None = None, enable_thinking: bool | None = None,
                      n_threads: int | None = None, extra_args: Sequence[str] = (),
                      cuda: bool | None = None, vllm: bool | None = None) -> ServerPlan:
    """Choose the backend for ``model`` and build its command; nothing is started.

    ``model``: a Hugging Face model folder (vLLM) or a ``.gguf`` file (llama.cpp); None: the packaged SmolLM2.
    ``cuda`` / ``vllm``: what this machine has (detected when None).

    Raises:
        ModelServerError: the backend asked for is not available here, or the model does not suit it.
    """
    if backend not in BACKENDS:
        raise ModelServerError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    is_gguf = model is None or model.endswith(".gguf")
    has_vllm = importlib.util.find_spec("vllm") is not None if vllm is None else vllm
    has_cuda = (cuda_available() if has_vllm else False) if cuda is None else cuda
    port = port or _free_port(host)
    if backend == "vllm" or (backend == "auto" and has_vllm and has_cuda and not is_gguf):
        if not has_vllm:
            raise ModelServerError("backend vllm: vLLM is not installed; install the GPU extra "
                                   "(pip install 'kopa-appliance[vllm]') on a CUDA machine")
        if not has_cuda:
            raise ModelServerError("backend vllm: no CUDA device is visible; use --backend llama.cpp with a GGUF")
        if model is None or is_gguf:
            raise ModelServerError("backend vllm needs a Hugging Face model folder (config.json, safetensors), "
                                   f"not {model or 'the packaged GGUF'}")
        name = served_name or DEFAULT_SERVED_NAME
        return ServerPlan("vllm", tuple(vllm_command(model, host=host, port=port, served_name=name,
                                                     enable_thinking=enable_thinking, extra_args=extra_args)),
                          OFFLINE_ENV, host, port, name, "/health",
                          reason="CUDA and vLLM are present" if backend == "auto" else "asked for",
                          tokenizer=model)
    if not is_gguf:
        raise ModelServerError(f"{model} is not a GGUF file, and vLLM cannot run here "
                               f"({'no CUDA device' if has_vllm else 'vLLM is not installed'}): give a .gguf "
                               "for llama.cpp, or run on a CUDA machine with the [vllm] extra")
    path = Path(model) if model is not None else smollm2_gguf()
    if not path.is_file():
        raise ModelServerError(f"no GGUF file at {path}")
    local = LocalModel(model_path=path, n_threads=n_threads or min(4, os.cpu_count() or 1))
    command = local.command(port)
    if host != "127.0.0.1":
        command[command.index("--host") + 1] = host
    reason = "asked for" if backend == "llama.cpp" else ("no CUDA device" if has_vllm else "vLLM is not installed")
    return ServerPlan("llama.cpp", tuple(command), OFFLINE_ENV, host, port, LOCAL_MODEL_ALIAS, "/v1/models",
                      reason=reason, agent_defaults=dict(LOCAL_DEFAULTS))


def _die_with_parent() -> None:
    """In the child: SIGTERM when the process that started it dies, so a crash leaves no server behind."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class ModelServer:
    """Runs a ``ServerPlan`` as a child process; a context manager that waits for health and stops cleanly."""

    def __init__(self, plan: ServerPlan, *, startup_timeout_s: float = 600.0, stop_grace_s: float = 15.0):
        self.plan = plan
        self.startup_timeout_s, self.stop_grace_s = startup_timeout_s, stop_grace_s
        self.process: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    @property
    def base_url(self) -> str:
        return self.plan.base_url

    def start(self) -> None:
        """Start the server and wait until its health path answers 200.

        Raises:
            ModelServerError: the program is missing, or the server exited or did not answer in time (the
                message carries the end of its log).
        """
        if self.plan.backend == "llama.cpp" and importlib.util.find_spec("llama_cpp") is None:
            raise ModelServerError("llama-cpp-python is not installed; `make setup` installs it")
        if self.plan.backend == "vllm" and shutil.which(self.plan.command[0]) is None:
            raise ModelServerError(f"{self.plan.command[0]} not found; install the [vllm] extra")
        self._log = tempfile.TemporaryFile()
        env = {**os.environ, **self.plan.env}
        self.process = subprocess.Popen(self.plan.command, stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=self._log, env=env,
                                        preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise

    def _wait_healthy(self) -> None:
        assert self.process is not None
        url = f"http://{self.plan.host}:{self.plan.port}{self.plan.health_path}"
        deadline = time.monotonic() + self.startup_timeout_s
        with httpx.Client() as client:
            while True:
                if self.process.poll() is not None:
                    raise ModelServerError(f"the {self.plan.backend} server exited with code "
                                           f"{self.process.returncode} before it was healthy:\n{self.log_tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(url, timeout=2.0).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise ModelServerError(f"the {self.plan.backend} server was not healthy at {url} within "
                                           f"{self.startup_timeout_s:g} s:\n{self.log_tail()}")
                time.sleep(0.1)

    def healthy(self) -> bool:
        url = f"http://{self.plan.host}:{self.plan.port}{self.plan.health_path}"
        try:
            return httpx.get(url, timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after the grace period; the exit code (None when nothing ran). Safe twice."""
        process, self.process = self.process, None
        code = None
        if process is not None:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(self.stop_grace_s)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            code = process.returncode
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def log_tail(self, n_bytes: int = 4_000) -> str:
        return log_tail(self._log, n_bytes)

    def __enter__(self) -> ModelServer:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
