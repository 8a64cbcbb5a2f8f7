"""appliance: the `kopa` command, configuration, the operational metadata DB and service start-up.

Importing it hands the bench agent registry the agent endpoint (``appliance.serving``), which the ``endpoint``
agent plays through: bench may not import the appliance, so its registry is given the server here, and every
benchmark run of the appliance (``kopa bench run``, the console's bench job) can then make that agent.
"""

from typing import Any

from bench.agents.registry import provide_agent_server

__all__: list[str] = []  # a namespace: import the modules themselves


def _serve_endpoint_agent(model_config: Any) -> Any:
    from .serving.endpoint_agent import EndpointAgent  # the web stack loads only when the agent is opened

    return EndpointAgent.serving(model_config)


provide_agent_server(_serve_endpoint_agent)
