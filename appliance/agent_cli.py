"""`kopa agent`: serve the tuned agent.

    kopa agent serve [--model PATH] [--backend auto|vllm|llama.cpp] [--port N] [--print-command]
        the model server alone: vLLM (CUDA + the [vllm] extra) or llama.cpp (a GGUF, default the packaged SmolLM2,
        or a trained LoRA checkpoint folder over its base GGUF)
    kopa agent endpoint [--model-url URL --model-name NAME | --model PATH] [--tools a,b] [--host H --port N]
        the OpenAI-compatible agent endpoint (/v1/chat/completions) with the tool loop on the appliance; without
        --model-url or kopa.toml [models.agent] base_url it starts the model server itself and stops it on exit

The endpoint's model settings are the agent's model profile (kopa.toml ``[models.agent]``: base_url, model, api_key,
temperature, max_tokens, timeout_s, ...; ``KOPA_MODELS__AGENT__*`` wins over the file) and the episode limits
(``[episode]``); the command's options win over both (``endpoint_model_config``).

Bearer tokens are the gateway's (``KOPA_GATEWAY__TOKENS``); with none configured one is generated per start and
printed once on stderr. Heavy imports happen inside the commands: ``kopa`` starts fast.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from .config import KopaSettings

if TYPE_CHECKING:
    from bench.agents.llm_config import OpenAIAgentConfig

agent_app = typer.Typer(help="Serve the tuned agent: model server (vLLM or llama.cpp) and the agent endpoint.",
                        no_args_is_help=True)
err = Console(stderr=True, soft_wrap=True)

DEFAULT_ENDPOINT_PORT = 8766
UNNAMED_MODEL = "default"  # sent when neither --model-name nor [models.agent] model names one

ModelOpt = Annotated[str | None, typer.Option("--model", help="a Hugging Face model folder (vLLM), a .gguf file or a "
                                                              "trained LoRA checkpoint folder (llama.cpp over its base "
                                                              "GGUF); default: the packaged SmolLM2 GGUF")]
BackendOpt = Annotated[str, typer.Option(help="auto (vLLM when CUDA and vLLM are present) | vllm | llama.cpp")]
ThinkingOpt = Annotated[bool | None, typer.Option("--thinking/--no-thinking", help="override the chat template's "
                                                  "enable_thinking (default: the template's, as in training)")]


def _plan(model: str | None, backend: str, host: str, port: int | None, thinking: bool | None):
    from models.plan import check_model_path, plan_model_server

    if model is not None:
        check_model_path(model)  # one line naming the path, before any backend is asked
    return plan_model_server(model, backend=backend, host=host, port=port, enable_thinking=thinking)


@agent_app.command("serve")
def serve(model: ModelOpt = None, backend: BackendOpt = "auto",
          host: Annotated[str, typer.Option(help="interface the model server listens on")] = "127.0.0.1",
          port: Annotated[int | None, typer.Option(help="TCP port (default: a free one)", min=1, max=65535)] = None,
          thinking: ThinkingOpt = None,
          print_command: Annotated[bool, typer.Option("--print-command", help="print the plan as JSON, start "
                                                                               "nothing")] = False) -> None:
    """Start the model server, wait until it is healthy, serve until Ctrl-C, then stop it cleanly."""
    from models.server import ModelServer

    plan = _plan(model, backend, host, port, thinking)
    if print_command:
        print(json.dumps({"backend": plan.backend, "reason": plan.reason, "command": list(plan.command),
                          "env": dict(plan.env), "base_url": plan.base_url, "served_name": plan.served_name},
                         indent=1))
        return
    err.print(f"starting the {plan.backend} model server ({plan.reason}) …")
    with ModelServer(plan) as server:
        speed = "" if server.speed is None else (f" ({server.speed.prompt_tokens_per_s:.0f} prompt, "
                                                 f"{server.speed.decode_tokens_per_s:.0f} decode tokens/s)")
        err.print(f"model server {plan.served_name!r} ({plan.backend}) healthy at {server.base_url}{speed}; "
                  "Ctrl-C stops")
        try:
            while server.process is not None and server.process.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        code = server.process.returncode if server.process is not None else None
    if code not in (None, 0, -15):
        raise RuntimeError(f"the model server exited with code {code}")
    err.print("model server stopped")


def endpoint_model_config(settings: KopaSettings, *, model_url: str | None = None, model_name: str | None = None,
                          max_turns: int | None = None, max_calls: int | None = None,
                          server_defaults: Mapping[str, Any] | None = None) -> OpenAIAgentConfig:
    """The model configuration ``kopa agent endpoint`` serves with. Strongest first: the options (``model_url``,
    ``model_name``, ``max_turns``, ``max_calls``; None: not given), what ``settings`` sets (``[models.agent]`` and
    ``[episode]``, the environment winning over kopa.toml), ``server_defaults`` (what a model server started here
    needs: ``ModelServer.agent_settings()``), then the agent profile's defaults.

    Raises:
        ValueError: no model server URL from the options or the settings.
        pydantic.ValidationError: a value is out of range.
    """
    from bench.agents.llm_config import OpenAIAgentConfig

    profile, limits = settings.models.agent, settings.episode
    # a value written in kopa.toml or the environment beats the started server's defaults; the sections' own
    # defaults do not (the profile's temperature 0.7 would undo the local model's 0.0)
    written = {name: getattr(section, name) for section in (profile, limits) for name in section.model_fields_set}
    options = {k: v for k, v in {"base_url": model_url, "model": model_name, "max_turns": max_turns,
                                  "max_calls": max_calls}.items() if v is not None}
    values: dict[str, Any] = {"endpoint": profile, "limits": limits, **(server_defaults or {}), **written, **options}
    values.setdefault("model", UNNAMED_MODEL)
    return OpenAIAgentConfig.model_validate(values)


@agent_app.command("endpoint")
def endpoint(
    model_url: Annotated[str | None, typer.Option(help="a running OpenAI-compatible model server (…/v1); default: "
                                                       "[models.agent] base_url of kopa.toml, else start one")] = None,
    model_name: Annotated[str | None, typer.Option(help="the model name that server serves; default: "
                                                        "[models.agent] model")] = None,
    model: ModelOpt = None, backend: BackendOpt = "auto", thinking: ThinkingOpt = None,
    tools: Annotated[str | None, typer.Option(help="comma-separated tools offered when a request names none")] = None,
    max_calls: Annotated[int | None, typer.Option(help="tool calls per request (the call budget); default: "
                                                       "[episode] max_calls of kopa.toml (30)", min=0)] = None,
    max_turns: Annotated[int | None, typer.Option(help="model turns per request; default: [episode] max_turns (15)",
                                                  min=1)] = None,
    host: Annotated[str, typer.Option(help="interface the endpoint listens on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port", min=1, max=65535)] = DEFAULT_ENDPOINT_PORT,
) -> None:
    """Serve /v1/chat/completions: the tool loop runs here, its calls go through the chat-profile gateway."""
    import contextlib

    import uvicorn

    from mcp_gateway.gateway import open_gateway
    from models.server import ModelServer
    from models.toolcalls import choose_parser

    from .sandbox_service import in_process_sandbox
    from .serving.agent_endpoint import create_agent_app
    from .serving.executors import GatewayExecutor

    settings = KopaSettings()
    gateway = settings.gateway
    if model_url is not None and model is not None:
        raise ValueError("give --model-url (a running model server) or --model (start one), not both")
    if model_url is None and model is None:
        model_url = settings.models.agent.base_url  # a running model server named in kopa.toml or the environment
    with contextlib.ExitStack() as stack:
        defaults: dict = {}
        context_tokens = None  # known when the model server is started here: requests are checked against it
        if model_url is None:
            plan = _plan(model, backend, "127.0.0.1", None, thinking)
            err.print(f"starting the {plan.backend} model server ({plan.reason}) …")
            server = stack.enter_context(ModelServer(plan))
            model_url, model_name = server.base_url, plan.served_name
            defaults = server.agent_settings()  # with the measured request limit
            context_tokens = plan.context_tokens
        config = endpoint_model_config(settings, model_url=model_url, model_name=model_name, max_turns=max_turns,
                                       max_calls=max_calls, server_defaults=defaults)
        upstream = "sandbox" if gateway.upstream == "replay" else gateway.upstream
        opened = open_gateway(upstream=upstream, sandbox=in_process_sandbox(settings) if upstream == "sandbox"
                              else None, profile="chat", home=settings.home_dir, key_file=gateway.key_file)
        tokens = {t.get_secret_value() for t in gateway.tokens}
        if not tokens:
            token = secrets.token_urlsafe(24)
            tokens = {token}
            err.print(f"no gateway token configured (KOPA_GATEWAY__TOKENS); this run accepts: Bearer {token}")
        default_tools = [t.strip() for t in (tools or "").split(",") if t.strip()]
        parser = choose_parser()  # every text format, the bench's reader and typing rule (models.toolcalls)
        app = create_agent_app(config, GatewayExecutor(opened.runtime, default_tools=default_tools), tokens=tokens,
                               parser=parser, resources=[opened], context_tokens=context_tokens)
        err.print(f"agent endpoint on http://{host}:{port}/v1/chat/completions (model {config.model} at {model_url}, "
                  f"{upstream} upstream, chat profile, tool-call parser {parser.name})")
        uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
