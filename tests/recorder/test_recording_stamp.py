"""A stamped recording (``CassetteStore.recording(stamp=...)``) is the same content, hence the same version, every
time the same interactions are recorded; unstamped recordings keep their real times and durations."""

from __future__ import annotations

from recorder import CassetteStore
from recorder.cassette.interaction import Interaction


def _interaction(n: int, duration: float) -> Interaction:
    return Interaction(fingerprint=f"fp{n}", method="GET", url=f"https://example.test/x?n={n}", platform="dart",
                       status=200, body=b'{"ok": true}', headers=(), duration_ms=duration)


def test_a_stamped_recording_gives_the_same_version_twice(tmp_path):
    refs = []
    for folder, duration in (("a", 1.5), ("b", 7.25)):
        recording = CassetteStore(tmp_path / folder).recording("synth", inherit=False, stamp="2025-06-30T00:00:00.000Z")
        for n in range(3):
            recording.add(_interaction(n, duration))
        refs.append(recording.commit())
    assert refs[0].version == refs[1].version
    stored = list(CassetteStore(tmp_path / "a").open(f"synth@{refs[0].version}").interactions())
    assert {i.recorded_at for i in stored} == {"2025-06-30T00:00:00.000Z"} and {i.duration_ms for i in stored} == {0.0}


def test_an_unstamped_recording_keeps_its_times(tmp_path):
    recording = CassetteStore(tmp_path).recording("live", inherit=False)
    recording.add(_interaction(0, 3.0))
    ref = recording.commit()
    (stored,) = CassetteStore(tmp_path).open(f"live@{ref.version}").interactions()
    assert stored.duration_ms == 3.0 and stored.recorded_at != "2025-06-30T00:00:00.000Z"
