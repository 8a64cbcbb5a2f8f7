"""The recorder transport and the bundle store on a tiny counting upstream: order, integrity, safety."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest

from recorder import CassetteStore, CorruptBundleError, Mode, RecorderTransport, ReplayMiss, SecretLeakError
from recorder.cassette import BundleNotFoundError
from tests.conftest import REPO
from tests.recorder.tiny_upstream import KEY, ORIGIN, ROUTES, counting_app, record

URL = f"{ORIGIN}/dart/api/list.json"


async def get_all(transport, queries):
    async with httpx.AsyncClient(transport=transport) as http:
        return [(await http.get(URL, params={"crtfc_key": KEY, **q})).json() for q in queries]


async def record_into(store: CassetteStore, name: str, queries, **kw):
    recording = store.recording(name, keys={"dart": KEY}, **kw)
    transport = RecorderTransport(Mode.RECORD, routes=ROUTES, inner=httpx.ASGITransport(counting_app()),
                                  recording=recording, source="sandbox@test")
    answers = await get_all(transport, queries)
    return answers, recording.commit()


async def test_repeated_identical_requests_replay_in_recorded_order(tmp_path):
    store = CassetteStore(tmp_path)
    recorded, ref = await record_into(store, "order", [{"q": "a"}, {"q": "a"}, {"q": "b"}, {"q": "a"}])
    assert [r["n"] for r in recorded] == [1, 2, 3, 4]
    replay = RecorderTransport(Mode.REPLAY, routes=ROUTES, replay=store.open("order"))
    replayed = await get_all(replay, [{"q": "a"}, {"q": "b"}, {"q": "a"}, {"q": "a"}, {"q": "a"}])
    assert [r["n"] for r in replayed] == [1, 3, 2, 4, 4]  # in order per request; the last one repeats
    with pytest.raises(ReplayMiss, match=r"dart:/list.json\?crtfc_key=\*\*\*&q=zzz .*nearest recorded: dart:/list"):
        await get_all(replay, [{"q": "zzz"}])
    assert replay.stats.misses and sum(replay.stats.hits.values()) == 5


async def test_a_recorded_version_is_never_modified_and_new_ones_name_their_parent(tmp_path):
    store = CassetteStore(tmp_path)
    _, first = await record_into(store, "b", [{"q": "a"}, {"q": "b"}])
    before = {p.name: p.read_bytes() for p in first.folder.iterdir()}
    _, second = await record_into(store, "b", [{"q": "b"}, {"q": "c"}])
    assert {p.name: p.read_bytes() for p in first.folder.iterdir()} == before
    assert all(not os.access(p, os.W_OK) or os.geteuid() == 0 for p in first.folder.iterdir())
    assert oct(first.folder.joinpath("bodies.bin").stat().st_mode)[-3:] == "444"
    head = store.open("b")
    assert head.version == second.version != first.version and head.manifest.parent == first.version
    urls = sorted(head.urls())  # parent's a, this recording's b (replacing the parent's) and c
    assert urls == [f"dart:/list.json?crtfc_key=***&q={q}" for q in "abc"]
    assert [r["n"] for r in await get_all(RecorderTransport(Mode.REPLAY, routes=ROUTES, replay=head),
                                          [{"q": "b"}])] == [1]  # the newer recording's answer
    assert [m.version for m in store.versions("b")] == [first.version, second.version]


async def test_equal_content_is_one_version(tmp_path):
    store = CassetteStore(tmp_path)
    _, first = await record_into(store, "same", [{"q": "a"}])
    again = store.write("same", list(store.open("same").interactions()), parent=first.version)
    assert again.version == first.version and len(store.versions("same")) == 1


@pytest.mark.parametrize("damage", ["flip a body byte", "truncate the index", "drop a part", "edit the manifest"])
async def test_a_corrupt_bundle_is_refused_whole(tmp_path, damage):
    store = CassetteStore(tmp_path)
    _, ref = await record_into(store, "c", [{"q": "a"}, {"q": "b"}])
    for p in ref.folder.iterdir():
        p.chmod(0o644)
    if damage == "flip a body byte":
        data = bytearray((ref.folder / "bodies.bin").read_bytes())
        data[5] ^= 1
        (ref.folder / "bodies.bin").write_bytes(bytes(data))
    elif damage == "truncate the index":
        path = ref.folder / "interactions.parquet"
        path.write_bytes(path.read_bytes()[:-10])
    elif damage == "drop a part":
        (ref.folder / "bodies.bin").unlink()
    else:
        path = ref.folder / "manifest.json"
        path.write_text(path.read_text().replace('"interactions": 2', '"interactions": 3'))
        (ref.folder / "bodies.bin").write_bytes((ref.folder / "bodies.bin").read_bytes() + b" ")
    with pytest.raises(CorruptBundleError, match="manifest|missing"):
        store.open("c")


async def test_a_key_the_names_missed_makes_the_bundle_refused_unwritten(tmp_path):
    store = CassetteStore(tmp_path)
    answers, ref = await record_into(store, "k", [{"q": "a", "echo_key": "named"}])
    assert "OC=***&x=1" in answers[0]["link"]  # echoed as a named parameter: masked, then kept
    assert KEY.encode() not in b"".join(p.read_bytes() for p in ref.folder.iterdir())
    with pytest.raises(SecretLeakError, match="response body holds platform 'dart'.s key; the bundle was not written"):
        await record_into(store, "k2", [{"q": "a", "echo_key": "bare"}])
    assert not (tmp_path / "k2").exists() or not [p for p in (tmp_path / "k2").iterdir() if p.is_dir()]


def test_a_bundle_name_cannot_escape_the_cassettes_folder(tmp_path):
    store = CassetteStore(tmp_path / "cassettes")
    for name in ("../x", "a/b", "..", ".hidden", "", "x" * 65, "a\\b"):
        with pytest.raises(ValueError, match="invalid bundle name"):
            store.recording(name)
    with pytest.raises(BundleNotFoundError, match="no bundle named 'none'"):
        store.resolve("none")
    assert not (tmp_path / "x").exists()


def test_two_concurrent_recorders_into_one_name_lose_nothing(tmp_path):
    start_at = time.time() + 3.0
    racers = [subprocess.Popen([sys.executable, "-m", "tests.recorder.tiny_upstream", str(tmp_path), "race", tag,
                                "40", str(start_at)], cwd=REPO) for tag in ("left", "right")]
    assert [r.wait(timeout=120) for r in racers] == [0, 0]
    store = CassetteStore(tmp_path)
    head = store.open("race")
    queries = sorted(u.rsplit("q=", 1)[1] for u in head.urls())
    assert queries == sorted(f"{tag}-{i}" for tag in ("left", "right") for i in range(40))
    versions = store.versions("race")
    assert len(versions) == 2 and versions[1].parent == versions[0].version


async def test_in_process_racers_too(tmp_path):
    import asyncio
    await asyncio.gather(record(tmp_path, "r", "a", 30), record(tmp_path, "r", "b", 30))
    assert len(CassetteStore(tmp_path).open("r")) == 60


def test_transport_modes_need_what_they_use(tmp_path):
    with pytest.raises(ValueError, match="needs a bundle"):
        RecorderTransport("replay", routes=ROUTES)
    with pytest.raises(ValueError, match="needs a recording"):
        RecorderTransport("record", routes=ROUTES)
    with pytest.raises(ValueError):
        RecorderTransport("rewind", routes=ROUTES)




async def test_a_compressed_bundle_replays_the_same_and_is_checked_like_any_other(tmp_path):
    store = CassetteStore(tmp_path / "a")
    queries = [{"q": str(i)} for i in range(30)]
    recorded, plain = await record_into(store, "plain", queries)
    compressed = store.write("packed", list(store.open("plain").interactions()), parent=None, compress=True)
    names = sorted(p.name for p in compressed.folder.iterdir())
    assert names == ["bodies.bin.zst", "interactions.parquet", "manifest.json"]
    raw = (plain.folder / "bodies.bin").stat().st_size
    assert (compressed.folder / "bodies.bin.zst").stat().st_size < raw / 2
    assert compressed.version != plain.version  # the parts differ, so the content address does
    replay = RecorderTransport(Mode.REPLAY, routes=ROUTES, replay=store.open("packed"))
    assert await get_all(replay, queries) == recorded

    from recorder.transfer import import_bundle  # a compressed version travels like any other
    imported = import_bundle(CassetteStore(tmp_path / "b"), compressed.folder)
    assert sorted(p.name for p in imported.folder.iterdir()) == names

    for p in compressed.folder.iterdir():
        p.chmod(0o644)
    data = bytearray((compressed.folder / "bodies.bin.zst").read_bytes())
    data[-3] ^= 1
    (compressed.folder / "bodies.bin.zst").write_bytes(bytes(data))
    with pytest.raises(CorruptBundleError, match="bodies.bin.zst"):
        store.open("packed")
