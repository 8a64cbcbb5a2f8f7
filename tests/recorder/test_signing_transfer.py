"""Signed bundles and importing them into another cassettes folder (the air-gapped transfer).

Real parts: a bundle recorded through the recorder's transport from the in-process sandbox,
real Ed25519 keys in PEM files, real copies of version folders damaged byte by byte.
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import stat
from pathlib import Path

import httpx
import pytest

from recorder import Bundle, CassetteStore, CorruptBundleError, RecorderTransport, Routes
from recorder.cassette import BODIES, INDEX, MANIFEST, SIGNATURE
from recorder.signing import SignatureError, generate_keypair, sign_bundle, verify_bundle_signature
from recorder.transfer import import_bundle
from sandbox import default_keys

KEYS = default_keys()
ORIGIN = "http://sandbox"


def requests_() -> list[str]:
    routes = Routes.sandbox(ORIGIN)
    return [
        f"{routes.url_of('seoul')}/{KEYS['seoul']}/json/SearchSTNBySubwayLineInfo/1/5",
        str(httpx.URL(routes.url_of("dart") + "/corpCode.xml", params={"crtfc_key": KEYS["dart"]})),
        str(httpx.URL(routes.url_of("edu") + "/schoolInfo", params={
            "KEY": KEYS["edu"], "Type": "json", "pIndex": 1, "pSize": 3, "ATPT_OFCDC_SC_CODE": "T10"})),
    ]


@pytest.fixture(scope="module")
def source(tmp_path_factory, sandbox_app) -> CassetteStore:
    """A cassettes folder with bundle 'b': v1 recorded from the sandbox, v2 (parent v1) a subset of it."""
    store = CassetteStore(tmp_path_factory.mktemp("source"))

    async def record():
        recording = store.recording("b", keys=KEYS)
        transport = RecorderTransport("record", routes=Routes.sandbox(ORIGIN), recording=recording,
                                      inner=httpx.ASGITransport(sandbox_app))
        async with httpx.AsyncClient(transport=transport) as client:
            for url in requests_():
                assert (await client.get(url)).status_code == 200
        return recording.commit()

    v1 = asyncio.run(record())
    store.write("b", list(Bundle.open(v1.folder).interactions())[:-1], parent=v1.version, keys=KEYS)
    return store


@pytest.fixture(scope="module")
def keypairs(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    folder = tmp_path_factory.mktemp("keys")
    pairs = {}
    for who in ("team", "stranger"):
        pairs[who] = (folder / f"{who}.pem", folder / f"{who}.pub.pem")
        generate_keypair(*pairs[who])
    return pairs


def versions(store: CassetteStore) -> list[str]:
    """v1, v2 of bundle 'b' (by parentage: both may be written within one millisecond)."""
    manifests = store.versions("b")
    return [m.version for m in sorted(manifests, key=lambda m: m.parent is not None)]


def copy_version(store: CassetteStore, version: str, dest: Path) -> Path:
    """A version folder copied elsewhere (the USB stick), files made writable so tests can damage them."""
    folder = dest / version
    shutil.copytree(store.root / "b" / version, folder)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


def assert_nothing_written(store: CassetteStore) -> None:
    assert not store.root.exists() or not any(store.root.iterdir()), list(store.root.rglob("*"))


def test_keypair_files(keypairs):
    private, public = keypairs["team"]
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert b"PRIVATE KEY" in private.read_bytes() and b"PUBLIC KEY" in public.read_bytes()
    before = private.read_bytes()
    with pytest.raises(FileExistsError, match="refusing to overwrite"):
        generate_keypair(private, public.with_name("new.pub.pem"))
    assert private.read_bytes() == before and not public.with_name("new.pub.pem").exists()


def test_sign_and_verify(source, keypairs, tmp_path):
    private, public = keypairs["team"]
    folder = copy_version(source, versions(source)[0], tmp_path)
    parts = {p: (folder / p).read_bytes() for p in (MANIFEST, INDEX, BODIES)}
    sig = sign_bundle(folder, private)
    assert sig == folder / SIGNATURE and len(base64.b64decode(sig.read_text().strip())) == 64
    assert verify_bundle_signature(folder, public).version == folder.name
    assert {p: (folder / p).read_bytes() for p in parts} == parts  # detached: nothing else changed
    assert Bundle.open(folder).version == folder.name


def test_tampered_manifest_refused(source, keypairs, tmp_path):
    private, public = keypairs["team"]
    folder = copy_version(source, versions(source)[0], tmp_path / "usb")
    sign_bundle(folder, private)
    manifest = folder / MANIFEST
    manifest.write_text(manifest.read_text().replace('"note": null', '"note": "trust me"'))
    with pytest.raises(SignatureError, match="does not verify .* was changed after signing"):
        verify_bundle_signature(folder, public)
    store = CassetteStore(tmp_path / "cassettes")
    with pytest.raises(SignatureError):
        import_bundle(store, folder, public_key=public)
    assert_nothing_written(store)


def test_tampered_part_refused_naming_it(source, keypairs, tmp_path):
    private, public = keypairs["team"]
    folder = copy_version(source, versions(source)[0], tmp_path / "usb")
    sign_bundle(folder, private)
    bodies = folder / BODIES
    data = bytearray(bodies.read_bytes())
    data[len(data) // 2] ^= 0x01
    bodies.write_bytes(bytes(data))
    store = CassetteStore(tmp_path / "cassettes")
    for key in (None, public):  # signed manifest or not: the part's hash gives it away
        with pytest.raises(CorruptBundleError, match=r"bodies\.bin: content does not match"):
            import_bundle(store, folder, public_key=key)
    with pytest.raises(CorruptBundleError, match=r"bodies\.bin"):
        sign_bundle(folder, private)  # never sign damaged content
    assert_nothing_written(store)


def test_wrong_key_and_unsigned_refused(source, keypairs, tmp_path):
    private, _ = keypairs["team"]
    _, stranger = keypairs["stranger"]
    unsigned = copy_version(source, versions(source)[0], tmp_path / "usb")
    store = CassetteStore(tmp_path / "cassettes")
    with pytest.raises(SignatureError, match="unsigned bundle"):
        import_bundle(store, unsigned, public_key=keypairs["team"][1])
    sign_bundle(unsigned, private)
    with pytest.raises(SignatureError, match="signed with another key"):
        import_bundle(store, unsigned, public_key=stranger)
    assert_nothing_written(store)
    (unsigned / MANIFEST).chmod(0o644)
    (unsigned / MANIFEST).unlink()
    with pytest.raises(CorruptBundleError, match="no manifest.json"):
        import_bundle(store, unsigned)
    assert_nothing_written(store)


def test_import_into_fresh_store_serves_the_same(source, keypairs, tmp_path):
    private, public = keypairs["team"]
    v1 = versions(source)[0]
    folder = copy_version(source, v1, tmp_path / "usb")
    sign_bundle(folder, private)
    store = CassetteStore(tmp_path / "cassettes")
    ref = import_bundle(store, folder, public_key=public)
    assert (ref.name, ref.version, ref.folder) == ("b", v1, store.root / "b" / v1)
    assert ref.head_moved and store.head("b") == v1 and ref.signed_by and not ref.already_present
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o444 for p in ref.folder.iterdir())
    assert not [p for p in (store.root / "b").iterdir() if p.name.startswith(".import")]
    verify_bundle_signature(ref.folder, public)

    original, imported = Bundle.open(source.root / "b" / v1), store.open("b")
    assert len(imported) == len(original) == len(requests_())
    for row in range(len(original)):
        assert imported.response(row) == original.response(row)

    async def replay():  # and the recorder replays it: no upstream behind http://sandbox
        transport = RecorderTransport("replay", routes=Routes.sandbox(ORIGIN), replay=imported)
        async with httpx.AsyncClient(transport=transport) as client:
            return [(await client.get(url)).content for url in requests_()]

    assert asyncio.run(replay()) == [original.response(r).body for r in range(len(original))]
    again = import_bundle(store, folder, public_key=public)
    assert again.already_present and again.version == v1 and not again.head_moved
    renamed = import_bundle(store, folder, name="from-usb")
    assert renamed.folder == store.root / "from-usb" / v1 and store.head("from-usb") == v1


def test_head_moves_only_along_the_history(source, tmp_path):
    v1, v2 = versions(source)
    usb = tmp_path / "usb"
    first, second = copy_version(source, v1, usb), copy_version(source, v2, usb)

    in_order = CassetteStore(tmp_path / "in-order")
    assert import_bundle(in_order, first).head_moved and in_order.head("b") == v1
    assert import_bundle(in_order, second).head_moved and in_order.head("b") == v2  # v2's parent is v1

    backwards = CassetteStore(tmp_path / "backwards")
    import_bundle(backwards, second)
    ref = import_bundle(backwards, first)
    assert not ref.head_moved and ref.head == v2 and backwards.head("b") == v2
    assert f"HEAD of 'b' stays at {v2}" in ref.head_note
    assert backwards.open(f"b@{v1}").version == v1
