"""Crash-safe recording: a recorder process SIGKILLed at any point leaves every sealed version intact and its
own recording absent or recoverable; a full disk is a clear error that touches nothing sealed.

The recorder runs in a real subprocess (``tests/recorder/crash_child.py``) that dies by a real SIGKILL at a named
point, or is killed from here once its journal on disk holds enough frames.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time

import pytest

from recorder import CassetteStore
from recorder.cassette import DiskFullError, Interaction, journal
from tests.conftest import REPO
from tests.recorder.test_transport_and_bundles import record_into

N = 8
STAMP = "2025-06-30T00:00:00.000Z"


def child(root, point: str, *flags: str, n: int = N) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tests.recorder.crash_child", str(root), "b", point, str(n), *flags],
                          cwd=REPO, capture_output=True, text=True, timeout=60)


async def earlier_version(root):
    """A sealed version to protect, and its bytes."""
    store = CassetteStore(root)
    _, ref = await record_into(store, "b", [{"q": "earlier-1"}, {"q": "earlier-2"}])
    return store, ref, {p.name: p.read_bytes() for p in ref.folder.iterdir()}


def queries(bundle) -> list[str]:
    return [u.rsplit("q=", 1)[1] for u in bundle.urls()]


def assert_untouched(store, ref, before) -> None:
    assert {p.name: p.read_bytes() for p in ref.folder.iterdir()} == before
    assert store.open(f"b@{ref.version}").version == ref.version  # every part hash-checked


@pytest.mark.parametrize(("point", "journaled", "torn"), [
    ("mid-journal", N // 2, False),
    ("torn-frame", N // 2, True),
    ("parts-written", N, False),
])
async def test_a_killed_recording_is_recoverable_and_the_earlier_version_intact(tmp_path, point, journaled, torn):
    store, earlier, before = await earlier_version(tmp_path)
    died = child(tmp_path, point)
    assert died.returncode == -signal.SIGKILL, died.stderr
    assert_untouched(store, earlier, before)
    assert store.head("b") == earlier.version and [m.version for m in store.versions("b")] == [earlier.version]
    (info,) = store.unsealed("b")
    assert (info.state, info.interactions, info.torn_bytes > 0) == ("interrupted", journaled, torn)

    (outcome,) = store.recover("b")
    assert (outcome.action, outcome.interactions) == ("sealed", journaled)
    head = store.open("b")
    assert head.version == outcome.version and head.manifest.parent == earlier.version
    assert queries(head) == ["earlier-1", "earlier-2"] + [f"q-{i}" for i in range(journaled)]
    assert store.unsealed("b") == [] and not [p for p in (tmp_path / "b").iterdir() if p.name.startswith(".tmp-")]
    assert_untouched(store, earlier, before)


async def test_a_kill_before_the_first_write_leaves_nothing_to_recover(tmp_path):
    store, earlier, before = await earlier_version(tmp_path)
    assert child(tmp_path, "before-first-write").returncode == -signal.SIGKILL
    assert_untouched(store, earlier, before)
    assert store.unsealed("b") == [] and store.recover("b") == [] and store.head("b") == earlier.version


async def test_a_kill_after_the_seal_landed_is_finished_not_sealed_twice(tmp_path):
    store, earlier, before = await earlier_version(tmp_path)
    assert child(tmp_path, "after-rename").returncode == -signal.SIGKILL
    sealed = store.head("b")
    assert sealed != earlier.version and len(store.versions("b")) == 2
    (info,) = store.unsealed("b")
    assert info.state == "cleanup-pending" and info.sealing["version"] == sealed
    (outcome,) = store.recover("b")
    assert (outcome.action, outcome.version) == ("sealed", sealed)
    assert len(store.versions("b")) == 2 and store.unsealed("b") == []
    assert_untouched(store, earlier, before)


async def test_a_killed_recording_resumes_in_the_next_recorder(tmp_path):
    store, earlier, before = await earlier_version(tmp_path)
    assert child(tmp_path, "torn-frame").returncode == -signal.SIGKILL
    resumed = child(tmp_path, "none", "--resume", "--start", "100", n=3)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[0]) == {"resumed": N // 2}
    head = store.open("b")
    assert head.manifest.parent == earlier.version and store.unsealed("b") == []
    assert queries(head) == ["earlier-1", "earlier-2", *(f"q-{i}" for i in range(N // 2)), "q-100", "q-101", "q-102"]
    assert_untouched(store, earlier, before)


def test_a_recovered_stamped_recording_is_byte_identical_to_an_uninterrupted_one(tmp_path):
    assert child(tmp_path / "killed", "mid-journal", "--stamp", STAMP, "--fresh").returncode == -signal.SIGKILL
    (recovered,) = CassetteStore(tmp_path / "killed").recover("b")
    whole = child(tmp_path / "whole", "none", "--stamp", STAMP, "--fresh", n=N // 2)
    assert whole.returncode == 0, whole.stderr
    clean = CassetteStore(tmp_path / "whole").resolve("b")
    assert recovered.version == clean.version
    killed = CassetteStore(tmp_path / "killed").resolve("b")
    for part in ("interactions.parquet", "bodies.bin"):
        assert (killed.folder / part).read_bytes() == (clean.folder / part).read_bytes()


async def test_a_recorder_killed_from_outside_loses_no_journaled_interaction(tmp_path):
    store, earlier, before = await earlier_version(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "tests.recorder.crash_child", str(tmp_path), "b", "none", "400",
                             "--slow"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # kill once at least 20 frames are on disk (there is no other signal)
            logs = list((tmp_path / "b").glob(f"{journal.PREFIX}*/{journal.LOG}"))
            if logs and len(journal.read_frames(logs[0]).interactions) >= 20:
                break
            time.sleep(0.02)
        (info,) = store.unsealed("b")
        assert info.state == "recording"  # the live recorder holds the journal's lock
        assert store.recover("b")[0].action == "in use"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    (info,) = store.unsealed("b")
    assert info.state == "interrupted" and info.interactions >= 20
    (outcome,) = store.recover("b")
    assert outcome.action == "sealed" and outcome.interactions == info.interactions
    assert queries(store.open("b"))[2:] == [f"q-{i}" for i in range(info.interactions)]  # a prefix, in order
    assert_untouched(store, earlier, before)


async def test_discarding_an_interrupted_recording_keeps_head(tmp_path):
    store, earlier, before = await earlier_version(tmp_path)
    assert child(tmp_path, "mid-journal").returncode == -signal.SIGKILL
    (outcome,) = store.recover("b", discard=True)
    assert (outcome.action, outcome.interactions) == ("discarded", N // 2)
    assert store.unsealed("b") == [] and store.head("b") == earlier.version
    assert [p.name for p in (tmp_path / "b").iterdir() if p.name.startswith(".")] == [".lock"]
    assert_untouched(store, earlier, before)


def test_a_damaged_frame_ends_the_journal_there(tmp_path):
    items = [Interaction(fingerprint=f"fp{i}", method="GET", url=f"dart:/x?q={i}", platform="dart", status=200,
                         body=bytes([i]) * 100, request_body=b"\x00\xff" if i == 1 else None) for i in range(4)]
    log = tmp_path / journal.LOG
    frames = [journal.encode(i) for i in items]
    log.write_bytes(b"".join(frames))
    assert journal.read_frames(log).interactions == items  # every field survives the round trip
    damaged = bytearray(log.read_bytes())
    damaged[len(frames[0]) + len(frames[1]) + 20] ^= 1  # one bit of the third frame
    log.write_bytes(bytes(damaged))
    read = journal.read_frames(log)
    assert read.interactions == items[:2] and read.torn_bytes == len(frames[2]) + len(frames[3])


@pytest.mark.skipif(shutil.which("unshare") is None or shutil.which("mount") is None, reason="needs unshare and mount")
def test_a_full_disk_is_a_clear_error_and_touches_no_sealed_version(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    script = (f"mount -t tmpfs -o size=1m tmpfs {mount} && "
              f"{sys.executable} -m tests.recorder.crash_child disk-full {mount}")
    run = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    if run.returncode != 0 and "mount" in run.stderr and "crash_child" not in run.stderr:
        pytest.skip(f"no private tmpfs here: {run.stderr.strip()}")  # user namespaces disabled
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.splitlines()[-1])
    assert out["journal_error"].startswith("no space left on device while journaling into ")
    assert "kopa cassettes recover b --seal" in out["journal_error"] and out["journaled"] > 5
    assert out["seal_error"].startswith("no space left on device while writing a new version of bundle 'b'")
    assert out["earlier_verifies"] and out["head"] == out["earlier"] and out["leftovers"] == []
    assert out["unsealed"] == [["interrupted", out["journaled"]]]
    assert out["recovered"] == ["sealed", out["journaled"]]
    assert out["after"] == {"interactions": 3 + out["journaled"], "parent": out["earlier"]}


def test_disk_full_is_an_os_error_with_enospc():
    exc = DiskFullError("no space")
    assert isinstance(exc, OSError) and exc.errno == 28 and str(exc) == "no space"


async def test_a_key_refuses_the_bundle_but_not_what_was_recorded_without_it(tmp_path):
    from recorder import SecretLeakError
    from tests.recorder.tiny_upstream import KEY

    store = CassetteStore(tmp_path)
    with pytest.raises(SecretLeakError, match=r"holds platform 'dart'.s key; the bundle was not written; the 2 "
                                              r"interaction\(s\) without a key stay journaled .*recover k --seal"):
        await record_into(store, "k", [{"q": "a"}, {"q": "b", "echo_key": "bare"}, {"q": "c"}])
    assert store.head("k") is None
    (info,) = store.unsealed("k")
    assert (info.state, info.interactions, info.refused) == ("interrupted", 2, 1)
    refused = (info.folder / journal.REFUSED).read_text()
    assert KEY not in refused and "response body" in refused
    assert KEY.encode() not in b"".join(p.read_bytes() for p in info.folder.iterdir())
    resumed = store.recording("k", keys={"dart": KEY}, resume=True)  # a restart does not forget the refusal
    assert resumed.resumed == 2
    with pytest.raises(SecretLeakError, match="1 exchange.s. recorded before the restart held a key"):
        resumed.commit()
    (outcome,) = store.recover("k")
    head = store.open("k")
    assert outcome.action == "sealed" and queries(head) == ["a", "c"]
    assert KEY.encode() not in b"".join(p.read_bytes() for p in head.folder.iterdir())
