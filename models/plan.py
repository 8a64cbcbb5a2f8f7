"""Which model server runs a model here, and its command: vLLM on CUDA, llama.cpp on the CPU. Nothing is started.

    from models.plan import plan_model_server
    plan = plan_model_server("/models/qwen3.5-4b-grpo")   # vLLM on a CUDA machine with the [vllm] extra
    plan = plan_model_server(None)                        # the packaged SmolLM2 GGUF on llama.cpp
    plan.backend, plan.reason, plan.command               # what would run, and why

One planner per backend, in ``PLANNERS``: a function ``(PlanRequest, Machine) -> ServerPlan`` that raises
``BackendUnsuitable(reason, fix)`` when it cannot serve that model on this machine. ``--backend auto`` asks them
in ``PLANNERS`` order and takes the first that accepts; the reason it gives is why the earlier ones refused.
A named backend that refuses is an error with its reason and fix; when every backend refuses, the error lists
each one's reason.

Adding a backend is one function and one entry. A trained checkpoint (a Hugging Face folder) on a CPU machine,
for instance: ``plan_hf_cpu(request, machine)`` refuses what is not a model folder (``config.json``) and
otherwise returns a ``ServerPlan`` whose command converts the folder to a GGUF once (llama.cpp's
``convert_hf_to_gguf.py`` into a cache folder, then ``llama_cpp_command`` on the result: a ``sh -c "… && exec
…"`` command, or a conversion done in the planner), or starts another OpenAI-compatible server that runs on the
CPU; with ``warm_up=True`` and its ``agent_defaults``, and ``PLANNERS["hf-cpu"] = plan_hf_cpu`` after
``llama.cpp`` so that ``auto`` reaches it only when vLLM cannot run and the model is no GGUF.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .llama_cpp import (
    INSTALL_HINT,
    LOCAL_DEFAULTS,
    LOCAL_MODEL_ALIAS,
    N_CTX,
    llama_cpp_command,
    smollm2_gguf,
)
from .errors import ModelServerError
from .server import ServerPlan, free_port
from .vllm import DEFAULT_SERVED_NAME, OFFLINE_ENV, cuda_available, vllm_command, vllm_installed

__all__ = ["BACKENDS", "PLANNERS", "BackendUnsuitable", "Machine", "PlanRequest", "plan_llama_cpp",
           "plan_model_server", "plan_vllm"]


@dataclass(frozen=True)
class PlanRequest:
    """What is to be served and where (the options of ``plan_model_server``; the port is chosen by now)."""

    model: str | None  # a Hugging Face model folder, a .gguf file, or None: the packaged SmolLM2 GGUF
    host: str
    port: int
    served_name: str | None = None
    enable_thinking: bool | None = None
    n_threads: int | None = None
    extra_args: tuple[str, ...] = ()

    @property
    def is_gguf(self) -> bool:
        return self.model is None or self.model.endswith(".gguf")


@dataclass(frozen=True)
class Machine:
    """What this machine has for serving."""

    cuda: bool
    vllm: bool

    @property
    def why_no_vllm(self) -> str | None:
        return "vLLM is not installed" if not self.vllm else "no CUDA device" if not self.cuda else None


class BackendUnsuitable(Exception):
    """A planner cannot serve the model on this machine: ``reason`` (short, shown by ``auto``) and ``fix``."""

    def __init__(self, reason: str, fix: str):
        super().__init__(f"{reason}; {fix}")
        self.reason, self.fix = reason, fix


def plan_vllm(request: PlanRequest, machine: Machine) -> ServerPlan:
    """vLLM for a Hugging Face model folder, on a CUDA machine with the ``[vllm]`` extra."""
    if not machine.vllm:
        raise BackendUnsuitable("vLLM is not installed", "install the GPU extra (pip install "
                                                         "'kopa-appliance[vllm]') on a CUDA machine")
    if not machine.cuda:
        raise BackendUnsuitable("no CUDA device", "use --backend llama.cpp with a GGUF")
    if request.model is None or request.is_gguf:
        raise BackendUnsuitable(f"needs a Hugging Face model folder (config.json, safetensors), not "
                                f"{request.model or 'the packaged GGUF'}", "give a model folder")
    name = request.served_name or DEFAULT_SERVED_NAME
    command = vllm_command(request.model, host=request.host, port=request.port, served_name=name,
                           enable_thinking=request.enable_thinking, extra_args=request.extra_args)
    return ServerPlan("vllm", tuple(command), OFFLINE_ENV, request.host, request.port, name, "/health",
                      reason="CUDA and vLLM are present", tokenizer=request.model,
                      requires={"vllm": "install the [vllm] extra"})


def plan_llama_cpp(request: PlanRequest, machine: Machine) -> ServerPlan:
    """llama-cpp-python's server for a GGUF file (default: the packaged SmolLM2), with the local agent settings."""
    if not request.is_gguf:
        raise BackendUnsuitable(f"{request.model} is not a GGUF file",
                                "give a .gguf for llama.cpp, or run on a CUDA machine with the [vllm] extra")
    path = Path(request.model) if request.model is not None else smollm2_gguf()
    if not path.is_file():
        raise BackendUnsuitable(f"no GGUF file at {path}", "give the path of a .gguf file")
    name = request.served_name or LOCAL_MODEL_ALIAS
    command = llama_cpp_command(path, host=request.host, port=request.port, served_name=name,
                                n_threads=request.n_threads) + list(request.extra_args)
    return ServerPlan("llama.cpp", tuple(command), OFFLINE_ENV, request.host, request.port, name, "/v1/models",
                      reason="asked for", agent_defaults=dict(LOCAL_DEFAULTS), context_tokens=N_CTX,
                      warm_up=True, requires={"llama_cpp": INSTALL_HINT})


