"""The base root filesystem from Debian packages, with no image registry: ``mmdebstrap`` writes a tarball
(bookworm's python3 3.11, venv, CA certificates, and what the wheels and the Dockerfile need besides), and a
scratch container that holds it is committed as the image ``BASE`` names."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .buildah import Buildah

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
SOURCES = (f"deb {MIRROR} {SUITE} main", f"deb {MIRROR} {SUITE}-updates main",
           f"deb http://deb.debian.org/debian-security {SUITE}-security main")
# python3 (3.11 on bookworm), python3-venv, ca-certificates: what the appliance asked for. passwd: the
# Dockerfile's useradd. libstdc++6 and libgomp1: llama-cpp-python's shared libraries (it is compiled here, not
# a manylinux wheel, so it brings neither).
PACKAGES = ("python3", "python3-venv", "ca-certificates", "passwd", "libstdc++6", "libgomp1")
TAG = f"localhost/kopa-base:{SUITE}"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Documentation and translations are not installed (copyright files are).
DPKG_OPTS = ("path-exclude=/usr/share/man/*", "path-exclude=/usr/share/locale/*", "path-exclude=/usr/share/doc/*",
             "path-include=/usr/share/doc/*/copyright")


def mmdebstrap_command(tarball: Path, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """The essential variant (Essential: yes packages, no apt) plus ``packages``, written as a tarball."""
    return ["mmdebstrap", "--variant=essential", "--format=tar", f"--include={','.join(packages)}",
            *(f"--dpkgopt={opt}" for opt in DPKG_OPTS), SUITE, str(tarball), *SOURCES]


def stamp(packages: tuple[str, ...] = PACKAGES) -> str:
    """What the tarball was made from: a different list makes it again."""
    return " ".join([SUITE, *packages]) + "\n"


def make_tarball(folder: Path, *, rebuild: bool = False) -> tuple[Path, bool]:
    """``<folder>/base/<suite>.tar``, made when missing, stale or ``rebuild``; returns it and whether it was made."""
    tarball = folder / "base" / f"{SUITE}.tar"
    stamp_file = tarball.with_suffix(".packages")
    if tarball.exists() and not rebuild and stamp_file.exists() and stamp_file.read_text() == stamp():
        return tarball, False
    tarball.parent.mkdir(parents=True, exist_ok=True)
    partial = tarball.with_name(f"{SUITE}.partial.tar")
    subprocess.run(mmdebstrap_command(partial), check=True)
    partial.replace(tarball)
    stamp_file.write_text(stamp())
    return tarball, True


def import_commands(buildah: Buildah, container: str, tarball: Path, tag: str = TAG) -> list[list[str]]:
    """A scratch container, the tarball unpacked into it (``buildah add`` unpacks a local tar), its config, commit."""
    return [buildah.cmd("add", "--quiet", container, str(tarball), "/"),
            buildah.cmd("config", "--env", f"PATH={PATH}", "--cmd", "/usr/bin/python3",
                        "--label", f"org.opencontainers.image.description=Debian {SUITE} ({', '.join(PACKAGES)}), "
                        "made with mmdebstrap", container),
            buildah.cmd("commit", "--quiet", "--rm", "--format", "docker", container, tag)]


def import_base(buildah: Buildah, tarball: Path, tag: str = TAG) -> str:
    """Commit the tarball as ``tag`` (buildah 1.28 has no ``buildah import``); returns the image id."""
    container = buildah.call("from", "scratch")
    try:
        for command in import_commands(buildah, container, tarball, tag):
            subprocess.run(command, check=True, capture_output=True, text=True)
    except BaseException:
        subprocess.run(buildah.cmd("rm", container), capture_output=True)
        raise
    return buildah.call("inspect", "--type", "image", "--format", "{{.FromImageID}}", tag)
