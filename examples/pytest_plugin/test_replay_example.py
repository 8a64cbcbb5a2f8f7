"""An agent test that replays a recorded bundle: no network, no keys, the same answers every run.

Run it from anywhere with the appliance installed: ``pytest examples/pytest_plugin``. The ``kopa`` plugin
(installed with the appliance) starts a strict-replay gateway for the marked bundle and hands the test its URL,
token and a connected MCP client; a call the bundle did not record fails the test, naming the call.
"""

import pytest


@pytest.mark.asyncio
@pytest.mark.kopa_bundle("kopa-default@3301bc57787fc3653bb4")
async def test_the_cheapest_petrol_on_the_namhae_line_is_recorded(kopa_replay):
    result = await kopa_replay.client.call_tool(
        "get_rest_area_fuel_prices", {"routeName": "남해선", "pageNo": 1, "numOfRows": 1000})

    assert not result.is_error
    prices = [r for r in result.structured_content["records"] if r.get("gasolinePrice")]
    assert prices, "the replayed answer holds fuel prices"
