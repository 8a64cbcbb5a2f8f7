"""The CycloneDX SBOM of the image's Python packages, made offline with ``cyclonedx-py environment``.

The tool (cyclonedx-bom, the ``sbom`` extra, which ``make wheelhouse`` wheels beside the dev extra) is installed from the wheelhouse into
``<dir>/sbom-tool`` (``pip install --no-index --target``), mounted read-only into a working container of the image
and run there by the base's own ``/usr/bin/python3`` (its path set inside the script, not by ``PYTHONPATH``, so the
venv it reads sees nothing of the tool) against the image's venv ``/opt/kopa``: what it lists is exactly what the
image holds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .buildah import Buildah

TOOL = "cyclonedx-bom==7.5.0"
INSIDE = "/run/sbom-tool"
VENV = "/opt/kopa"


def install_tool_command(wheelhouse: Path, target: Path) -> list[str]:
    return [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(wheelhouse),
            "--target", str(target), "--no-compile", TOOL]


def runner(venv: str = VENV) -> list[str]:
    """``cyclonedx-py environment`` on the image's venv, JSON, reproducible (no timestamp or serial number)."""
    code = ("import runpy, sys; sys.path.insert(0, %r); "
            "sys.argv = ['cyclonedx-py', 'environment', '--output-format', 'JSON', '--output-reproducible', "
            "'--mc-type', 'application', %r]; runpy.run_module('cyclonedx_py', run_name='__main__')") % (INSIDE, venv)
    return ["/usr/bin/python3", "-c", code]


def make_sbom(buildah: Buildah, image: str, *, wheelhouse: Path, folder: Path) -> dict:
    tool = folder / "sbom-tool"
    if not (tool / "cyclonedx_py").exists():
        subprocess.run(install_tool_command(wheelhouse, tool), check=True)
    container = buildah.call("from", "--pull-never", image)
    try:
        out = subprocess.run(buildah.run(container, runner(), volumes={tool: INSIDE}), check=True,
                             capture_output=True, text=True).stdout
    finally:
        subprocess.run(buildah.cmd("rm", container), capture_output=True)
    sbom = json.loads(out)
    return sbom
