"""Synthesis worker processes end with their parent, however it ended (a killed synthesis left them asleep, each
holding its runtime's memory)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCRIPT = """
import os, sys
from functools import partial

from edge.synth.runners import ProcessAttempts
from edge.synth.walk import LiveGraph

if __name__ == "__main__":
    attempts = ProcessAttempts(partial(dict), LiveGraph({}, {}), workers=2)
    pids = {attempts._pool.submit(os.getpid).result() for _ in range(8)}
    print(" ".join(map(str, sorted(pids))), flush=True)
    sys.stdin.read()  # until killed
"""


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie has ended; only its parent's reaping is left


def test_workers_end_when_the_synthesis_is_killed(tmp_path):
    script = tmp_path / "synthesis.py"
    script.write_text(SCRIPT)
    with subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, text=True) as parent:
        try:
            pids = [int(p) for p in parent.stdout.readline().split()]
            assert pids and all(_alive(p) for p in pids)
        finally:
            parent.send_signal(signal.SIGKILL)  # no shutdown runs: the pool never tells its workers
            parent.wait()
    deadline = time.monotonic() + 20
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [p for p in pids if _alive(p)]
    for pid in left:  # not left behind by a failing run either
        os.kill(pid, signal.SIGKILL)
    assert not left, "worker processes outlived their killed parent"
