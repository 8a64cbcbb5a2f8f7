"""The training engines, one entry each in ``ENGINES``: what it needs on this machine, and whether this one has it.

    engine = get_engine("verl")                 # UnknownEngine (naming the choices) for a name not registered
    engine.needs                                # ("a CUDA GPU visible to torch", "verl", "vllm", "ray")
    engine.missing()                            # [] when this machine can run it; else why not, one reason each
    for report in engine_reports(): print(report.line())   # verl: not here — no CUDA GPU visible (...), ...

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

__all__ = ["DEFAULT_ENGINE", "ENGINES", "Engine", "EngineReport", "UnknownEngine", "cuda_missing", "engine_reports",
           "get_engine", "verl_missing"]


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


ENGINES: dict[str, Engine] = {
    "verl": Engine("verl", "GRPO and SFT with verl: vLLM rollouts on replayed cassettes, FSDP updates, Ray workers",
                   ("a CUDA GPU visible to torch", "verl", "vllm", "ray"), verl_missing),
}
DEFAULT_ENGINE = "verl"


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
