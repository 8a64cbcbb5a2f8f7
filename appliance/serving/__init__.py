"""Serving the tuned agent: the agent endpoint in front of a model server (``models.server``: vLLM or llama.cpp).

    from appliance.serving import create_agent_app, GatewayExecutor
    from models.plan import plan_model_server
    from models.server import ModelServer
    with ModelServer(plan_model_server(None)) as server:          # the packaged SmolLM2 on llama.cpp
        app = create_agent_app(OpenAIAgentConfig(base_url=server.base_url, model=server.plan.served_name,
                                                 **server.agent_settings()),
                               GatewayExecutor(gateway.runtime), tokens={"s3cret"})

Modules: ``agent_endpoint`` (the Starlette app and the server-side tool loop; tool calls are read with
``models.toolcalls``), ``request_checks`` (the client's mistakes, refused with a 4xx before the model server is
called), ``executors`` (who runs the calls), ``service`` (an app on a loopback port in the running
loop), ``endpoint_agent`` (`kopa bench run --agent endpoint`).
"""

from importlib import import_module
from typing import Any

# Names are imported on first use: the web stack loads only when a name that needs it is asked for.
_HOMES = {
    "agent_endpoint": ("AGENT_MODEL", "EXTENSION_FIELD", "create_agent_app", "run_agent"),
    "executors": ("EpisodeExecutor", "GatewayExecutor", "RequestError", "ToolExecutor"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)
