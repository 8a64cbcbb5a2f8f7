"""A trained LoRA checkpoint as a llama.cpp adapter GGUF, served over the unchanged base GGUF (``--lora``).

    from models.lora_gguf import adapter_to_gguf, read_checkpoint
    info = read_checkpoint(run / "checkpoint")          # kopa-checkpoint.json, checked: kind lora, base GGUF present
    path = adapter_to_gguf(run / "checkpoint")          # <checkpoint>/adapter.gguf, written once, then reused

Why an adapter and not a merged model: llama.cpp's ``convert_hf_to_gguf.py`` writes a merged SmolLM2 folder with a
SentencePiece vocabulary instead of its BPE one, and llama-cpp-python then aborts the process on the first Korean
prompt. The base GGUF keeps its own tokenizer and quantization; only the low-rank deltas travel.

The checkpoint contract (the trl engine writes it): a folder with a PEFT LoRA adapter (``adapter_config.json``,
``adapter_model.safetensors``), the tokenizer, and ``kopa-checkpoint.json`` =
``{"kind": "lora", "base": HF_FOLDER, "base_gguf": GGUF_OR_NULL, "template": …, "engine": …, "parent": …}``.

The adapter GGUF is llama.cpp's LoRA format (``convert_lora_to_gguf.py``, read by ``src/llama-adapter.cpp``):

* metadata ``general.architecture`` = the base's (``llama``; llama.cpp refuses a mismatch), ``general.type`` =
  ``adapter``, ``adapter.type`` = ``lora``, ``adapter.lora.alpha`` = the adapter's ``lora_alpha``;
* per adapted weight, ``<gguf name>.lora_a`` (PEFT's ``lora_A``, rank × in) and ``<gguf name>.lora_b`` (``lora_B``,
  out × rank), float32, named through gguf's tensor-name map of the llama architecture
  (``model.layers.3.self_attn.q_proj`` → ``blk.3.attn_q.weight``); in ggml order that is a: [in, rank],
  b: [rank, out] against the base weight's [in, out], which llama.cpp checks;
* ``lora_b`` of ``attn_q`` and ``attn_k`` has its rows permuted as ``convert_hf_to_gguf.py`` permutes those base
  weights (llama's rotary layout: per head, the two halves interleaved);
* llama.cpp scales each delta by alpha / rank; a module whose PEFT scale differs from lora_alpha / r (rsLoRA:
  alpha / sqrt(r)) has the difference folded into its ``lora_b``.

``tests/models/test_serve_checkpoint.py`` checks the result against the Hugging Face base + LoRA model's logits.
"""

from __future__ import annotations

import json
import math
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ModelServerError

__all__ = ["ADAPTER_GGUF", "CHECKPOINT_INFO", "LoraCheckpoint", "adapter_to_gguf", "is_lora_checkpoint",
           "read_checkpoint"]

CHECKPOINT_INFO = "kopa-checkpoint.json"
ADAPTER_GGUF = "adapter.gguf"
_ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


@dataclass(frozen=True)
class LoraCheckpoint:
    """A checked LoRA checkpoint folder (``read_checkpoint``)."""

    folder: Path
    base_gguf: Path  # the GGUF the adapter is served over
    template: str | None  # the chat template it was trained with (kopa-hermes-chatml)
    info: dict[str, Any]

    @property
    def name(self) -> str:
        """The served name: ``info["name"]``, else the run's folder name (``<run>/checkpoint``), else the folder's."""
        if self.info.get("name"):
            return str(self.info["name"])
        folder = self.folder.resolve()
        return folder.parent.name if folder.name == "checkpoint" and folder.parent.name else folder.name


