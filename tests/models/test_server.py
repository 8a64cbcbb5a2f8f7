"""The model-server manager: plans (nothing started), the time-limit rule, the process (a stub server and the real
SmolLM2 on llama.cpp, sync and async), and that a killed parent leaves no server behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from models.errors import ModelServerError
from models.llama_cpp import HERMES_CHAT_FORMAT, LOCAL_DEFAULTS, N_CTX, default_threads, llama_cpp_command, smollm2_gguf
from models.plan import PLANNERS, BackendUnsuitable, plan_model_server
from models.server import LIMIT_FLOOR_S, ModelServer, ServerPlan, ServerSpeed, request_time_limit
from models.vllm import OFFLINE_ENV, vllm_command

ROOT = Path(__file__).parents[2]

# ----------------------------------------------------------------------------------- the plan


def test_vllm_is_planned_on_cuda_with_the_qwen3_coder_parsers_and_offline():
    plan = plan_model_server("/models/qwen3.5-4b-grpo", cuda=True, vllm=True, port=8001)
    assert plan.backend == "vllm" and plan.reason == "CUDA and vLLM are present"
    assert list(plan.command[1:]) == ["serve", "/models/qwen3.5-4b-grpo", "--host", "127.0.0.1", "--port", "8001",
                                      "--served-model-name", "kopa-agent-model", "--enable-auto-tool-choice",
                                      "--tool-call-parser", "qwen3_coder", "--reasoning-parser", "qwen3"]
    assert plan.command[0].endswith("vllm") and plan.env == OFFLINE_ENV and plan.env["HF_HUB_OFFLINE"] == "1"
    assert (plan.health_path, plan.base_url, plan.tokenizer) == ("/health", "http://127.0.0.1:8001/v1",
                                                                 "/models/qwen3.5-4b-grpo")
    assert plan.agent_defaults == {}  # vLLM reads tool messages and seeds: the paper's agent settings apply
    assert not plan.warm_up


def test_thinking_is_the_templates_default_unless_overridden():
    assert "--default-chat-template-kwargs" not in vllm_command("/m", host="h", port=1)
    cmd = vllm_command("/m", host="h", port=1, enable_thinking=False)
    assert json.loads(cmd[cmd.index("--default-chat-template-kwargs") + 1]) == {"enable_thinking": False}


def test_without_cuda_or_vllm_llama_cpp_serves_the_packaged_gguf():
    for cuda, vllm, reason in ((False, True, "no CUDA device"), (True, False, "vLLM is not installed")):
        plan = plan_model_server(None, cuda=cuda, vllm=vllm, port=8002)
        assert (plan.backend, plan.reason, plan.health_path) == ("llama.cpp", reason, "/v1/models")
        # the template SmolLM2 is trained with (models.templates.HERMES_CHATML), registered by models.llama_cpp
        assert plan.command[1:4] == ("-m", "models.llama_cpp", "--model") and plan.command[4] == str(smollm2_gguf())
        assert plan.agent_defaults == LOCAL_DEFAULTS
        assert (plan.context_tokens, plan.warm_up) == (N_CTX, True)  # a CPU model is measured when it starts
        assert plan.command[plan.command.index("--chat_format") + 1] == HERMES_CHAT_FORMAT == "kopa-hermes-chatml"


def test_a_gguf_on_a_cuda_machine_goes_to_llama_cpp_saying_why_not_vllm(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    plan = plan_model_server(str(gguf), cuda=True, vllm=True, port=8004)
    assert plan.backend == "llama.cpp" and plan.reason.startswith("needs a Hugging Face model folder")
    assert plan.command[plan.command.index("--model") + 1] == str(gguf)


def test_the_llama_cpp_command_sets_threads_and_keeps_the_prompt_cache_off_unless_asked():
    plan = plan_model_server(None, backend="llama.cpp", n_threads=3, port=8005)
    command = list(plan.command)
    assert command[command.index("--n_threads") + 1] == command[command.index("--n_threads_batch") + 1] == "3"
    assert "--cache" not in command  # its states carry the logits outside the size limit (models.llama_cpp)
    assert plan.reason == "asked for" and plan.requires.keys() == {"llama_cpp"}
    cached = llama_cpp_command(Path("m.gguf"), host="127.0.0.1", port=1, n_threads=1, cache_bytes=1 << 28)
    assert cached[cached.index("--cache") + 1:cached.index("--cache_size") + 2] == [
        "true", "--cache_type", "ram", "--cache_size", str(1 << 28)]


def test_threads_are_the_cores_the_load_leaves_free():
    assert [default_threads(2, load) for load in (0.0, 0.6, 1.4, 3.0)] == [2, 1, 1, 1]
    assert default_threads(16, 0.0) == 4 and default_threads(8, 5.2) == 3 and default_threads(1, 0.0) == 1


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"model": "/models/qwen", "cuda": False, "vllm": False},
     "no backend can serve /models/qwen here (vllm: vLLM is not installed; llama.cpp: /models/qwen is not a GGUF "
     "file): give a .gguf for llama.cpp, or run on a CUDA machine with the [vllm] extra"),
    ({"model": "/models/qwen", "backend": "vllm", "cuda": False, "vllm": True}, "no CUDA device"),
    ({"model": "/models/qwen", "backend": "vllm", "cuda": True, "vllm": False}, "pip install 'kopa-appliance[vllm]'"),
    ({"model": "/m.gguf", "backend": "vllm", "cuda": True, "vllm": True}, "needs a Hugging Face model folder"),
    ({"model": "/nowhere/m.gguf", "cuda": False, "vllm": False}, "no GGUF file at /nowhere/m.gguf"),
    ({"model": "/models/qwen", "backend": "llama.cpp", "cuda": True, "vllm": True},
     "backend llama.cpp: /models/qwen is not a GGUF file"),
    ({"model": None, "backend": "tgi"}, "unknown backend 'tgi'; choose one of auto, vllm, llama.cpp"),
])
def test_a_plan_that_cannot_run_here_says_why(kwargs, message):
    with pytest.raises(ModelServerError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        plan_model_server(kwargs.pop("model"), port=8003, **kwargs)


def test_a_new_backend_is_one_planner_that_auto_reaches_after_the_others(monkeypatch):
    def plan_hf_cpu(request, machine):  # a trained checkpoint on the CPU, as the plan module's docstring says
        if request.is_gguf:
            raise BackendUnsuitable("not a model folder", "give a Hugging Face folder")
        return ServerPlan("hf-cpu", ("serve-hf", request.model or ""), {}, request.host, request.port, "ckpt",
                          "/health", reason="asked for", warm_up=True)

    monkeypatch.setitem(PLANNERS, "hf-cpu", plan_hf_cpu)
    plan = plan_model_server("/ckpt/step-100", cuda=False, vllm=False, port=8006)
    assert (plan.backend, plan.command, plan.reason) == ("hf-cpu", ("serve-hf", "/ckpt/step-100"),
                                                         "vLLM is not installed; /ckpt/step-100 is not a GGUF file")
    assert plan_model_server(None, cuda=False, vllm=False, port=8006).backend == "llama.cpp"  # the earlier one wins


# ----------------------------------------------------------------------------------- the request time limit


def test_the_request_limit_follows_the_measured_speed_with_a_floor():
    speed = ServerSpeed(prompt_tokens_per_s=100.0, decode_tokens_per_s=10.0)
    # 4 × (2000/100 + 200/10) + 15 = 175 s
    assert request_time_limit(speed, prompt_tokens=2000, max_tokens=200) == pytest.approx(175.0)
    assert request_time_limit(speed, prompt_tokens=2000, max_tokens=200, factor=2, slack_s=0) == pytest.approx(80.0)
    fast = ServerSpeed(prompt_tokens_per_s=5000.0, decode_tokens_per_s=500.0)
    assert request_time_limit(fast, prompt_tokens=2000, max_tokens=200) == LIMIT_FLOOR_S  # never below the floor
    slow = ServerSpeed(prompt_tokens_per_s=50.0, decode_tokens_per_s=5.0)
    assert request_time_limit(slow, prompt_tokens=2000, max_tokens=200) > request_time_limit(
        speed, prompt_tokens=2000, max_tokens=200)  # a busier machine gets more time


def test_agent_settings_carry_the_measured_limit_unless_overridden(unused_tcp_port):
    plan = replace(plan_model_server(None, backend="llama.cpp", port=unused_tcp_port), warm_up=False)
    server = ModelServer(plan)
    assert server.agent_settings() == LOCAL_DEFAULTS  # not measured: no limit of its own
    server.speed = ServerSpeed(prompt_tokens_per_s=400.0, decode_tokens_per_s=40.0)
    settings = server.agent_settings(max_turns=4)
    assert settings["request_timeout_s"] == round(request_time_limit(server.speed, prompt_tokens=N_CTX,
                                                                     max_tokens=256), 1)
    assert settings["max_turns"] == 4 and {k: settings[k] for k in LOCAL_DEFAULTS} == LOCAL_DEFAULTS
    assert server.agent_settings(request_timeout_s=9.0)["request_timeout_s"] == 9.0


# ----------------------------------------------------------------------------------- the process (a stub server)


def _plan(command: list[str], port: int, health: str = "/") -> ServerPlan:
    return ServerPlan("llama.cpp", tuple(command), {}, "127.0.0.1", port, "stub", health, reason="test")


def _stub(port: int) -> list[str]:
    return [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]


def test_a_server_is_waited_for_and_stopped_cleanly(unused_tcp_port):
    server = ModelServer(_plan(_stub(unused_tcp_port), unused_tcp_port), startup_timeout_s=30)
    with server:
        process = server.process
        assert server.healthy() and process is not None and process.poll() is None
    assert process.returncode == -15 and server.process is None and not server.healthy()  # SIGTERM, gone
    assert server.stop() is None  # twice is fine


async def test_the_async_form_waits_and_stops_the_same_way(unused_tcp_port):
    server = ModelServer(_plan(_stub(unused_tcp_port), unused_tcp_port), startup_timeout_s=30)
    async with server:
        process = server.process
        assert process is not None and process.poll() is None
        async with httpx.AsyncClient() as client:
            assert (await client.get(f"http://127.0.0.1:{unused_tcp_port}/")).status_code == 200
    assert process.returncode == -15 and server.process is None
    assert await server.astop() is None


def test_a_server_that_exits_before_it_is_healthy_is_an_error_with_its_log(unused_tcp_port):
    server = ModelServer(_plan([sys.executable, "-c", "import sys; print('bad model file'); sys.exit(3)"],
                               unused_tcp_port))
    with pytest.raises(ModelServerError, match=r"exited with code 3 before it was healthy:\nbad model file"):
        server.start()
    assert server.process is None


async def test_an_async_start_that_times_out_stops_the_child(unused_tcp_port):
    server = ModelServer(_plan([sys.executable, "-c", "import time; time.sleep(60)"], unused_tcp_port),
                         startup_timeout_s=0.5, stop_grace_s=5)
    with pytest.raises(ModelServerError, match=r"was not healthy at http://127.0.0.1:\d+/ within 0.5 s"):
        await server.astart()
    assert server.process is None


def test_a_missing_program_or_module_is_an_error_that_says_what_to_install(unused_tcp_port):
    with pytest.raises(ModelServerError, match="cannot start the llama.cpp server \\(/nowhere/serve\\)"):
        ModelServer(_plan(["/nowhere/serve"], unused_tcp_port)).start()
    plan = replace(_plan(_stub(unused_tcp_port), unused_tcp_port), requires={"no_such_module_x": "pip install x"})
    with pytest.raises(ModelServerError, match="needs the Python module no_such_module_x, .*; pip install x"):
        ModelServer(plan).start()


# A server answering 200 at /healthz with its working directory, on the port given last (``--port N``).
_HEALTHZ_SERVER = textwrap.dedent("""
    import http.server, os, sys
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/healthz" else 404)
            self.end_headers()
            self.wfile.write(os.getcwd().encode())
        def log_message(self, *args):
            pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[-1])), Health).serve_forever()
