"""A bounded memo of the in-process sandbox's answers, for the callers that make the same request many times.

    transport = MemoTransport(httpx.ASGITransport(app), max_bytes=256 << 20)
    transport.hits, transport.misses, transport.bytes

The world is read-only and the in-process sandbox injects no faults, so its answer is a function of the request
alone (method, URL, headers, body). EDGE synthesis asks it the same thing for many items: the list a chain starts
from, and the whole-result pages the recorder fetches with each such call (at 300 items half the golden calls
repeat one made before). The memo keeps each answer's bytes, least recently used first out once ``max_bytes`` is
passed; every caller gets a fresh ``httpx.Response`` of the same status, headers and body.
"""

from __future__ import annotations

from collections import OrderedDict

import httpx

__all__ = ["REPEAT_CALLERS_MEMO_BYTES", "MemoTransport"]

# the memo of a caller that repeats requests by design (EDGE's graph trials and synthesis, per gateway): Phase A's
# trials repeat about half their requests, a synthesis recording half its golden calls
REPEAT_CALLERS_MEMO_BYTES = 256 << 20

_Answer = tuple[int, list[tuple[str, str]], bytes]


class MemoTransport(httpx.AsyncBaseTransport):
    """``inner``'s answers, kept up to ``max_bytes`` of bodies (an answer larger than that is passed through)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, max_bytes: int):
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        self.inner, self.max_bytes = inner, max_bytes
        self._answers: OrderedDict[tuple[object, ...], _Answer] = OrderedDict()
        self.bytes = self.hits = self.misses = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        key = (request.method, str(request.url), tuple(request.headers.multi_items()), body)
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
            self.hits += 1
        else:
            self.misses += 1
            response = await self.inner.handle_async_request(request)
            answer = (response.status_code, response.headers.multi_items(), await response.aread())
            await response.aclose()
            self._keep(key, answer)
        status, headers, content = answer
        return httpx.Response(status, headers=headers, content=content, request=request)

    def _keep(self, key: tuple[object, ...], answer: _Answer) -> None:
        size = len(answer[2])
        if size > self.max_bytes:
            return
        self._answers[key] = answer
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, dropped = self._answers.popitem(last=False)
            self.bytes -= len(dropped[2])

    async def aclose(self) -> None:
        self._answers.clear()
        self.bytes = 0
        await self.inner.aclose()
