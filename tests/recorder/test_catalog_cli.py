"""The pinned tool catalog as the CLI reports it: `kopa bench run` (a warning; `--strict-catalog` exits 2 naming the
change), `kopa bench compare` (runs shown different catalogs), `kopa drift` (two bundles, and `--live-sample`
against the catalog served now).

Real parts: `kopa` as a subprocess (exit codes and stderr as an operator sees them) or typer's runner, bundles
recorded from the cached sandbox world into temporary cassettes folders (the episode-test bundle of
``tests/bench/conftest.py``, and `kopa record`), the committed catalog. A bundle "pinning another catalog" is a
version with the same interactions whose pin has one parameter of ``list_tollbooths`` renamed.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from appliance.cli import app
from bench.agents import OracleAgent
from bench.runner import RUN_FILE, run_benchmark
from bench.task import load_tasks
from mcp_gateway.catalog import Catalog, load_catalog
from mcp_gateway.gateway import open_gateway
from recorder import CassetteStore
from tests.appliance.test_cli import kopa
from tests.bench import conftest as bench_fixtures
from tests.bench.conftest import pin_tasks
from tests.conftest import TEST_DATA_DIR
from tests.mcp_gateway.test_catalog_pin import NEW_PARAM, OLD_PARAM, TOOL, renamed

episode_tasks = bench_fixtures.episode_tasks
recorded_bundle = bench_fixtures.recorded_bundle
UNUSED_TOOL = "search_school_info"  # no episode task calls it: a catalog differing there plays the same episodes


def redescribed(catalog: Catalog, tool: str = UNUSED_TOOL) -> Catalog:
    """``catalog`` with ``tool``'s description changed (what a model reads, nothing it calls)."""
    return Catalog((spec.model_copy(update={"description_ko": spec.description_ko + " (개정)"})
                    if spec.name == tool else spec, catalog.source(spec.name)) for spec in catalog)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def repin(cassettes: Path, name: str, pin) -> str:
    """A new HEAD version of ``name`` with HEAD's interactions and ``pin`` pinned (None: no catalog): its id."""
    store = CassetteStore(cassettes)
    head = store.open(name)
    return store.write(name, list(head.interactions()), parent=head.version, catalog=pin).version


def bench_env(tmp_path: Path) -> dict[str, str]:
    return {"KOPA_METADB__URL": f"sqlite:///{tmp_path / 'kopa.db'}", "COLUMNS": "250"}


# ------------------------------------------------------------------------------------------------ kopa bench run


@pytest.fixture(scope="module")
def repinned(recorded_bundle, catalog, tmp_path_factory) -> tuple[Path, Path, str]:
    """(cassettes, a task file pinned to a version whose pin renames list_tollbooths' unitName, that version)."""
    folder = tmp_path_factory.mktemp("repinned")
    cassettes = folder / "cassettes"
    shutil.copytree(recorded_bundle[0], cassettes)
    version = repin(cassettes, bench_fixtures.BUNDLE, renamed(catalog).pin())
    _, tasks, ref = pin_tasks(cassettes, folder)
    assert ref.endswith(version)
    return cassettes, tasks, version


def bench_run(cassettes: Path, tasks: Path, run_dir: Path, *extra: str, env: dict[str, str]):
    return kopa("bench", "run", "--agent", "oracle", "--tasks", str(tasks), "--rollouts", "1", "--seeds", "1",
                "--cassettes", str(cassettes), "--run-dir", str(run_dir), *extra, env=env)


def test_bench_run_strict_catalog_exits_2_naming_the_changed_tool_and_plays_nothing(repinned, tmp_path):
    cassettes, tasks, version = repinned
    done = bench_run(cassettes, tasks, tmp_path / "run", "--strict-catalog", env=bench_env(tmp_path))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"bundle {bench_fixtures.BUNDLE}@{version} was recorded with tool catalog" in done.stderr
    # the bundle pins the renamed parameter; the running catalog has the committed name
    assert f"1 tool(s) changed: {TOOL} (parameter '{NEW_PARAM}' renamed to '{OLD_PARAM}')" in done.stderr
    assert "refused: --strict-catalog" in done.stderr
    assert not (tmp_path / "run" / "episodes.jsonl").exists()