""")


def test_the_benchmarks_server_process_is_run_by_the_model_server_manager():
    from benchmarks.server_process import REPO, server_popen

    with server_popen([sys.executable, "-c", _HEALTHZ_SERVER], dict(os.environ), start_timeout=30) as (origin, proc):
        answer = httpx.get(f"{origin}/healthz", timeout=5)
        assert answer.status_code == 200 and answer.text == str(REPO) and proc.poll() is None
    assert proc.returncode == -15  # SIGTERM, waited for
    with pytest.raises(ModelServerError, match=r"exited with code 4 before it was healthy:\nno config"):
        with server_popen([sys.executable, "-c", "import sys; print('no config'); sys.exit(4)"], dict(os.environ)):
            pass


# ----------------------------------------------------------------------------------- the real llama.cpp server

THREADS = 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2


@pytest.fixture(scope="module")
def llama_plan() -> ServerPlan:
    # llama-cpp-python is a main dependency: no skip (importing it here would also leave two unclosed /dev/null
    # files in the worker, reported as ResourceWarnings at its exit)
    return plan_model_server(None, backend="llama.cpp", n_threads=THREADS)


async def test_llama_cpp_starts_healthy_measured_and_answers_then_stops(llama_plan):
    server = ModelServer(llama_plan, startup_timeout_s=180)
    async with server:
        process = server.process
        assert process is not None and process.poll() is None and server.healthy()
        assert server.speed is not None and server.speed.prompt_tokens_per_s > 0
        assert server.speed.decode_tokens_per_s > 0
        assert server.agent_settings()["request_timeout_s"] >= LIMIT_FLOOR_S
        async with httpx.AsyncClient() as client:
            reply = await client.post(f"{server.base_url}/chat/completions", timeout=120, json={
                "model": llama_plan.served_name, "messages": [{"role": "user", "content": "Say hi."}],
                "max_tokens": 4, "temperature": 0})
        assert reply.status_code == 200 and reply.json()["usage"]["completion_tokens"] >= 1
    assert process.returncode is not None and server.process is None and not server.healthy()


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")  # exited; a zombie waits for whoever adopted it to reap it


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("form", ["async", "sync"])
def test_a_killed_parent_leaves_no_llama_cpp_server_behind(llama_plan, form):
    script = textwrap.dedent(f"""
        import asyncio, sys, time
        from dataclasses import replace
        from models.plan import plan_model_server
        from models.server import ModelServer
        server = ModelServer(replace(plan_model_server(None, backend="llama.cpp", n_threads=1), warm_up=False),
                             startup_timeout_s=180)
        if {form!r} == "async":
            async def main():
                await server.astart()
                print(server.process.pid, flush=True)
                await asyncio.sleep(600)
            asyncio.run(main())
        else:
            server.start()
            print(server.process.pid, flush=True)
            time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    child = None
    try:
        line = parent.stdout.readline() if parent.stdout else ""
        assert line.strip().isdigit(), f"the parent printed {line!r} (exit code {parent.poll()})"
        child = int(line)
        assert not _gone(child)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 30
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(child), f"the llama.cpp server {child} outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
        if child is not None and not _gone(child):  # the test failed: do not leave the server running
            os.kill(child, signal.SIGKILL)