def is_lora_checkpoint(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is a folder whose ``kopa-checkpoint.json`` says kind ``lora`` (nothing else is checked)."""
    if path is None:
        return False
    info = Path(path) / CHECKPOINT_INFO
    try:
        return info.is_file() and json.loads(info.read_text(encoding="utf-8")).get("kind") == "lora"
    except (OSError, ValueError, AttributeError):
        return False


def read_checkpoint(path: str | os.PathLike[str]) -> LoraCheckpoint:
    """The checkpoint at ``path``, checked: a folder with ``kopa-checkpoint.json`` of kind ``lora``, its adapter
    files, and an existing base GGUF.

    Raises:
        ModelServerError: one line saying which of these is wrong.
    """
    folder = Path(path)
    info_file = folder / CHECKPOINT_INFO
    if not folder.is_dir() or not info_file.is_file():
        raise ModelServerError(f"{folder} is not a checkpoint folder (no {CHECKPOINT_INFO})")
    try:
        info = json.loads(info_file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ModelServerError(f"{info_file} is not JSON: {exc}") from None
    if not isinstance(info, dict):
        raise ModelServerError(f"{info_file} is not a JSON object")
    if info.get("kind") != "lora":
        raise ModelServerError(f"{folder} is a {info.get('kind') or 'kindless'} checkpoint, not a LoRA adapter "
                               f"(kopa-checkpoint.json kind must be 'lora')")
    for name in _ADAPTER_FILES:
        if not (folder / name).is_file():
            raise ModelServerError(f"{folder} is a LoRA checkpoint without {name}")
    if not info.get("base_gguf"):
        raise ModelServerError(f"{folder} names no base GGUF (kopa-checkpoint.json base_gguf is null); llama.cpp "
                               "serves a LoRA adapter only over the GGUF of its base")
    base_gguf = Path(info["base_gguf"])
    if not base_gguf.is_file():
        raise ModelServerError(f"the base GGUF of {folder} is missing: {base_gguf}")
    return LoraCheckpoint(folder, base_gguf, info.get("template"), info)


def adapter_to_gguf(checkpoint_dir: str | os.PathLike[str], out_path: str | os.PathLike[str] | None = None) -> Path:
    """The checkpoint's adapter as a llama.cpp LoRA GGUF (module doc) at ``out_path`` (default
    ``<checkpoint>/adapter.gguf``). An existing file newer than the adapter is reused; a new one is written to a
    temporary file beside it and renamed, so a killed conversion leaves no half file.

    Raises:
        ModelServerError: the folder is not a LoRA checkpoint, its base GGUF is missing or not llama, or the adapter
            has what llama.cpp's format cannot carry (an unknown target module, DoRA, per-module alphas).
    """
    ckpt = read_checkpoint(checkpoint_dir)
    out = Path(out_path) if out_path is not None else ckpt.folder / ADAPTER_GGUF
    sources = [ckpt.folder / name for name in (*_ADAPTER_FILES, CHECKPOINT_INFO)]
    if out.is_file() and out.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
        return out
    import gguf  # the gguf package (installed with llama.cpp and training)

    config = _adapter_config(ckpt.folder)
    base = _BaseModel.read(ckpt.base_gguf, gguf)
    tensors = _lora_tensors(ckpt.folder, config, base, gguf)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    os.close(fd)
    try:
        writer = gguf.GGUFWriter(tmp_name, arch=base.arch)
        writer.add_type(gguf.GGUFType.ADAPTER)
        writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
        writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(config["lora_alpha"]))
        writer.add_name(ckpt.name)
        for name, array in tensors:
            writer.add_tensor(name, array)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        os.replace(tmp_name, out)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return out


# ------------------------------------------------------------------------------------------------ the parts


# The base architectures an adapter converts for: SmolLM2 (llama) and Gemma 3 (gemma3, whose Q/K rows llama.cpp
# reads as Hugging Face writes them: only llama's are permuted).
_ARCHS = ("llama", "gemma3")


@dataclass(frozen=True)
class _BaseModel:
    """What the conversion needs of the base GGUF: architecture, heads, and each weight's ggml shape."""

    arch: str
    block_count: int
    n_head: int
    n_head_kv: int
    shapes: dict[str, tuple[int, ...]]

    @classmethod
    def read(cls, path: Path, gguf: Any) -> _BaseModel:
        try:
            reader = gguf.GGUFReader(path)
        except (OSError, ValueError) as exc:
            raise ModelServerError(f"cannot read the base GGUF {path}: {exc}") from None

        def field(key: str) -> Any:
            if key not in reader.fields:
                raise ModelServerError(f"the base GGUF {path} has no {key}")
            return reader.fields[key].contents()

        arch = str(field("general.architecture"))
        if arch not in _ARCHS:
            raise ModelServerError(f"the base GGUF {path} is a {arch} model; LoRA adapters are converted for "
                                   f"{' and '.join(_ARCHS)} bases only")
        n_head = int(field(f"{arch}.attention.head_count"))
        n_head_kv = int(field(f"{arch}.attention.head_count_kv")) if f"{arch}.attention.head_count_kv" in \
            reader.fields else n_head
        shapes = {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors}
        return cls(arch, int(field(f"{arch}.block_count")), n_head, n_head_kv, shapes)


