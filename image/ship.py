"""``python -m image.ship``: the image as files to carry to an air-gapped site.

    python -m image.ship [--dir .image-build] [--tag localhost/kopa:cpu]

Writes to ``<dir>/dist``: ``kopa-<variant>.oci.tar`` (``buildah push ... oci-archive:``; OCI has no HEALTHCHECK
field, so that archive loses it), ``kopa-<variant>.docker.tar`` (``docker-archive:``, ``docker load``-able, with
the HEALTHCHECK), ``kopa-<variant>.sbom.cdx.json`` (CycloneDX, the image's Python packages), the public key the
bundles were signed with (``bundle-signing.pub.pem``; the private key stays in ``<dir>/keys``) and ``SHA256SUMS``.
Prints their sizes and sha256.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from recorder.cassette.bundle import file_sha256

from .buildah import Buildah
from .sbom import make_sbom

REPO = Path(__file__).resolve().parent.parent


def destinations(dist: Path, tag: str) -> dict[str, str]:
    """The archive files and buildah's destination for each (the name inside carries the tag)."""
    name = tag.rsplit("/", 1)[-1]  # kopa:cpu
    stem = name.replace(":", "-")
    return {f"{stem}.oci.tar": f"oci-archive:{dist / f'{stem}.oci.tar'}:{name}",
            f"{stem}.docker.tar": f"docker-archive:{dist / f'{stem}.docker.tar'}:{name}"}


def ship(folder: Path, tag: str, wheelhouse: Path) -> dict:
    buildah = Buildah.under(folder)
    dist = folder / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    files = {}
    for filename, destination in destinations(dist, tag).items():
        (dist / filename).unlink(missing_ok=True)
        subprocess.run(buildah.push(tag, destination), check=True)
        files[filename] = dist / filename
    sbom = make_sbom(buildah, tag, wheelhouse=wheelhouse, folder=folder)
    stem = next(iter(files)).removesuffix(".oci.tar")
    sbom_path = dist / f"{stem}.sbom.cdx.json"
    sbom_path.write_text(json.dumps(sbom, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    files[sbom_path.name] = sbom_path
    public_key = folder / "keys" / "bundle-signing.pub.pem"  # the bundles' signing key: verify them at the site
    if public_key.exists():
        files[public_key.name] = dist / public_key.name
        files[public_key.name].write_bytes(public_key.read_bytes())
    sums = {name: file_sha256(path) for name, path in files.items()}
    (dist / "SHA256SUMS").write_text("".join(f"{digest}  {name}\n" for name, digest in sums.items()), encoding="utf-8")
    return {"dist": str(dist), "sbom_components": len(sbom.get("components", [])), "sbom_spec": sbom.get("specVersion"),
            "files": {name: {"bytes": path.stat().st_size, "gb": round(path.stat().st_size / 1e9, 3),
                             "sha256": sums[name]} for name, path in files.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=REPO / ".image-build")
    parser.add_argument("--tag", default="localhost/kopa:cpu")
    parser.add_argument("--wheelhouse", type=Path, default=REPO / "wheelhouse")
    args = parser.parse_args(argv)
    report = ship(args.dir.resolve(), args.tag, args.wheelhouse.resolve())
    (args.dir / "ship.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
