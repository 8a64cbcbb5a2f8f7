"""TRL's fused LM head, made to score only the positions that carry a label on the CPU too.

    with score_labeled_positions_only():
        trainer.train()

TRL (1.16) trains through a fused LM head: the hidden states are projected onto the vocabulary in tiles and turned
into per-token log-probabilities, without the ``(batch, length, vocabulary)`` logits. Where Triton runs (CUDA, XPU)
it projects only the positions whose next token has a label; elsewhere it projects every position, to keep tile
shapes fixed for compiled backends. On the CPU nothing is compiled, and every position is the expensive choice: an
SFT row is ~3,000 tokens of prompt and tool results around ~200 trained ones, and Gemma 3's vocabulary is 262,144
tokens, so the head was half of a step. Measured on the 2-core build machine (Gemma 3 270M, LoRA, bf16 autocast,
four EDGE rows): 44-59 s a step on every position, 19-26 s on the labeled ones, the same losses. A GRPO rollout's
prompt is the tool list (~8,600 SmolLM2 tokens) before a short completion: there the head was 10x the rest of a step.

TRL decides it per call through ``trl.trainer.utils._use_triton``; inside the context the CPU answers yes. The
log-probabilities are the same either way (the positions without a label are zeroed afterwards in both paths).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["score_labeled_positions_only"]


@contextlib.contextmanager
def score_labeled_positions_only() -> Iterator[bool]:
    """For the time of the context, TRL's fused LM head scores only labeled positions on the CPU (module doc).
    Yields whether TRL has the switch (a TRL without it keeps its own behaviour)."""
    from trl.trainer import utils

    original = getattr(utils, "_use_triton", None)
    if original is None:
        yield False
        return
    utils._use_triton = lambda device: device.type == "cpu" or original(device)
    try:
        yield True
    finally:
        utils._use_triton = original
