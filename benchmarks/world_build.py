"""World build and reopen times (goals on 2 cores: build <= 3 minutes, reopen <= 2 s).

    python benchmarks/world_build.py [--version v1] [--scale 1.0]

Builds into a fresh temporary folder (never reuses a cache), then reopens the file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import World, ensure_world  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", default="v1")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        started = time.perf_counter()
        path = ensure_world(home, version=args.version, scale=args.scale)
        built = time.perf_counter() - started
        started = time.perf_counter()
        world = World.open(path)
        sizes = world.table_sizes()
        reopened = time.perf_counter() - started
        world.close()
        size_mb = path.stat().st_size / 2**20
    print(f"world {args.version} scale {args.scale:g}: {len(sizes)} tables, {sum(sizes.values()):,} rows, "
          f"{size_mb:.0f} MiB")
    print(f"build  {built:6.1f} s   (goal <= 180 s)")
    print(f"reopen {reopened:6.3f} s   (goal <= 2 s)")


if __name__ == "__main__":
    main()
