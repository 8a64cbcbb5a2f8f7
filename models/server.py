"""One model-server manager: a planned OpenAI-compatible server run as a child process, sync or async.

    from models.plan import plan_model_server
    from models.server import ModelServer

    plan = plan_model_server(None)                     # the packaged SmolLM2 on llama.cpp (nothing started)
    with ModelServer(plan) as server:                  # starts it, waits until it is healthy, warms it up
        server.base_url                                # http://127.0.0.1:PORT/v1
        server.agent_settings()                        # the plan's agent settings + a measured request limit
    async with ModelServer(plan) as server: ...        # the same from a coroutine (health polled without blocking)
    # stopped: SIGTERM, then SIGKILL after a grace period; also when the start failed

``ServerPlan`` says what runs (``models.plan`` makes one per backend); ``ModelServer`` runs it. The child gets
SIGTERM when its parent dies (Linux ``PR_SET_PDEATHSIG``), so a crashed or killed appliance leaves no server
behind. That signal fires when the *thread* that forked the child exits, not the process: the child is always
spawned in the caller's thread (never from ``asyncio.to_thread``). The waiting is one code for both forms: ``start``
runs it in the caller's thread, ``astart`` in a worker thread (``asyncio.to_thread``) so the event loop keeps
running; ``astop`` runs ``stop`` there too. Start a server from the thread that outlives it (the main thread, or the
event loop's).

A plan with ``warm_up`` (llama.cpp: a CPU model whose speed depends on the machine and its load) gets two
short requests after the health check: the first pages the model in, the second and third measure prompt
evaluation and decoding in tokens/s (``ServerSpeed``). ``request_time_limit`` turns that into the time one chat
request may take, instead of a fixed number that is too short on a busy machine and too long on a quiet one.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import httpx

from .errors import ModelServerError

__all__ = ["ModelServer", "ModelServerError", "ServerPlan", "ServerSpeed", "log_tail", "request_time_limit"]

# The time-limit rule (request_time_limit): generous, because the load on the machine can grow after the warm-up.
LIMIT_FACTOR = 4.0
LIMIT_SLACK_S = 15.0
LIMIT_FLOOR_S = 60.0
# The warm-up's prompt: a counting sequence, long enough (~400 tokens) that prompt evaluation dominates, and one
# the model continues for the whole decode measurement.
_WARM_UP_PROMPT = "Count: " + ", ".join(str(i) for i in range(1, 161)) + ","
_DECODE_TOKENS = 24


@dataclass(frozen=True)
class ServerPlan:
    """What ``ModelServer`` will run: the backend, its command and environment, and how to reach it."""

    backend: str
    command: tuple[str, ...]
    env: Mapping[str, str]
    host: str
    port: int
    served_name: str
    health_path: str
    reason: str  # why this backend was chosen, for the operator
    agent_defaults: Mapping[str, Any] = field(default_factory=dict)  # the agent settings this server needs
    tokenizer: str | None = None  # the model folder, for vLLM's tool-call parser on the endpoint side
    context_tokens: int | None = None  # the context length the server runs with: the longest prompt it takes
    warm_up: bool = False  # measure the speed after the health check (CPU backends)
    requires: Mapping[str, str] = field(default_factory=dict)  # Python module -> how to install it, checked at start
    cwd: str | None = None  # the child's working directory (None: this process's)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def health_url(self) -> str:
        return f"http://{self.host}:{self.port}{self.health_path}"


@dataclass(frozen=True)
class ServerSpeed:
    """A started server's measured speed, in tokens per second (``ModelServer.speed``)."""

    prompt_tokens_per_s: float
    decode_tokens_per_s: float


def request_time_limit(speed: ServerSpeed, *, prompt_tokens: int, max_tokens: int, factor: float = LIMIT_FACTOR,
                       slack_s: float = LIMIT_SLACK_S, floor_s: float = LIMIT_FLOOR_S) -> float:
    """Seconds one chat request may take: ``factor`` × (prompt_tokens / prompt speed + max_tokens / decode speed)
    + ``slack_s``, and never less than ``floor_s``."""
    expected = prompt_tokens / speed.prompt_tokens_per_s + max_tokens / speed.decode_tokens_per_s
    return max(floor_s, factor * expected + slack_s)


