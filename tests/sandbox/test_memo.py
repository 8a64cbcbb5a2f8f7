"""The sandbox's answer memo: a repeated request is answered without the app, with the same status, headers and
body; anything that differs in the request is asked again; the bodies kept stay within the bound."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from sandbox.memo import MemoTransport


class Counting(httpx.AsyncBaseTransport):
    """The real sandbox app over ASGI, counting the requests that reach it."""

    def __init__(self, app):
        self.asgi, self.seen = httpx.ASGITransport(app), []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(str(request.url))
        return await self.asgi.handle_async_request(request)


async def _get_all(transport: httpx.AsyncBaseTransport, *asks: tuple[str, dict[str, str]]) -> list[httpx.Response]:
    """Each (path, headers) asked in turn through one client (closing a client closes its transport)."""
    async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as client:
        return [await client.get(path, headers=headers) for path, headers in asks]


def test_a_repeated_request_is_answered_from_the_memo_as_the_app_answered_it(sandbox_app):
    inner = Counting(sandbox_app)
    memo = MemoTransport(inner, max_bytes=1 << 20)

    kept: list[int] = []

    async def run() -> list[httpx.Response]:
        client = httpx.AsyncClient(transport=memo, base_url="http://sandbox")
        asked = [await client.get(path, headers=headers) for path, headers in (
            ("/healthz", {}), ("/healthz", {}), ("/", {}), ("/healthz", {"X-Asked-By": "another"}))]
        kept.append(memo.bytes)
        await client.aclose()  # closes the memo too: it holds nothing after
        return asked

    first, again, other, _ = asyncio.run(run())
    assert again.status_code == first.status_code == 200
    assert again.content == first.content and again.headers.multi_items() == first.headers.multi_items()
    assert again.json()["status"] == "ok"
    assert other.json()["platforms"]  # another path is another answer
    assert inner.seen == ["http://sandbox/healthz", "http://sandbox/", "http://sandbox/healthz"]  # a header differs
    assert (memo.hits, memo.misses) == (1, 3)
    assert kept == [len(first.content) * 2 + len(other.content)] and memo.bytes == 0


def test_the_memo_drops_the_least_recently_used_answers_past_its_bound(sandbox_app):
    inner = Counting(sandbox_app)

    health, index = (len(r.content) for r in asyncio.run(_get_all(httpx.ASGITransport(sandbox_app),
                                                                  ("/healthz", {}), ("/", {}))))
    memo = MemoTransport(inner, max_bytes=health + index - 1)  # room for one of the two only
    asyncio.run(_get_all(memo, ("/healthz", {}), ("/", {}), ("/healthz", {})))
    assert inner.seen == ["http://sandbox/healthz", "http://sandbox/", "http://sandbox/healthz"]
    assert memo.bytes <= memo.max_bytes
    small = MemoTransport(Counting(sandbox_app), max_bytes=health - 1)  # an answer larger than the bound: not kept
    asyncio.run(_get_all(small, ("/healthz", {})))
    assert small.bytes == 0 and small.misses == 1
    with pytest.raises(ValueError, match="max_bytes"):
        MemoTransport(inner, max_bytes=0)
