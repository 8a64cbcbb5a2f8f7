"""Serving the tuned agent: the model server (vLLM or llama.cpp) and the agent endpoint in front of it.

    from appliance.serving import ModelServer, plan_model_server, create_agent_app, GatewayExecutor
    with ModelServer(plan_model_server(None)) as server:          # the packaged SmolLM2 on llama.cpp
        app = create_agent_app(OpenAIAgentConfig(base_url=server.base_url, model=server.plan.served_name),
                               GatewayExecutor(gateway.runtime), tokens={"s3cret"})

Modules: ``model_server`` (process management), ``agent_endpoint`` (the Starlette app and the server-side
tool loop), ``executors`` (who runs the calls), ``tool_calls`` (qwen3_coder XML: vLLM's parser or ours),
``service`` (an app on a loopback port in the running loop), ``endpoint_agent`` (`kopa bench run --agent endpoint`).
"""

from .agent_endpoint import AGENT_MODEL, EXTENSION_FIELD, create_agent_app, run_agent
from .executors import EpisodeExecutor, GatewayExecutor, RequestError, ToolExecutor
from .model_server import ModelServer, ModelServerError, ServerPlan, plan_model_server
from .tool_calls import FallbackQwen3CoderParser, ParsedCall, ParsedTurn, choose_parser

__all__ = ["AGENT_MODEL", "EXTENSION_FIELD", "EpisodeExecutor", "FallbackQwen3CoderParser", "GatewayExecutor",
           "ModelServer", "ModelServerError", "ParsedCall", "ParsedTurn", "RequestError", "ServerPlan",
           "ToolExecutor", "choose_parser", "create_agent_app", "plan_model_server", "run_agent"]
