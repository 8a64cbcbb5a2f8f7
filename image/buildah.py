"""buildah command lines on one storage folder: ``<dir>/storage`` (vfs driver: no overlay, no fuse) and
``<dir>/runroot``. Every command is built here, so the tests read the exact argv."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Buildah:
    root: Path
    runroot: Path
    driver: str = "vfs"

    @classmethod
    def under(cls, folder: Path) -> Buildah:
        return cls(folder / "storage", folder / "runroot")

    def cmd(self, *args: str) -> list[str]:
        return ["buildah", "--root", str(self.root), "--runroot", str(self.runroot), "--storage-driver", self.driver,
                *args]

    def bud(self, *, context: Path, containerfile: Path, tag: str, build_args: dict[str, str]) -> list[str]:
        """``buildah bud`` in chroot isolation, docker format (the OCI format has no HEALTHCHECK), no pulls, inside
        ``unshare -n``: a network namespace with nothing in it, so a step that fetches fails."""
        args = [arg for name, value in build_args.items() for arg in ("--build-arg", f"{name}={value}")]
        return ["unshare", "-n", *self.cmd("bud", "--isolation", "chroot", "--format", "docker", "--pull-never",
                                           *args, "-f", str(containerfile), "-t", tag, str(context))]

    def run(self, container: str, argv: list[str], *, env: dict[str, str] | None = None,
            volumes: dict[Path, str] | None = None, user: str | None = None) -> list[str]:
        """``buildah run`` of ``argv`` in a working container: the image's user, env and workdir unless told."""
        options = ["--isolation", "chroot"]
        options += [arg for name, value in (env or {}).items() for arg in ("--env", f"{name}={value}")]
        options += [arg for host, inside in (volumes or {}).items() for arg in ("--volume", f"{host}:{inside}:ro")]
        if user:
            options += ["--user", user]
        return self.cmd("run", *options, container, "--", *argv)

    def push(self, image: str, destination: str) -> list[str]:
        return self.cmd("push", "--quiet", image, destination)

    # -- calls ---------------------------------------------------------------------------------------------------

    def call(self, *args: str) -> str:
        return subprocess.run(self.cmd(*args), check=True, capture_output=True, text=True).stdout.strip()

    def exists(self, image: str) -> bool:
        return subprocess.run(self.cmd("inspect", "--type", "image", image), capture_output=True).returncode == 0

    def inspect(self, image: str) -> dict:
        return json.loads(self.call("inspect", "--type", "image", image))

    def size(self, image: str) -> int:
        """The image's size in bytes: its layers unpacked (the sizes in its manifest, in containers-storage)."""
        manifest = json.loads(self.inspect(image)["Manifest"])
        return sum(int(layer["size"]) for layer in manifest["layers"])
