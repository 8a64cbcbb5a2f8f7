"""Whether the GPU variant can be built here. Its wheelhouse (``make wheelhouse-gpu``) adds vLLM 0.33.0, whose
resolution on this machine's registry (``pip install --dry-run --report 'vllm==0.33.0'``) is 198 packages with
a CUDA 13 torch 2.14.0 and some 35 ``nvidia-*`` / ``cuda-*`` wheels (cuDNN, cuBLAS, NCCL, nvshmem, cutlass,
the nvcc toolchain), and verl. The vLLM wheel alone is 336 MB; the CUDA libraries are several GB of wheels and
more unpacked, and buildah's vfs driver keeps a full copy of every layer plus one while committing.

So: a wheelhouse that already holds vLLM, verl and a CUDA torch builds the GPU image the same way as the CPU one;
otherwise the wheelhouse is made only where ``NEEDED_GIB`` are free under the build folder, and the build says
exactly why it stops when they are not (``make wheelhouse-gpu`` elsewhere, copy ``wheelhouse/`` here, run again).
"""

from __future__ import annotations

import shutil
from pathlib import Path

# An estimate, not a measurement: ~6 GiB of GPU wheels, ~15 GiB unpacked in the image, three copies of it while vfs
# commits it, and the archives. For comparison the CPU image (2.75 GB) leaves ~7.5 GB in the folder (storage
# 2.8 GB, archives 3.5 GB, base 0.16 GB) and needs a few GB more while it builds.
NEEDED_GIB = 60
REQUIRED = {"vllm": "vllm-0.33.0-", "verl": "verl-0.9.1-"}


def missing_wheels(wheelhouse: Path) -> list[str]:
    """What the GPU install step needs that ``wheelhouse`` lacks: vllm, verl, a CUDA (not ``+cpu``) torch."""
    names = [p.name for p in wheelhouse.glob("*.whl")]
    missing = [package for package, prefix in REQUIRED.items() if not any(n.startswith(prefix) for n in names)]
    if not any(n.startswith("torch-") and "+cpu" not in n for n in names):
        missing.append("torch (a CUDA build)")
    return missing


def refusal(wheelhouse: Path, folder: Path, *, free_bytes: int | None = None) -> str | None:
    """None when the GPU variant can be built here (its wheels are there, or there is room to make them);
    otherwise the exact reason, for the build to print before it stops."""
    missing = missing_wheels(wheelhouse)
    if not missing:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free if free_bytes is None else free_bytes
    if free >= NEEDED_GIB * 2**30:
        return None
    return (f"GPU image not built: {wheelhouse} lacks {', '.join(missing)}, and `make wheelhouse-gpu` cannot be made "
            f"here: vLLM 0.33.0 resolves to 198 packages with a CUDA 13 torch 2.14.0 and ~35 nvidia/cuda wheels "
            f"(vLLM's wheel alone 336 MB), estimated at >= {NEEDED_GIB} GiB of wheels, unpacked layers and vfs "
            f"copies, and {folder} has {free / 2**30:.1f} GiB free. Make it on a machine with the room "
            f"(`make wheelhouse-gpu`), bring wheelhouse/ here and run `make image-gpu` again; the CPU image "
            f"(`make image`) is the tested one.")
