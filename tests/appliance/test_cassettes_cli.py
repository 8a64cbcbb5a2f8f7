"""`kopa record`, `kopa cassettes …`: real processes, a real cassettes folder, real exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recorder import CassetteStore
from tests.appliance.test_cli import kopa

CALLS = [
    {"tool": "search_school_info", "args": {"ATPT_OFCDC_SC_CODE": "T10"}},
    {"tool": "list_tollbooths", "args": {"numOfRows": 3}},
    {"tool": "evaluate_expression", "args": {"expression": "1+1"}},  # built-in: nothing to record
]


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    calls = folder / "calls.jsonl"
    calls.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in CALLS), encoding="utf-8")
    result = kopa("record", "--calls", str(calls), "--bundle", "demo", env=env(folder / "cassettes"))
    assert result.returncode == 0, result.stderr
    assert "demo@" in result.stdout and "search_school_info" in result.stdout
    return folder / "cassettes"


def env(folder: Path) -> dict[str, str]:
    return {"KOPA_RECORDER__CASSETTES": str(folder)}


def test_record_then_list_show_and_verify(cassettes):
    listed = json.loads(kopa("cassettes", "list", "--json", env=env(cassettes)).stdout)
    assert [(r["name"], r["head"]) for r in listed] == [("demo", True)]
    shown = json.loads(kopa("cassettes", "show", "demo", "--json", env=env(cassettes)).stdout)
    assert set(shown["counts"]["tools"]) == {"search_school_info", "list_tollbooths"}
    assert shown["source"] == "sandbox@v1" and shown["counts"]["platforms"].keys() == {"edu", "ex"}
    verified = kopa("cassettes", "verify", "demo", env=env(cassettes))
    assert verified.returncode == 0 and "every part verified" in verified.stdout


def test_sign_verify_export_import_round_trip(cassettes, tmp_path):
    private, public = tmp_path / "k", tmp_path / "k.pub"
    assert kopa("cassettes", "keygen", str(private), str(public), env=env(cassettes)).returncode == 0
    assert kopa("cassettes", "sign", "demo", "--key", str(private), env=env(cassettes)).returncode == 0
    ok = kopa("cassettes", "verify", "demo", "--public-key", str(public), env=env(cassettes))
    assert ok.returncode == 0 and "signature verified" in ok.stdout
    # air-gapped transfer: a signed folder into another machine's store
    other = tmp_path / "other"
    folder = CassetteStore(cassettes).resolve("demo").folder
    moved = kopa("cassettes", "import", str(folder), "--public-key", str(public), env=env(other))
    assert moved.returncode == 0, moved.stderr
    assert CassetteStore(other).open("demo").version == CassetteStore(cassettes).open("demo").version
    # vcrpy export and import
    yaml = tmp_path / "demo.yaml"
    assert kopa("cassettes", "export", "demo", "--vcr", str(yaml), env=env(cassettes)).returncode == 0
    assert "https://open.neis.go.kr/hub/schoolInfo?" in yaml.read_text()
    back = kopa("cassettes", "import", str(yaml), "--name", "from-vcr", env=env(other))
    assert back.returncode == 0, back.stderr
    imported = CassetteStore(other).open("from-vcr")
    assert imported.manifest.counts["origins"] == {"imported": len(imported)}


@pytest.mark.parametrize(("args", "message"), [
    (["cassettes", "show", "nope"], "no bundle named 'nope'"),
    (["cassettes", "show", "../etc"], "invalid bundle name"),
    (["cassettes", "show", "demo@ffff"], "version 'ffff' of bundle 'demo' does not exist"),
    (["record", "--calls", "/nonexistent.jsonl"], "No such file"),
    (["serve", "--mode", "replay"], "needs --bundle"),
    (["serve", "--mode", "rewind", "--bundle", "x"], "choose live, record, replay or replay-or-record"),
])
def test_bad_arguments_are_one_line_errors(cassettes, args, message):
    result = kopa(*args, env=env(cassettes))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_bad_calls_file_names_the_line(cassettes, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"tool": "search_school_info", "args": {}}\n{"tool": "no_such_tool"}\n')
    result = kopa("record", "--calls", str(bad), env=env(cassettes))
    assert result.returncode == 2 and f"{bad}:2: unknown tool 'no_such_tool'" in result.stderr


def test_query_and_coverage(cassettes):
    rows = json.loads(kopa("cassettes", "query", "SELECT platform, count(*) AS n FROM interactions GROUP BY 1 "
                           "ORDER BY 1", "--json", env=env(cassettes)).stdout)
    assert [r["platform"] for r in rows] == ["edu", "ex"] and all(r["n"] >= 2 for r in rows)
    bad = kopa("cassettes", "query", "SELEC 1", env=env(cassettes))
    assert bad.returncode == 2 and "query failed" in bad.stderr and "Traceback" not in bad.stderr
    covered = json.loads(kopa("cassettes", "coverage", "demo", env=env(cassettes)).stdout)
    assert "search_school_info" in json.dumps(covered) and "T10" in json.dumps(covered)


def test_drift_between_two_recordings_and_against_a_live_sample(cassettes, tmp_path):
    calls = tmp_path / "gg.jsonl"
    calls.write_text('{"tool": "gg_genrestrt", "args": {"SIGUN_CD": "41590"}}\n', encoding="utf-8")
    for world, name in (("v1", "old"), ("v2", "new")):
        done = kopa("record", "--calls", str(calls), "--bundle", name, env={**env(cassettes),
                                                                             "KOPA_SANDBOX__WORLD": world})
        assert done.returncode == 0, done.stderr
    report = json.loads(kopa("drift", "old", "new", "--json", env=env(cassettes)).stdout)
    kinds = {e["kind"] for e in report["entries"]}
    assert "cardinality_changed" in kinds and "record_removed" in kinds  # Hwaseong 41590 split in v2
    same = json.loads(kopa("drift", "--live-sample", "1", "old", "--world", "v1", "--json",
                           env=env(cassettes)).stdout)
    assert same["entries"] == []
    moved = kopa("drift", "--live-sample", "1", "old", "--world", "v2", "--out", str(tmp_path / "r.md"),
                 env=env(cassettes))
    assert moved.returncode == 0 and "cardinality_changed" in (tmp_path / "r.md").read_text()


def test_list_shows_an_interrupted_recording_and_recover_seals_it(tmp_path):
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO

    folder = tmp_path / "cassettes"
    killed = subprocess.run([sys.executable, "-m", "tests.recorder.crash_child", str(folder), "b", "mid-journal", "6"],
                            cwd=REPO, capture_output=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    listed = json.loads(kopa("cassettes", "list", "--json", env=env(folder)).stdout)
    assert [(r["name"], r["state"], r["interactions"]) for r in listed] == [("b", "interrupted", 3)]
    both = kopa("cassettes", "recover", "b", "--seal", "--discard", env=env(folder))
    assert both.returncode == 2 and "--seal and --discard exclude each other" in both.stderr
    sealed = kopa("cassettes", "recover", env=env(folder))
    assert sealed.returncode == 0, sealed.stderr
    version = CassetteStore(folder).head("b")
    assert "b unsealed-" in sealed.stdout and f"sealed 3 interaction(s) as b@{version}" in sealed.stdout
    listed = json.loads(kopa("cassettes", "list", "--json", env=env(folder)).stdout)
    assert [(r["state"], r["head"], r["interactions"]) for r in listed] == [("sealed", True, 3)]
    again = kopa("cassettes", "recover", "b", env=env(folder))
    assert again.returncode == 0 and "nothing to recover" in again.stdout
    missing = kopa("cassettes", "recover", "nope", env=env(folder))
    assert missing.returncode == 2 and "no bundle named 'nope'" in missing.stderr and "Traceback" not in missing.stderr
