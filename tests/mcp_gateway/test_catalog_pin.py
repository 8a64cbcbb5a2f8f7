"""A bundle pins the tool catalog it was recorded with; replay compares it with the catalog it runs.

Real parts: the committed catalog (one tool's parameter renamed for the other side), the sandbox upstream
in-process for the recording, bundles in a temporary cassettes folder, `kopa serve` as a subprocess.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from bench.taskset.build import DEFAULT_CASSETTES
from mcp_gateway.catalog import Catalog, load_catalog
from mcp_gateway.gateway import open_gateway
from recorder import CassetteStore, CatalogMismatchError, diff_catalogs
from recorder.cassette import CorruptBundleError
from recorder.catalog_pin import CATALOG_PART
from recorder.drift import compare
from recorder.signing import SignatureError, generate_keypair, sign_bundle, verify_bundle_signature
from tests.appliance.test_cli import kopa
from tests.conftest import TEST_DATA_DIR, sandbox_upstream

TOOL, OLD_PARAM, NEW_PARAM = "list_tollbooths", "unitName", "tollboothName"
CALL = (TOOL, {"numOfRows": 7})


def renamed(catalog: Catalog, tool: str = TOOL, old: str = OLD_PARAM, new: str = NEW_PARAM) -> Catalog:
    """``catalog`` with one parameter of ``tool`` renamed (its type and description kept)."""
    def edit(spec):
        if spec.name != tool:
            return spec
        params = tuple(p.model_copy(update={"name": new}) if p.name == old else p for p in spec.params)
        return spec.model_copy(update={"params": params})
    return Catalog((edit(spec), catalog.source(spec.name)) for spec in catalog)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, world, catalog) -> Path:
    """One call recorded through the gateway with the committed catalog: the cassettes folder."""
    tmp = tmp_path_factory.mktemp("cassettes")

    async def record():
        gw = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="record", cassettes=tmp,
                          bundle="pinned", catalog=catalog)
        try:
            assert (await gw.runtime.call(*CALL, "s")).records
        finally:
            await gw.aclose()

    asyncio.run(record())
    return tmp


def test_a_recording_pins_the_catalog_it_served(recorded, catalog):
    bundle = CassetteStore(recorded).open("pinned")
    assert bundle.manifest.catalog == {"format": "kopa-catalog/1", "version": catalog.version, "tools": len(catalog)}
    assert CATALOG_PART in bundle.manifest.parts
    pin = bundle.catalog_pin()
    assert pin is not None and pin.version == catalog.version
    assert pin.tools[TOOL]["input_schema"] == catalog.get(TOOL).input_schema()


async def test_replay_with_the_same_catalog_is_silent(recorded, catalog):
    gw = open_gateway(upstream="replay", mode="replay", cassettes=recorded, bundle="pinned", catalog=catalog)
    try:
        assert gw.catalog_notice is None and gw.catalog_diff is not None and not gw.catalog_diff
    finally:
        await gw.aclose()


async def test_replay_after_a_parameter_rename_warns_naming_the_tool_and_the_parameter(recorded, catalog):
    gw = open_gateway(upstream="replay", mode="replay", cassettes=recorded, bundle="pinned",
                      catalog=renamed(catalog))
    try:
        assert gw.catalog_notice is not None
        assert f"1 tool(s) changed: {TOOL} (parameter '{OLD_PARAM}' renamed to '{NEW_PARAM}')" in gw.catalog_notice
        assert "added" not in gw.catalog_notice.split(": ", 1)[1].split(".")[0]  # no tool added or removed
        assert (await gw.runtime.call(*CALL, "s")).records  # a warning, not a refusal: the recorded call replays
    finally:
        await gw.aclose()


def test_strict_catalog_refuses_to_open_naming_the_change(recorded, catalog):
    with pytest.raises(CatalogMismatchError, match=f"parameter '{OLD_PARAM}' renamed to '{NEW_PARAM}'"):
        open_gateway(upstream="replay", mode="replay", cassettes=recorded, bundle="pinned", catalog=renamed(catalog),
                     strict_catalog=True)


def test_kopa_serve_strict_catalog_exits_2_with_the_message(recorded, catalog, tmp_path):
    # a bundle pinning another catalog than the committed one `kopa serve` runs: the same calls, the renamed pin
    store = CassetteStore(tmp_path)
    source = CassetteStore(recorded).open("pinned")
    store.write("other", list(source.interactions()), parent=None, catalog=renamed(catalog).pin())
    env = {"KOPA_RECORDER__CASSETTES": str(tmp_path), "KOPA_GATEWAY__TOKENS": '["t"]'}
    result = kopa("serve", "--upstream", "replay", "--bundle", "other", "--strict-catalog", "--port", "1", env=env)
    assert result.returncode == 2, result.stderr
    assert f"parameter '{NEW_PARAM}' renamed to '{OLD_PARAM}'" in result.stderr and TOOL in result.stderr
    assert "refused: --strict-catalog" in result.stderr and "Traceback" not in result.stderr


def test_the_pinned_catalog_is_covered_by_the_signature(recorded, catalog, tmp_path):
    version = CassetteStore(recorded).resolve("pinned").folder
    generate_keypair(tmp_path / "k.pem", tmp_path / "k.pub.pem")
    folder = tmp_path / "signed"
    shutil.copytree(version, folder)
    for part in folder.iterdir():
        part.chmod(0o644)
    sign_bundle(folder, tmp_path / "k.pem")
    assert verify_bundle_signature(folder, tmp_path / "k.pub.pem").catalog["version"] == catalog.version

    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["catalog"]["version"] = renamed(catalog).version  # the fingerprint changed, nothing else
    (folder / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
    with pytest.raises(SignatureError):
        verify_bundle_signature(folder, tmp_path / "k.pub.pem")

    shutil.copy(version / "manifest.json", folder / "manifest.json")  # the signed manifest, another pin part
    (folder / CATALOG_PART).write_bytes(renamed(catalog).pin().to_bytes())
    with pytest.raises(CorruptBundleError, match=CATALOG_PART):
        verify_bundle_signature(folder, tmp_path / "k.pub.pem")


async def test_a_bundle_pinning_no_catalog_replays_with_a_notice():
    """The shipped bundle was recorded before catalogs were pinned (its version id, which the tasks pin, stays)."""
    gw = open_gateway(upstream="replay", mode="replay", profile="chat", cassettes=DEFAULT_CASSETTES,
                      bundle="kopa-default", strict_catalog=True)
    try:
        assert gw.catalog_diff is None
        assert "pins no tool catalog" in (gw.catalog_notice or "")
        result = await gw.runtime.call("get_rest_area_fuel_prices",
                                       {"routeName": "남해선", "pageNo": 1, "numOfRows": 1000}, "s")
        assert result.outcome == "semantic_success", result
    finally:
        await gw.aclose()


def test_drift_between_two_bundles_reports_catalog_changes_beside_the_data(recorded, catalog, tmp_path):
    store = CassetteStore(tmp_path)
    source = CassetteStore(recorded).open("pinned")
    store.write("other", list(source.interactions()), parent=None, catalog=renamed(catalog).pin())
    report = compare(source, store.open("other"))
    assert not report.has_drift  # the same data
    assert report.catalog == {"old": catalog.version, "new": renamed(catalog).version,
                              "changes": diff_catalogs(catalog.pin(), renamed(catalog).pin()).as_json()}
    assert f"- changed: {TOOL} (parameter '{OLD_PARAM}' renamed to '{NEW_PARAM}')" in report.to_markdown()
    old = CassetteStore(DEFAULT_CASSETTES).open("kopa-default", verify=False)
    assert compare(old, source).catalog == {"old": None, "new": catalog.version, "changes": None}
