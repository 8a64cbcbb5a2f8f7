"""The air-gapped image, built, run and shipped here, with the figures issue 26 asks for.

    python benchmarks/image_build.py [--dir .image-build] [--reuse-base] [--no-build] [--no-demo] [--no-ship]

Runs ``python -m image.build`` (the base made again with mmdebstrap unless ``--reuse-base``; the wheelhouse as
``make wheelhouse`` left it), ``python -m image.check`` (``kopa serve`` in the image, loopback only, non-root;
MCP; HEALTHCHECK; bundle signatures; ``kopa bench demo --no-local``) and ``python -m image.ship`` (archives,
sha256, SBOM), then prints base build time, image build time, image size (goal <= 2.5 GB), start to /healthz
(goal <= 5 s) and the bench demo's pass@1 (shipped: oracle 1.000, first-page 0.621). Needs root, buildah and
mmdebstrap; it takes minutes (the demo alone several).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOALS = {"image_gb": 2.5, "start_to_healthz_s": 5.0}


def step(module: str, *args: str) -> None:
    subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=REPO / ".image-build")
    parser.add_argument("--reuse-base", action="store_true", help="keep the base tarball (base time is then ~0)")
    parser.add_argument("--no-build", action="store_true", help="report on the image already built")
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--no-ship", action="store_true")
    args = parser.parse_args()
    folder = str(args.dir.resolve())
    if not args.no_build:
        step("image.build", "--dir", folder, *([] if args.reuse_base else ["--rebuild-base"]))
    check_args = ["--dir", folder, *(["--no-demo"] if args.no_demo else [])]
    checked = subprocess.run([sys.executable, "-m", "image.check", *check_args], cwd=REPO).returncode
    if not args.no_ship:
        step("image.ship", "--dir", folder)
    build = json.loads((args.dir / "build-cpu.json").read_text())
    check = json.loads((args.dir / "check-kopa-cpu.json").read_text())
    ship = json.loads((args.dir / "ship.json").read_text()) if (args.dir / "ship.json").exists() else {"files": {}}

    def verdict(value: float, goal: float) -> str:
        return f"{'met' if value <= goal else 'MISSED'} (goal <= {goal})"

    print("\nair-gapped image (CPU variant), measured on this machine")
    made = "made now" if build["base_made"] else "reused"
    print(f"base build (mmdebstrap + import)  {build['base_s']:>8} s   {made}, {build['base_mb']} MB")
    print(f"image build (buildah bud, unshare -n) {build['image_s']:>5} s")
    size = build["image_gb"]
    print(f"image size                       {size:>8} GB  {verdict(size, GOALS['image_gb'])}")
    start = check["start_to_healthz_s"]
    print(f"start to /healthz                {start:>8} s   {verdict(start, GOALS['start_to_healthz_s'])},"
          f" of which `buildah run` itself ~{check.get('buildah_run_overhead_s')} s")
    print(f"MCP tools listed / call          {check['mcp_tools']:>8}     {check['mcp_call']} "
          f"{'ok' if not check['mcp_call_error'] else 'FAILED'}")
    print(f"HEALTHCHECK rc                   {check['healthcheck_rc']:>8}")
    print(f"user id in the container         {check['uid']:>8}")
    signatures = check["signatures_verified"]
    print(f"bundle signatures verified       {sum(signatures.values())}/{len(signatures)}")
    if "demo_pass_at_1" in check:
        demo = check["demo_pass_at_1"]
        print(f"bench demo --no-local pass@1     oracle {demo['oracle']:.3f}, first-page {demo['first-page']:.3f}"
              f" ({check['demo_s']} s)")
    for name, info in ship["files"].items():
        print(f"{name:<32} {info['gb']:>8} GB  sha256 {info['sha256']}")
    if check.get("failures"):
        print("FAILURES: " + "; ".join(check["failures"]))
    raise SystemExit(checked)


if __name__ == "__main__":
    main()
