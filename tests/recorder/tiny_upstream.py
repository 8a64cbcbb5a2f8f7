"""Test helper: a tiny upstream under DART's sandbox path that counts its answers, and a recorder run.

``python -m tests.recorder.tiny_upstream ROOT NAME TAG N`` records N requests through the
recorder transport into bundle NAME under ROOT and commits (used to race two recorders).
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from recorder import CassetteStore, Mode, RecorderTransport, Routes

ORIGIN = "http://sandbox"
ROUTES = Routes.sandbox(ORIGIN)
KEY = "tiny-Secret+Key/="


def counting_app() -> Starlette:
    counter = itertools.count(1)

    async def answer(request: Request) -> JSONResponse:
        if request.query_params.get("crtfc_key") != KEY:
            return JSONResponse({"status": "010", "message": "등록되지 않은 키입니다."})
        echo = request.query_params.get("echo_key")
        body = {"status": "000", "n": next(counter), "q": request.query_params.get("q")}
        if echo:
            body["link"] = f"/DRF/lawService.do?OC={KEY}&x=1" if echo == "named" else f"see {KEY}"
        return JSONResponse(body)

    return Starlette(routes=[Route("/dart/api/{name}", answer)])


async def record(root: Path, name: str, tag: str, n: int) -> None:
    recording = CassetteStore(root).recording(name, keys={"dart": KEY})
    transport = RecorderTransport(Mode.RECORD, routes=ROUTES, inner=httpx.ASGITransport(counting_app()),
                                  recording=recording, source="sandbox@test")
    async with httpx.AsyncClient(transport=transport) as http:
        for i in range(n):
            await http.get(f"{ORIGIN}/dart/api/list.json", params={"crtfc_key": KEY, "q": f"{tag}-{i}"})
    recording.commit()


if __name__ == "__main__":
    root, name, tag, n, start_at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    time.sleep(max(0.0, start_at - time.time()))  # both racers commit at about the same moment
    asyncio.run(record(Path(root), name, tag, n))
