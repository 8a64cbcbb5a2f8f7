"""Talking to models: one way for the bench, the agent endpoint, EDGE and training.

    from models import ChatClient, ModelSettings
    profile = KopaSettings().models.judge                    # one profile per role: agent, judge, proposer, writer
    async with ChatClient(profile, role="judge") as client:  # the openai SDK: its retries and timeouts
        reply = await client.complete(messages)

Modules: ``settings`` (the endpoint profiles, a section of ``KopaSettings``), ``client`` (the OpenAI-compatible
chat client), ``errors`` (the exception tree), ``server`` (the model-server manager) with ``plan`` (which backend
serves a model: ``llama_cpp``, ``vllm``),
``toolcalls`` (one reader per tool-call wire format, one value-typing rule from the tool's JSON Schema).
"""

from importlib import import_module
from typing import Any

# Names are imported on first use: ``appliance.config`` reads ``models.settings`` on every ``kopa`` start, and the
# openai SDK behind ``client`` takes most of a second to import.
_HOMES = {
    "client": ("ChatClient", "ChatReply"),
    "errors": ("EndpointError", "ErrorKind", "ModelError", "ModelServerError"),
    "plan": ("plan_model_server",),
    "server": ("ModelServer", "ServerPlan", "ServerSpeed", "request_time_limit"),
    "settings": ("AgentProfile", "EndpointProfile", "JudgeProfile", "ModelSettings", "ProposerProfile",
                 "WriterProfile"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)
