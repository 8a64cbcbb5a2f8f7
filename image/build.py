"""``python -m image.build``: the image without a Docker daemon or an image registry.

    python -m image.build [--dir .image-build] [--variant cpu|gpu] [--tag localhost/kopa:cpu] [--rebuild-base]

1. the Dockerfile is linted (``image.containerfile.lint``): a broken rule stops the build;
2. the base: ``mmdebstrap`` (Debian bookworm, needs the Debian mirror) into ``<dir>/base/bookworm.tar``, committed
   as ``localhost/kopa-base:bookworm`` (both kept and reused while the package list is the same);
3. the context: ``<dir>/context`` (the Dockerfile in buildah's form, the wheelhouse, signed bundles);
4. ``buildah bud`` with ``BASE=localhost/kopa-base:bookworm`` inside ``unshare -n``: the install step, the world
   build and everything else in the Dockerfile run in a network namespace with nothing in it.

Prints (and writes to ``<dir>/build-<variant>.json``) the times, the image id and its size. Needs root (buildah's
vfs storage and chroot isolation, ``unshare -n``), ``buildah`` and ``mmdebstrap`` (Debian packages).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import base, gpu
from .buildah import Buildah
from .containerfile import lint
from .context import signing_keys, stage

REPO = Path(__file__).resolve().parent.parent
TOOLS = ("buildah", "mmdebstrap", "unshare")


def default_tag(variant: str) -> str:
    return f"localhost/kopa:{variant}"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=REPO / ".image-build", help="every file the build writes")
    parser.add_argument("--variant", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--tag", help="image name (default localhost/kopa:<variant>)")
    parser.add_argument("--wheelhouse", type=Path, default=REPO / "wheelhouse")
    parser.add_argument("--rebuild-base", action="store_true", help="run mmdebstrap even when the tarball is there")
    args = parser.parse_args(argv)
    args.dir = args.dir.resolve()
    args.tag = args.tag or default_tag(args.variant)
    return args


def preflight(args: argparse.Namespace) -> None:
    """Stop (exit 2, or 3 for a GPU variant that cannot be made here) before anything is written."""
    problems = lint((REPO / "Dockerfile").read_text(encoding="utf-8"))
    if problems:
        raise SystemExit("Dockerfile breaks the offline image's rules:\n  " + "\n  ".join(problems))
    absent = [tool for tool in TOOLS if shutil.which(tool) is None]
    if absent:
        raise SystemExit(f"missing {', '.join(absent)}: `apt-get install -y buildah mmdebstrap` (Debian packages)")
    if args.variant == "gpu":
        reason = gpu.refusal(args.wheelhouse, args.dir)
        if reason:
            print(reason, file=sys.stderr)
            raise SystemExit(3)
        if gpu.missing_wheels(args.wheelhouse):
            subprocess.run(["make", "wheelhouse-gpu"], cwd=REPO, check=True)


def build(args: argparse.Namespace) -> dict:
    buildah = Buildah.under(args.dir)
    report: dict = {"variant": args.variant, "tag": args.tag}
    started = time.perf_counter()
    tarball, made = base.make_tarball(args.dir, rebuild=args.rebuild_base)
    if made or not buildah.exists(base.TAG):
        base.import_base(buildah, tarball)
    report |= {"base_made": made, "base_s": round(time.perf_counter() - started, 1),
               "base_tar_mb": round(tarball.stat().st_size / 2**20), "base_mb": round(buildah.size(base.TAG) / 2**20)}

    private_key, _ = signing_keys(args.dir)
    context = args.dir / "context"
    report |= stage(repo=REPO, wheelhouse=args.wheelhouse, context=context, private_key=private_key)

    started = time.perf_counter()
    subprocess.run(buildah.bud(context=context, containerfile=context / "Containerfile", tag=args.tag,
                               build_args={"BASE": base.TAG, "VARIANT": args.variant}), check=True)
    report["image_s"] = round(time.perf_counter() - started, 1)
    subprocess.run(buildah.cmd("rmi", "--prune"), capture_output=True)  # the image this one replaced, if any
    report |= {"image_id": buildah.inspect(args.tag)["FromImageID"], "image_bytes": buildah.size(args.tag)}
    report["image_gb"] = round(report["image_bytes"] / 1e9, 3)
    return report


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    preflight(args)
    report = build(args)
    (args.dir / f"build-{args.variant}.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
