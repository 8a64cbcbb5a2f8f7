"""Serving the tuned agent: the model server (vLLM or llama.cpp) and the agent endpoint in front of it.

    from appliance.serving import ModelServer, plan_model_server, create_agent_app, GatewayExecutor
    with ModelServer(plan_model_server(None)) as server:          # the packaged SmolLM2 on llama.cpp
        app = create_agent_app(OpenAIAgentConfig(base_url=server.base_url, model=server.plan.served_name),
                               GatewayExecutor(gateway.runtime), tokens={"s3cret"})

Modules: ``model_server`` (process management), ``agent_endpoint`` (the Starlette app and the server-side
tool loop), ``executors`` (who runs the calls), ``tool_calls`` (qwen3_coder XML: vLLM's parser or ours),
``service`` (an app on a loopback port in the running loop), ``endpoint_agent`` (`kopa bench run --agent endpoint`).
"""

from importlib import import_module
from typing import Any

# Names are imported on first use, so that ``appliance.serving.tool_calls`` alone (the parsers) loads without the
# web stack: the vLLM parser check runs where only vLLM and this package's parsers are installed.
_HOMES = {
    "agent_endpoint": ("AGENT_MODEL", "EXTENSION_FIELD", "create_agent_app", "run_agent"),
    "executors": ("EpisodeExecutor", "GatewayExecutor", "RequestError", "ToolExecutor"),
    "model_server": ("ModelServer", "ModelServerError", "ServerPlan", "plan_model_server"),
    "tool_calls": ("FallbackQwen3CoderParser", "ParsedCall", "ParsedTurn", "choose_parser"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)
