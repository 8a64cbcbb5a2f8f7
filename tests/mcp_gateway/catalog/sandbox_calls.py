"""Test helper: call a tool's endpoint on the sandbox with plain httpx, the way each family expects.

This is deliberately not the platform client (tested on its own): it reads only what the
spec says (endpoint family, path, fixed params, path params, the KEY and paging upstream
names) and asks for JSON, so a spec that points at nothing, or names a parameter wrongly,
shows up here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from mcp_gateway.catalog import ParamKind, ToolSpec
from sandbox import platform_specs

# (platform id, base) -> sandbox mount of that base URL
MOUNTS = {(s.id, "schoolinfo" if s.host_prefix == "/schoolinfo" else "main"): s.mount for s in platform_specs()}
FORMAT_PARAM = {"expressway": ("type", "json"), "hub": ("Type", "json"), "law": ("type", "JSON"),
                "datago": ("resultType", "json")}


@dataclass
class Answer:
    status: int
    body: Any  # parsed JSON, or None when the body is not JSON
    content_type: str


def _upstream_name(spec: ToolSpec, kind: ParamKind) -> str | None:
    param = next((p for p in spec.params if p.kind is kind), None)
    return None if param is None else (param.upstream or param.name)


def call_tool_endpoint(http: httpx.Client, spec: ToolSpec, args: dict[str, str], key: str,
                       page_size: int = 1) -> Answer:
    ep = spec.endpoint
    assert ep is not None
    mount = MOUNTS[(ep.platform, ep.base)]
    if ep.family == "seoul":
        segments = [args.get(p, "") for p in ep.path_params]
        while segments and segments[-1] == "":
            segments.pop()
        url = "/".join([mount, key, "json", ep.path, "1", str(page_size), *segments])
        response = http.get(url)
    else:
        params: dict[str, Any] = {**ep.fixed, **{k: v for k, v in args.items() if k not in ep.local_filters}}
        params[_upstream_name(spec, ParamKind.API_KEY) or "KEY"] = key
        if ep.family in FORMAT_PARAM:
            name, value = FORMAT_PARAM[ep.family]
            params["dataFormat" if ep.platform == "hrdk" else name] = value
        if spec.paged and ep.upstream_paged and ep.family != "schoolinfo":
            params[_upstream_name(spec, ParamKind.PAGE_NO)] = 1
            params[_upstream_name(spec, ParamKind.PAGE_SIZE)] = page_size
        response = http.get(f"{mount}/{ep.path}", params=params)
    try:
        body = response.json()
    except ValueError:
        body = None
    return Answer(response.status_code, body, response.headers.get("content-type", ""))