Planner = Callable[[PlanRequest, Machine], ServerPlan]
PLANNERS: dict[str, Planner] = {"vllm": plan_vllm, "llama.cpp": plan_llama_cpp}  # auto asks them in this order
BACKENDS = ("auto", *PLANNERS)


def plan_model_server(model: str | None = None, *, backend: str = "auto", host: str = "127.0.0.1",
                      port: int | None = None, served_name: str | None = None, enable_thinking: bool | None = None,
                      n_threads: int | None = None, extra_args: Sequence[str] = (),
                      cuda: bool | None = None, vllm: bool | None = None) -> ServerPlan:
    """Choose the backend for ``model`` and build its command; nothing is started.

    ``model``: a Hugging Face model folder (vLLM) or a ``.gguf`` file (llama.cpp); None: the packaged SmolLM2.
    ``cuda`` / ``vllm``: what this machine has (detected when None).

    Raises:
        ModelServerError: the backend asked for is unknown or cannot serve the model here, or none can (the
            message gives each one's reason and what to do).
    """
    if backend not in BACKENDS:
        raise ModelServerError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    has_vllm = vllm_installed() if vllm is None else vllm
    machine = Machine(cuda=(cuda_available() if has_vllm else False) if cuda is None else cuda, vllm=has_vllm)
    request = PlanRequest(model, host, port or free_port(host), served_name, enable_thinking, n_threads,
                          tuple(extra_args))
    if backend != "auto":
        try:
            return replace(PLANNERS[backend](request, machine), reason="asked for")
        except BackendUnsuitable as exc:
            raise ModelServerError(f"backend {backend}: {exc.reason}; {exc.fix}") from None
    refused: list[tuple[str, BackendUnsuitable]] = []
    for name, planner in PLANNERS.items():
        try:
            plan = planner(request, machine)
        except BackendUnsuitable as exc:
            refused.append((name, exc))
            continue
        return replace(plan, reason="; ".join(exc.reason for _, exc in refused)) if refused else plan
    reasons = "; ".join(f"{name}: {exc.reason}" for name, exc in refused)
    raise ModelServerError(f"no backend can serve {model or 'the packaged model'} here ({reasons}): "
                           f"{refused[-1][1].fix}")
