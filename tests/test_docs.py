"""The documentation checks itself: the site builds with --strict, the configuration reference is the settings',
every `kopa` command line in a code block uses only options the CLI has, and README's test command is CI's."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from pydantic import BaseModel

from appliance.cli import app
from appliance.config import KopaSettings

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _config_reference():
    spec = importlib.util.spec_from_file_location("config_reference", REPO / "scripts" / "config_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, timeout=120)


# --- mkdocs --strict --------------------------------------------------------------------------------------------


def test_docs_build_strict(tmp_path: Path) -> None:
    result = _build(REPO / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "configuration.html").exists()


def test_docs_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    page = tmp_path / "docs" / "sandbox.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n", encoding="utf-8")
    result = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-page.md" in result.stdout + result.stderr
    page.write_text(page.read_text(encoding="utf-8").replace("no-such-page.md", "bench.md#no-such-heading"))
    result = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-heading" in result.stdout + result.stderr


def test_docs_link_nothing_outside_the_repository() -> None:
    for path in [*DOC_FILES, REPO / "CHANGELOG.md"]:
        assert "../shared" not in path.read_text(encoding="utf-8"), path.name


# --- the configuration reference --------------------------------------------------------------------------------


def _leaf_env_vars(model: type[BaseModel], prefix: str = "KOPA_") -> list[str]:
    names = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names.extend(_leaf_env_vars(annotation, f"{prefix}{name.upper()}__"))
        else:
            names.append(f"{prefix}{name.upper()}")
    return names


def test_configuration_reference_is_generated_from_the_settings() -> None:
    page = REPO / "docs" / "configuration.md"
    assert page.read_text(encoding="utf-8") == _config_reference().render(), (
        "docs/configuration.md is out of date: run python scripts/config_reference.py")


def test_configuration_reference_lists_every_field() -> None:
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    names = _leaf_env_vars(KopaSettings)
    assert len(names) > 50 and "KOPA_GATEWAY__LIMITS__MAX_STRING_CHARS" in names
    missing = [name for name in names if f"`{name}`" not in text]
    assert not missing, f"settings missing from docs/configuration.md: {missing}"


# --- kopa command lines against the CLI -------------------------------------------------------------------------

_FENCE = re.compile(r"^```([\w-]*)\s*$")
_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def command_lines(text: str) -> list[str]:
    """Every command in ``text``'s fenced code blocks that starts with ``kopa`` (after VAR=value assignments), with
    its indented continuation lines joined and its ``# comment`` dropped."""
    commands: list[str] = []
    in_block, language = False, ""
    for line in text.splitlines():
        fence = _FENCE.match(line.strip())
        if fence:
            in_block, language = (False, "") if in_block else (True, fence.group(1))
            continue
        if not in_block or language not in ("", "bash", "sh", "shell", "console"):
            continue
        code = re.split(r"(?:^|\s)#", line, maxsplit=1)[0].rstrip()
        if not code.strip():
            continue
        if line[:1].isspace() and commands and commands[-1] is not None:
            commands[-1] += " " + code.strip()  # a continuation line of the command above
            continue
        words = code.split()
        while words and _ASSIGNMENT.match(words[0]):
            words.pop(0)
        commands.append(" ".join(words) if words and words[0] == "kopa" else None)
    return [c.replace("\\ ", " ") for c in commands if c]


def check_command(line: str) -> list[str]:
    """What in one ``kopa …`` line the CLI does not have: an unknown sub-command or option (empty: all known)."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    words = [w.strip("[]") for w in words[1:]]
    command = typer.main.get_command(app)
    path = ["kopa"]
    while hasattr(command, "commands"):
        if not words or words[0].startswith("-"):
            return [] if not words else [f"{' '.join(path)}: options given to a group: {words[0]}"]
        name = words.pop(0)
        if name not in command.commands:
            return [f"{' '.join(path)} has no sub-command {name!r}"]
        command, path = command.commands[name], [*path, name]
    known = {"--help"} | {o for p in command.params if p.param_type_name == "option"
                          for o in (*p.opts, *p.secondary_opts)}
    problems = []
    for word in words:
        for part in word.split("|"):
            if re.match(r"^--?[A-Za-z]", part):
                option = part.split("=", 1)[0]
                if option not in known:
                    problems.append(f"{' '.join(path)} has no option {option}")
    return problems


def test_command_lines_are_found() -> None:
    lines = command_lines("intro\n```bash\nkopa serve --port 1   # comment\nKOPA_HOME=x kopa bench run --agent oracle\n"
                          "                [--rollouts 4]\nmake demo\n```\n```toml\nkopa = 1\n```\n")
    assert lines == ["kopa serve --port 1", "kopa bench run --agent oracle [--rollouts 4]"]


def test_an_invented_option_is_caught() -> None:
    assert check_command("kopa bench run --agent oracle [--rollouts 4] [--seeds 8 | 0,3,5]") == []
    assert check_command("kopa bench run --agent oracle --invented-option 3") == [
        "kopa bench run has no option --invented-option"]
    assert check_command("kopa bench run [--upstream replay|--invented]") == ["kopa bench run has no option --invented"]
    assert check_command("kopa cassettes nosuch REF") == ["kopa cassettes has no sub-command 'nosuch'"]
    assert check_command("kopa edge synth -n 5 -x") == ["kopa edge synth has no option -x"]


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.name)
def test_kopa_command_lines_use_only_real_options(path: Path) -> None:
    problems = [f"{line}\n    -> {p}" for line in command_lines(path.read_text(encoding="utf-8"))
                for p in check_command(line)]
    assert not problems, "\n".join(problems)


def test_docs_have_kopa_command_lines() -> None:
    assert sum(len(command_lines(p.read_text(encoding="utf-8"))) for p in DOC_FILES) > 50


# --- README's two commands --------------------------------------------------------------------------------------


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert ("make demo    # main job on the embedded defaults: KOPA-Bench replayed from the shipped bundle, three "
            "agents, HTML reports\nmake test    # the test suite (CI runs exactly this through .ci/run)\n") in readme
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert ci[-1] == "make test"