def _adapter_config(folder: Path) -> dict[str, Any]:
    path = folder / "adapter_config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ModelServerError(f"{path} is not JSON: {exc}") from None
    if config.get("peft_type", "LORA") != "LORA":
        raise ModelServerError(f"{path}: peft_type {config.get('peft_type')!r} is not LORA")
    if config.get("use_dora"):
        raise ModelServerError(f"{path}: DoRA adapters (use_dora) have no llama.cpp LoRA form")
    if config.get("alpha_pattern"):
        raise ModelServerError(f"{path}: per-module alphas (alpha_pattern) are not supported")
    if not isinstance(config.get("lora_alpha"), (int, float)) or config["lora_alpha"] <= 0:
        raise ModelServerError(f"{path}: lora_alpha must be a positive number, not {config.get('lora_alpha')!r}")
    return dict(config)


def _lora_tensors(folder: Path, config: dict[str, Any], base: _BaseModel, gguf: Any) -> list[tuple[str, Any]]:
    """The (name, float32 array) pairs of the adapter GGUF, in the base's tensor order."""
    import numpy as np

    pairs: dict[str, dict[str, Any]] = {}
    for key, array in _read_safetensors(folder / "adapter_model.safetensors").items():
        name = key.removeprefix("base_model.model.")
        for suffix, part in ((".lora_A.weight", "a"), (".lora_B.weight", "b")):
            if name.endswith(suffix):
                pairs.setdefault(name.removesuffix(suffix), {})[part] = array
                break
        else:
            raise ModelServerError(f"unknown target module in the adapter: {key} is not a lora_A/lora_B weight "
                                   "(trained embeddings, modules_to_save and DoRA cannot be served as a LoRA "
                                   "adapter)")
    if not pairs:
        raise ModelServerError(f"{folder / 'adapter_model.safetensors'} holds no LoRA weights")
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[base.arch.upper()], base.block_count)
    alpha = float(config["lora_alpha"])
    out: dict[str, list[tuple[str, Any]]] = {}
    for module, parts in pairs.items():
        target = names.get_name(module + ".weight", try_suffixes=(".weight",))
        if target is None or target not in base.shapes:
            raise ModelServerError(f"unknown target module in the adapter: {module} has no weight in the base "
                                   "GGUF" + (f" ({target})" if target else ""))
        if set(parts) != {"a", "b"}:
            raise ModelServerError(f"the adapter's {module} has lora_{'A' if 'a' in parts else 'B'} only")
        a, b = parts["a"].astype(np.float32), parts["b"].astype(np.float32)
        n_in, n_out = base.shapes[target][0], base.shapes[target][1]
        rank = a.shape[0]
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != n_in or b.shape != (n_out, rank):
            raise ModelServerError(f"the adapter's {module} (A {tuple(a.shape)}, B {tuple(b.shape)}) does not fit "
                                   f"the base weight {target} ({n_out} × {n_in})")
        peft_scale = alpha / math.sqrt(rank) if config.get("use_rslora") else alpha / rank
        if not math.isclose(peft_scale, alpha / rank):
            b = b * np.float32(peft_scale / (alpha / rank))
        if base.arch != "llama":
            pass
        elif ".attn_q." in target:
            b = _permute_rows(b, base.n_head)
        elif ".attn_k." in target:
            b = _permute_rows(b, base.n_head_kv)
        out[target] = [(f"{target}.lora_a", np.ascontiguousarray(a)), (f"{target}.lora_b", np.ascontiguousarray(b))]
    order = [name for name in base.shapes if name in out]
    return [pair for name in order for pair in out[name]]


def _permute_rows(weight: Any, n_head: int) -> Any:
    """``convert_hf_to_gguf.py``'s llama Q/K permutation, on the output rows of ``weight`` (out × …)."""
    rows = weight.shape[0]
    return (weight.reshape(n_head, 2, rows // n_head // 2, *weight.shape[1:])
            .swapaxes(1, 2).reshape(weight.shape))


_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}


def _read_safetensors(path: Path) -> dict[str, Any]:
    """A safetensors file as numpy arrays (F32, F16, BF16, F64), without torch."""
    import numpy as np

    data = path.read_bytes()
    try:
        (size,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + size])
    except (struct.error, ValueError) as exc:
        raise ModelServerError(f"{path} is not a safetensors file: {exc}") from None
    body = memoryview(data)[8 + size:]
    arrays: dict[str, Any] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        raw = body[start:end]
        if meta["dtype"] == "BF16":
            array = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif meta["dtype"] in _DTYPES:
            array = np.frombuffer(raw, dtype=_DTYPES[meta["dtype"]])
        else:
            raise ModelServerError(f"{path}: tensor {name} has dtype {meta['dtype']}, not a float type")
        arrays[name] = array.reshape(meta["shape"])
    return arrays
