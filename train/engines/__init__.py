"""The training engines, one entry each in ``ENGINES``: what it needs on this machine, and whether this one has it.

    engine = get_engine("verl")                 # UnknownEngine (naming the choices) for a name not registered
    engine.needs                                # ("a CUDA GPU visible to torch", "verl", "vllm", "ray")
    engine.missing()                            # [] when this machine can run it; else why not, one reason each
    for report in engine_reports(): print(report.line())   # verl: not here — no CUDA GPU visible (...), ...
    name, why = default_engine()                # ("trl", "verl needs a CUDA GPU, vllm and ray: ...")
    precision, why = trl_precision()            # ("fp32", "no CUDA GPU and the CPU has no AMX-BF16 ...")

Two engines: ``verl`` (GPU clusters: vLLM rollouts, FSDP, Ray) and ``trl`` (TRL + PEFT LoRA on the CPU or one
GPU). The default is ``verl`` only where it can run (CUDA, vllm, ray), else ``trl``.

An engine is a subpackage of ``train.engines`` holding what only it needs (``train.engines.verl``: its recipes,
their checks, its launch, its dataset classes); what every engine needs sits beside it in ``train``
(``train.tasks``, ``train.data_checks``, ``train.runs``, ``train.sft_export``, ``train.reward``). Adding one is a
subpackage and an ``Engine`` entry here, with a ``missing`` function that finds what is absent without importing
the heavy parts (``importlib.util.find_spec``; torch only when it is installed, to ask for a CUDA device).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ENGINES", "Engine", "EngineReport", "UnknownEngine", "cpu_flags", "cuda_missing", "default_engine",
           "engine_reports", "get_engine", "trl_missing", "trl_precision", "verl_missing"]


class UnknownEngine(ValueError):
    """A name that is not in ``ENGINES``; the message lists the ones that are."""

    def __init__(self, name: str):
        super().__init__(f"unknown training engine {name!r}; choose one of: {', '.join(ENGINES)}")
        self.name = name


@dataclass(frozen=True)
class Engine:
    """A training engine: its ``name``, what it ``needs`` on the machine that runs it (in words), and ``missing``,
    which says what of that this machine lacks ([] when it can run it)."""

    name: str
    summary: str
    needs: tuple[str, ...]
    missing: Callable[[], list[str]]


@dataclass(frozen=True)
class EngineReport:
    """Whether this machine can run ``engine``, and why not (``reasons``, empty when it can)."""

    engine: str
    reasons: tuple[str, ...]

    @property
    def ready(self) -> bool:
        return not self.reasons

    def line(self) -> str:
        """``verl: can run here`` or ``verl: not here — reason, reason``."""
        return f"{self.engine}: can run here" if self.ready else f"{self.engine}: not here — {', '.join(self.reasons)}"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or half-installed package: as good as absent
        return False


def cuda_missing() -> list[str]:
    """Why torch sees no CUDA GPU here ([] when it sees one); torch is imported only when it is installed."""
    if not _installed("torch"):
        return ["torch not installed (no CUDA GPU can be seen)"]
    import torch

    if not torch.cuda.is_available():
        return ["no CUDA GPU visible (torch.cuda.is_available() is false)"]
    return []


def verl_missing() -> list[str]:
    """What verl training lacks on this machine: a CUDA GPU, verl, vLLM (the rollouts), Ray (verl's workers)."""
    reasons = cuda_missing()
    reasons += [f"{module} not installed" for module in ("verl", "vllm", "ray") if not _installed(module)]
    return reasons


def trl_missing() -> list[str]:
    """What TRL training lacks here: torch, transformers, trl, peft (it runs on the CPU or one CUDA GPU)."""
    return [f"{module} not installed" for module in ("torch", "transformers", "trl", "peft") if not _installed(module)]


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags (``amx_bf16``, ``avx512_bf16``, ...); empty where ``cpuinfo`` cannot be read."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def trl_precision(flags: frozenset[str] | None = None, *, cuda: bool | None = None) -> tuple[str, str]:
    """The precision the trl engine trains in here, and why: ``("bf16", ...)`` on a CUDA GPU or a CPU with
    bf16 instructions (AMX-BF16 or AVX512-BF16: bf16 autocast); else ``("fp32", ...)``.

    Measured on the 2-core build machine (AMD EPYC, AVX512-BF16, no AMX), a LoRA step over 2,048 tokens:
    Gemma 3 270M 21 → 30 tokens/s, SmolLM2-135M 31 → 35–46 tokens/s, fp32 → bf16 autocast, interleaved
    with other work on the cores. Without bf16
    instructions autocast emulates bf16 and is many times slower."""
    if cuda is None:
        cuda = not cuda_missing()
    if cuda:
        return "bf16", "CUDA GPU: bf16"
    flags = cpu_flags() if flags is None else flags
    if "amx_bf16" in flags:
        return "bf16", "CPU bf16 autocast (the CPU has AMX-BF16)"
    if "avx512_bf16" in flags:
        return "bf16", "CPU bf16 autocast (the CPU has AVX512-BF16)"
    return "fp32", "CPU fp32 (the CPU has neither AMX-BF16 nor AVX512-BF16)"


ENGINES: dict[str, Engine] = {
    "verl": Engine("verl", "GRPO and SFT with verl: vLLM rollouts on replayed cassettes, FSDP updates, Ray workers",
                   ("a CUDA GPU visible to torch", "verl", "vllm", "ray"), verl_missing),
    "trl": Engine("trl", "SFT with TRL and a PEFT LoRA adapter on the CPU or one GPU",
                  ("torch", "transformers", "trl", "peft"), trl_missing),
}


def default_engine() -> tuple[str, str]:
    """The engine ``kopa train`` uses when none is named, and why: ``verl`` where CUDA, vllm and ray are all
    present, else ``trl``. vllm and ray are looked up first, so torch is imported only where they are installed."""
    absent = [module for module in ("vllm", "ray") if not _installed(module)]
    reasons = absent and [f"{module} not installed" for module in absent] or cuda_missing()
    if not reasons:
        return "verl", "CUDA, vllm and ray are all present"
    return "trl", f"verl needs a CUDA GPU, vllm and ray ({', '.join(reasons)})"


def get_engine(name: str) -> Engine:
    """The engine registered as ``name``.

    Raises:
        UnknownEngine: no engine has that name (the message lists the choices).
    """
    try:
        return ENGINES[name]
    except KeyError:
        raise UnknownEngine(name) from None


def engine_reports() -> list[EngineReport]:
    """For every registered engine, whether this machine can run it and why not."""
    return [EngineReport(e.name, tuple(e.missing())) for e in ENGINES.values()]
