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

llama.cpp serves with the model's own tool-carrying chat template (``models.llama_cpp.CHAT_FORMATS``, run by
``python -m models.llama_cpp``), the one it is trained with: the packaged SmolLM2 (``--agent local``) with
``kopa-hermes-chatml`` (``models.templates.HERMES_CHATML``). Calls come back as ``<tool_call>`` text in the
content, which the agent's reader (``models.toolcalls``) takes out, and tool results go back as ``tool`` messages,
which the template renders as ``<tool_response>``; the agent defaults are ``LOCAL_DEFAULTS`` (small replies and
tool results for an 8K context, greedy, schemas without prose).

A trained LoRA checkpoint (``kopa-checkpoint.json`` kind ``lora``, the trl engine's ``<run>/checkpoint``) is the
llama.cpp backend's other input: ``plan_lora_checkpoint`` converts its adapter once (``models.lora_gguf``,
``<checkpoint>/adapter.gguf``) and serves it over the unchanged base GGUF it names (``--lora_path``: the packaged
SmolLM2's, or the assembled Gemma 3 270M's, ``models.gemma``) with the chat format named after the template the
checkpoint records (``kopa-hermes-chatml`` or ``kopa-hermes-gemma``; none recorded: ChatML). A checkpoint trained
with another template is refused. vLLM refuses a LoRA checkpoint.

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

from public_apis.ports import free_port

from .llama_cpp import (
    CHAT_FORMATS,
    INSTALL_HINT,
    LOCAL_DEFAULTS,
    LOCAL_MODEL_ALIAS,
    N_CTX,
    llama_cpp_command,
    smollm2_gguf,
)
from .errors import ModelServerError
from .lora_gguf import CHECKPOINT_INFO, adapter_to_gguf, is_lora_checkpoint, read_checkpoint
from .server import ServerPlan
from .templates import TEMPLATE_NAME
from .vllm import DEFAULT_SERVED_NAME, OFFLINE_ENV, cuda_available, vllm_command, vllm_installed

__all__ = ["BACKENDS", "CHECKPOINT_DEFAULTS", "PLANNERS", "BackendUnsuitable", "Machine", "PlanRequest",
           "check_model_path", "plan_llama_cpp", "plan_lora_checkpoint", "plan_model_server", "plan_vllm"]

# The agent settings for a LoRA checkpoint on llama.cpp: those of the packaged model, served the same way.
CHECKPOINT_DEFAULTS: dict[str, object] = dict(LOCAL_DEFAULTS)


@dataclass(frozen=True)
class PlanRequest:
    """What is to be served and where (the options of ``plan_model_server``; the port is chosen by now)."""

    model: str | None  # a Hugging Face model folder, a .gguf file, a LoRA checkpoint folder, or None: SmolLM2
    host: str
    port: int
    served_name: str | None = None
    enable_thinking: bool | None = None
    n_threads: int | None = None
    extra_args: tuple[str, ...] = ()

    @property
    def is_gguf(self) -> bool:
        return self.model is None or self.model.endswith(".gguf")

    @property
    def is_lora_checkpoint(self) -> bool:
        return is_lora_checkpoint(self.model)


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
    if request.is_lora_checkpoint:
        raise BackendUnsuitable(f"{request.model} is a LoRA checkpoint, served over its base GGUF",
                                "use --backend llama.cpp")
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
    """llama-cpp-python's server for a GGUF file (default: the packaged SmolLM2), with the local agent settings;
    a LoRA checkpoint folder goes to ``plan_lora_checkpoint``."""
    if request.is_lora_checkpoint:
        return plan_lora_checkpoint(request, machine)
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


def plan_lora_checkpoint(request: PlanRequest, machine: Machine) -> ServerPlan:
    """A trained LoRA checkpoint on llama.cpp: its adapter as a GGUF (converted here, once) over the base GGUF the
    checkpoint names, the chat format of its template, ``CHECKPOINT_DEFAULTS``; served as the run's name (module doc).

    Raises:
        ModelServerError: the checkpoint is broken (no base GGUF, an adapter llama.cpp cannot carry) or was trained
            with a template that has no chat format here: one line.
    """
    if not request.is_lora_checkpoint:
        raise BackendUnsuitable(f"{request.model or 'the packaged GGUF'} is not a LoRA checkpoint folder",
                                f"give a folder with {CHECKPOINT_INFO} of kind lora")
    assert request.model is not None
    checkpoint = read_checkpoint(request.model)
    chat_format = checkpoint.template or TEMPLATE_NAME
    if chat_format not in CHAT_FORMATS:
        raise ModelServerError(f"{checkpoint.folder} was trained with the chat template {chat_format!r}, which "
                               f"llama.cpp does not serve; it serves {', '.join(map(repr, CHAT_FORMATS))}")
    adapter = adapter_to_gguf(checkpoint.folder)
    name = request.served_name or checkpoint.name
    command = llama_cpp_command(checkpoint.base_gguf, host=request.host, port=request.port, served_name=name,
                                n_threads=request.n_threads, chat_format=chat_format,
                                lora_path=adapter) + list(request.extra_args)
    return ServerPlan("llama.cpp", tuple(command), OFFLINE_ENV, request.host, request.port, name, "/v1/models",
                      reason="a LoRA checkpoint", agent_defaults=dict(CHECKPOINT_DEFAULTS), context_tokens=N_CTX,
                      warm_up=True, requires={"llama_cpp": INSTALL_HINT})


def check_model_path(model: str) -> None:
    """That ``model`` names something a backend serves: a ``.gguf`` file, a Hugging Face model folder
    (``config.json``) or a trained checkpoint folder (``kopa-checkpoint.json``).

    Raises:
        ModelServerError: one line naming the path and what it should be.
    """
    path = Path(model)
    what = (f"give a .gguf file, a Hugging Face model folder (config.json) or a trained checkpoint folder "
            f"({CHECKPOINT_INFO})")
    if not path.exists():
        raise ModelServerError(f"no model at {model}: {what}")
    if path.is_file() and path.suffix != ".gguf":
        raise ModelServerError(f"{model} is a file but not a .gguf: {what}")
    if path.is_dir() and not ((path / "config.json").is_file() or (path / CHECKPOINT_INFO).is_file()):
        raise ModelServerError(f"{model} is a folder without config.json or {CHECKPOINT_INFO}: {what}")


Planner = Callable[[PlanRequest, Machine], ServerPlan]
PLANNERS: dict[str, Planner] = {"vllm": plan_vllm, "llama.cpp": plan_llama_cpp}  # auto asks them in this order
BACKENDS = ("auto", *PLANNERS)


def plan_model_server(model: str | None = None, *, backend: str = "auto", host: str = "127.0.0.1",
                      port: int | None = None, served_name: str | None = None, enable_thinking: bool | None = None,
                      n_threads: int | None = None, extra_args: Sequence[str] = (),
                      cuda: bool | None = None, vllm: bool | None = None) -> ServerPlan:
    """Choose the backend for ``model`` and build its command; nothing is started.

    ``model``: a Hugging Face model folder (vLLM), a ``.gguf`` file or a LoRA checkpoint folder (llama.cpp); None:
    the packaged SmolLM2.
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
