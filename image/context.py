"""The build context, staged in ``<dir>/context``: the Dockerfile in buildah's form, the wheelhouse as hard links
(no copy on one file system) and the cassette bundles, each version signed with the build's Ed25519 key so that
``kopa cassettes verify --public-key`` checks them inside the image. The repository's ``cassettes/`` is left as
it is; the key pair lives in ``<dir>/keys`` (made once, private key mode 0600) and never enters the image."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .containerfile import for_buildah

IGNORED = shutil.ignore_patterns(".lock", ".unsealed-*", ".tmp-*")


def kopa(*args: str) -> list[str]:
    """The repository's own CLI, run by the interpreter running this build."""
    return [sys.executable, "-m", "appliance", *args]


def bundle_versions(cassettes: Path) -> list[Path]:
    """Every sealed bundle version folder (one with a manifest) under ``cassettes``."""
    return sorted(manifest.parent for manifest in cassettes.glob("*/*/manifest.json"))


def signing_keys(folder: Path) -> tuple[Path, Path]:
    """``<folder>/keys/bundle-signing.{key,pub}.pem``, made with ``kopa cassettes keygen`` when missing."""
    private, public = folder / "keys" / "bundle-signing.key.pem", folder / "keys" / "bundle-signing.pub.pem"
    if not private.exists():
        private.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(kopa("cassettes", "keygen", str(private), str(public)), check=True, capture_output=True)
    return private, public


def link_tree(source: Path, target: Path) -> int:
    """Hard-link (or, across file systems, copy) every file of ``source`` into ``target``; returns the bytes."""
    total = 0
    for path in sorted(source.rglob("*")):
        if not path.is_file():
            continue
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, destination)
        except OSError:
            shutil.copy2(path, destination)
        total += path.stat().st_size
    return total


def stage(*, repo: Path, wheelhouse: Path, context: Path, private_key: Path) -> dict:
    """Fill ``context`` (emptied first); returns what went in."""
    if not any(wheelhouse.glob("*.whl")):
        raise SystemExit(f"{wheelhouse} has no wheels: run `make wheelhouse` first")
    shutil.rmtree(context, ignore_errors=True)
    context.mkdir(parents=True)
    (context / "Containerfile").write_text(for_buildah((repo / "Dockerfile").read_text(encoding="utf-8")),
                                           encoding="utf-8")
    wheel_bytes = link_tree(wheelhouse, context / "wheelhouse")
    shutil.copytree(repo / "cassettes", context / "cassettes", ignore=IGNORED)
    versions = bundle_versions(context / "cassettes")
    for version in versions:
        subprocess.run(kopa("cassettes", "sign", str(version), "--key", str(private_key)), check=True,
                       capture_output=True)
    return {"wheels": len(list((context / "wheelhouse").glob("*.whl"))), "wheelhouse_mb": round(wheel_bytes / 2**20),
            "bundle_versions": [f"{v.parent.name}@{v.name}" for v in versions]}
