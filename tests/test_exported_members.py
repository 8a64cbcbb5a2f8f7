"""Each package's public API is its __all__, and every name listed there exists (as httpx keeps them in step)."""

import importlib

import pytest

PACKAGES = ["public_apis", "sandbox", "mcp_gateway.catalog", "mcp_gateway.clients", "mcp_gateway.runtime",
            "mcp_gateway.server", "recorder", "recorder.cassette", "recorder.drift", "bench", "bench.scoring",
            "bench.agents", "bench.report", "bench.taskset", "edge.graph"]


@pytest.mark.parametrize("package", PACKAGES)
def test_all_lists_only_existing_public_names(package):
    module = importlib.import_module(package)
    assert len(set(module.__all__)) == len(module.__all__), "duplicate names in __all__"
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ names missing members: {missing}"
    assert all(not name.startswith("_") for name in module.__all__)