def test_bench_run_without_strict_catalog_warns_once_and_records_both_catalogs(repinned, catalog, tmp_path):
    cassettes, tasks, _ = repinned
    done = bench_run(cassettes, tasks, tmp_path / "run", env=bench_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("warning: bundle ") == 1, done.stderr
    assert f"{TOOL} (parameter '{NEW_PARAM}' renamed to '{OLD_PARAM}')" in done.stderr
    assert "--strict-catalog refuses to start on a difference" in done.stderr
    config = json.loads((tmp_path / "run" / RUN_FILE).read_text(encoding="utf-8"))["config"]
    assert (config["catalog"], config["bundle_catalog"]) == (catalog.version, renamed(catalog).version)


def test_bench_run_strict_catalog_with_the_same_catalog_runs_silently(recorded_bundle, catalog, tmp_path):
    cassettes, tasks, _ = pin_tasks(recorded_bundle[0], tmp_path)  # recorded by this code: the same catalog
    done = bench_run(cassettes, tasks, tmp_path / "run", "--strict-catalog", env=bench_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "tool catalog" not in done.stderr, done.stderr
    config = json.loads((tmp_path / "run" / RUN_FILE).read_text(encoding="utf-8"))["config"]
    assert config["catalog"] == config["bundle_catalog"] == catalog.version


# ------------------------------------------------------------------------------------------------ kopa bench compare


@pytest.fixture(scope="module")
def two_catalog_runs(recorded_bundle, catalog, tmp_path_factory) -> dict[str, Path]:
    """The oracle over the episode tasks twice: shown the committed catalog, and one tool's description changed."""
    folder = tmp_path_factory.mktemp("catalog-runs")
    cassettes, tasks_file, ref = pin_tasks(recorded_bundle[0], folder)
    tasks = load_tasks(tasks_file)

    async def run(name: str, shown: Catalog) -> None:
        gw = open_gateway(upstream="replay", mode="replay", profile="bench", bundle=ref, home=TEST_DATA_DIR,
                          cassettes=cassettes, catalog=shown)
        try:
            await run_benchmark(tasks, OracleAgent(), gw, rollouts=1, seeds=[0], out_dir=folder / name,
                                tasks_file=tasks_file)
        finally:
            await gw.aclose()

    asyncio.run(run("a", catalog))
    asyncio.run(run("b", redescribed(catalog)))
    return {"a": folder / "a", "b": folder / "b"}


def compare(a: Path, b: Path):
    return CliRunner().invoke(app, ["bench", "compare", str(a), str(b)], env={"COLUMNS": "250"})


def test_bench_compare_warns_when_the_runs_were_shown_different_catalogs(two_catalog_runs, catalog):
    a, b = two_catalog_runs["a"], two_catalog_runs["b"]
    assert json.loads((b / RUN_FILE).read_text(encoding="utf-8"))["config"]["catalog"] == redescribed(catalog).version
    done = compare(a, b)
    assert done.exit_code == 0, done.output
    warning = (f"warning: different tool catalogs: A was shown catalog {catalog.version}, B catalog "
               f"{redescribed(catalog).version}")
    assert warning in " ".join(done.stderr.split()), done.stderr
    assert "| pass@1 | 100.0 | 100.0 |" in done.stdout  # the comparison itself is still made


def test_bench_compare_is_silent_on_the_same_catalog_and_says_when_one_run_kept_none(two_catalog_runs, tmp_path):
    a = two_catalog_runs["a"]
    same = compare(a, a)
    assert same.exit_code == 0 and "catalog" not in same.stderr, same.stderr
    old = tmp_path / "old"  # a run made before run.json kept the catalog
    shutil.copytree(a, old)
    meta = json.loads((old / RUN_FILE).read_text(encoding="utf-8"))
    del meta["config"]["catalog"]
    (old / RUN_FILE).write_text(json.dumps(meta), encoding="utf-8")
    done = compare(old, a)
    assert done.exit_code == 0, done.output
    assert "warning: run A records no tool catalog" in " ".join(done.stderr.split()), done.stderr


# ------------------------------------------------------------------------------------------------ kopa drift


@pytest.fixture(scope="module")
def drift_cassettes(tmp_path_factory, catalog) -> Path:
    """``demo`` recorded by `kopa record` (the committed catalog pinned), ``renamed`` (its interactions, the
    renamed pin) and ``unpinned`` (its interactions, no pin: a bundle from before catalogs were pinned)."""
    folder = tmp_path_factory.mktemp("drift")
    calls = folder / "calls.jsonl"
    calls.write_text(json.dumps({"tool": TOOL, "args": {"numOfRows": 3}}) + "\n", encoding="utf-8")
    cassettes = folder / "cassettes"
    done = kopa("record", "--calls", str(calls), "--bundle", "demo", env=drift_env(cassettes))
    assert done.returncode == 0, done.stderr
    store = CassetteStore(cassettes)
    interactions = list(store.open("demo").interactions())
    store.write("renamed", interactions, parent=None, catalog=renamed(catalog).pin())
    store.write("unpinned", interactions, parent=None)
    assert store.open("demo").catalog_pin().version == catalog.version
    assert store.open("unpinned").catalog_pin() is None
    return cassettes


def drift_env(cassettes: Path) -> dict[str, str]:
    return {"KOPA_RECORDER__CASSETTES": str(cassettes)}


def drift(cassettes: Path, *args: str) -> str:
    done = kopa("drift", *args, env=drift_env(cassettes))
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_drift_between_two_bundles_reports_the_renamed_parameter_beside_no_data_drift(drift_cassettes, catalog):
    report = json.loads(drift(drift_cassettes, "demo", "renamed", "--json"))
    assert report["entries"] == []
    assert report["catalog"]["old"] == catalog.version and report["catalog"]["new"] == renamed(catalog).version
    assert report["catalog"]["changes"]["changed"] == [
        {"tool": TOOL, "changes": [f"parameter '{OLD_PARAM}' renamed to '{NEW_PARAM}'"]}]
    text = drift(drift_cassettes, "demo", "renamed")
    assert "## Tool catalog" in text
    assert f"- changed: {TOOL} (parameter '{OLD_PARAM}' renamed to '{NEW_PARAM}')" in text


def test_drift_live_sample_compares_the_bundles_pin_with_the_catalog_served_now(drift_cassettes, catalog, tmp_path):
    report = json.loads(drift(drift_cassettes, "--live-sample", "1", "renamed", "--world", "v1", "--json"))
    assert report["entries"] == []  # the same world: no data drift
    assert (report["catalog"]["old"], report["catalog"]["new"]) == (renamed(catalog).version, catalog.version)
    assert report["catalog"]["changes"]["changed"] == [
        {"tool": TOOL, "changes": [f"parameter '{NEW_PARAM}' renamed to '{OLD_PARAM}'"]}]
    assert report["catalog"]["changes"]["added"] == report["catalog"]["changes"]["removed"] == []

    out = tmp_path / "r.md"
    drift(drift_cassettes, "--live-sample", "1", "renamed", "--world", "v1", "--out", str(out))
    text = out.read_text(encoding="utf-8")
    assert f"Catalog `{renamed(catalog).version}` → `{catalog.version}`." in text
    assert f"- changed: {TOOL} (parameter '{NEW_PARAM}' renamed to '{OLD_PARAM}')" in text


def test_drift_live_sample_says_same_catalog_or_that_the_bundle_pins_none(drift_cassettes, catalog):
    same = drift(drift_cassettes, "--live-sample", "1", "demo", "--world", "v1")
    assert f"Same catalog on both sides ({catalog.version})." in same
    unpinned = json.loads(drift(drift_cassettes, "--live-sample", "1", "unpinned", "--world", "v1", "--json"))
    assert unpinned["catalog"] == {"old": None, "new": catalog.version, "changes": None}
    text = drift(drift_cassettes, "--live-sample", "1", "unpinned", "--world", "v1")
    assert "OLD pins no tool catalog (recorded before catalogs were pinned): catalog changes unknown." in text