def log_tail(log: Any, n_bytes: int = 4_000) -> str:
    """The last ``n_bytes`` of a server's log file (opened ``w+b``), as text; "" when there is none."""
    if log is None:
        return ""
    log.flush()
    size = log.seek(0, os.SEEK_END)
    log.seek(max(0, size - n_bytes))
    return str(log.read().decode("utf-8", errors="replace"))


def _die_with_parent(parent: int) -> Callable[[], None]:
    """In the child, before exec: SIGTERM when the thread that forked it ends, and at once if it already has."""
    def arm() -> None:
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died between fork and prctl: nobody would stop us
            os.kill(os.getpid(), signal.SIGTERM)
    return arm


class ModelServer:
    """Runs a ``ServerPlan`` as a child process: ``with`` / ``async with``, or ``start``/``stop``,
    ``astart``/``astop``. Health is ``GET plan.health_path`` answering 200."""

    def __init__(self, plan: ServerPlan, *, startup_timeout_s: float = 600.0, stop_grace_s: float = 15.0):
        self.plan = plan
        self.startup_timeout_s, self.stop_grace_s = startup_timeout_s, stop_grace_s
        self.process: subprocess.Popen[bytes] | None = None
        self.speed: ServerSpeed | None = None
        self._log: Any = None

    @property
    def base_url(self) -> str:
        return self.plan.base_url

    # ------------------------------------------------------------------------------------ start

    def start(self) -> None:
        """Start the server, wait until it is healthy, then (``plan.warm_up``) measure its speed.

        Raises:
            ModelServerError: the program is missing, or the server exited or did not answer in time (the
                message carries the end of its log); nothing is left running.
        """
        self._spawn()
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise

    async def astart(self) -> None:
        """``start`` for a coroutine: the child is spawned in this thread, the waiting runs in a worker thread.

        Raises:
            ModelServerError: as ``start``.
        """
        self._spawn()
        try:
            await asyncio.to_thread(self._wait_until_ready)
        except BaseException:  # a cancelled start too: the worker sees the child gone and ends
            await self.astop()
            raise

    def _spawn(self) -> None:
        if self.process is not None:
            raise ModelServerError(f"the {self.plan.backend} server is already running at {self.base_url}")
        for module, install in self.plan.requires.items():
            if importlib.util.find_spec(module) is None:
                raise ModelServerError(f"the {self.plan.backend} server needs the Python module {module}, which is "
                                       f"not installed; {install}")
        self._log = tempfile.TemporaryFile()
        env = {**os.environ, **self.plan.env}
        try:
            self.process = subprocess.Popen(
                self.plan.command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, env=env,
                cwd=self.plan.cwd, preexec_fn=_die_with_parent(os.getpid()) if sys.platform == "linux" else None)
        except OSError as exc:
            self._close_log()
            raise ModelServerError(f"cannot start the {self.plan.backend} server ({self.plan.command[0]}): "
                                   f"{exc}") from None

    def _wait_until_ready(self) -> None:
        """Poll health until 200, then warm up and measure (``plan.warm_up``). Blocking: ``start`` calls it in its
        thread, ``astart`` in a worker thread."""
        process = self.process
        deadline = time.monotonic() + self.startup_timeout_s
        with httpx.Client() as client:
            while not self._answered(client):
                self._check_waiting(process, deadline)
                time.sleep(0.1)
            if self.plan.warm_up:
                self.speed = _speed(*(self._timed(client, body) for body in _warm_up_bodies(self.plan)))

    def _answered(self, client: httpx.Client) -> bool:
        with contextlib.suppress(httpx.HTTPError):
            return client.get(self.plan.health_url, timeout=2.0).status_code == 200
        return False

    def _check_waiting(self, process: subprocess.Popen[bytes] | None, deadline: float) -> None:
        if process is None or self.process is not process:
            raise ModelServerError(f"the {self.plan.backend} server was stopped before it was healthy")
        if process.poll() is not None:
            raise ModelServerError(f"the {self.plan.backend} server exited with code {process.returncode} "
                                   f"before it was healthy:\n{self.log_tail()}")
        if time.monotonic() > deadline:
            raise ModelServerError(f"the {self.plan.backend} server was not healthy at {self.plan.health_url} "
                                   f"within {self.startup_timeout_s:g} s:\n{self.log_tail()}")

    def _timed(self, client: httpx.Client, body: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        try:
            response = client.post(f"{self.base_url}/completions", json=body, timeout=self.startup_timeout_s)
        except httpx.HTTPError as exc:
            raise ModelServerError(f"the {self.plan.backend} server's warm-up request failed: {exc}\n"
                                   f"{self.log_tail()}") from None
        return time.perf_counter() - started, _usage(response, self.plan.backend)

    # ------------------------------------------------------------------------------------ while it runs

    def healthy(self) -> bool:
        """Whether the health path answers 200 now."""
        try:
            return httpx.get(self.plan.health_url, timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def agent_settings(self, **overrides: Any) -> dict[str, Any]:
        """The plan's agent settings, with ``request_timeout_s`` from the measured speed when it was measured
        (the longest prompt the context holds and the reply's ``max_tokens``), then ``overrides``."""
        settings = {**self.plan.agent_defaults, **overrides}
        if self.speed is not None and "request_timeout_s" not in overrides:
            settings["request_timeout_s"] = round(request_time_limit(
                self.speed, prompt_tokens=self.plan.context_tokens or 4096,
                max_tokens=int(settings.get("max_tokens") or 512)), 1)
        return settings

    def log_tail(self, n_bytes: int = 4_000) -> str:
        """The end of the server's output (stdout and stderr together)."""
        return log_tail(self._log, n_bytes)

    # ------------------------------------------------------------------------------------ stop

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after the grace period; the exit code (None when nothing ran). Safe twice."""
        process, self.process = self.process, None
        code = None
        if process is not None:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
                try:
                    process.wait(self.stop_grace_s)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            code = process.returncode
        self._close_log()
        return code

    async def astop(self) -> int | None:
        """``stop`` for a coroutine: run in a worker thread, so waiting for the exit does not block the loop."""
        return await asyncio.to_thread(self.stop)

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> ModelServer:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    async def __aenter__(self) -> ModelServer:
        await self.astart()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.astop()


def _warm_up_bodies(plan: ServerPlan) -> list[dict[str, Any]]:
    """Page the model in; evaluate the counting prompt (one token out); continue it from the cached prompt."""
    base = {"model": plan.served_name, "temperature": 0.0, "seed": 0}
    return [{**base, "prompt": "Hello", "max_tokens": 1},
            {**base, "prompt": _WARM_UP_PROMPT, "max_tokens": 1},
            {**base, "prompt": _WARM_UP_PROMPT, "max_tokens": _DECODE_TOKENS}]


def _usage(response: httpx.Response, backend: str) -> dict[str, Any]:
    if response.status_code != 200:
        raise ModelServerError(f"the {backend} server's warm-up request answered HTTP {response.status_code}: "
                               f"{response.text[:300]}")
    try:
        usage = response.json()["usage"]
        return {"prompt_tokens": int(usage["prompt_tokens"]), "completion_tokens": int(usage["completion_tokens"])}
    except (ValueError, LookupError, TypeError):
        raise ModelServerError(f"the {backend} server's warm-up reply has no token usage: "
                               f"{response.text[:300]}") from None


def _speed(_: tuple[float, dict[str, Any]], prompt: tuple[float, dict[str, Any]],
           decode: tuple[float, dict[str, Any]]) -> ServerSpeed:
    """Prompt speed from the counting prompt's evaluation; decode speed from its continuation, whose prompt is
    the server's cached prefix (both include the HTTP round trip: they err towards slow)."""
    (prompt_s, prompt_usage), (decode_s, decode_usage) = prompt, decode
    return ServerSpeed(prompt_tokens_per_s=prompt_usage["prompt_tokens"] / max(prompt_s, 1e-3),
                       decode_tokens_per_s=max(decode_usage["completion_tokens"], 1) / max(decode_s, 1e-3))
