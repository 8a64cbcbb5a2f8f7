"""The generic parameters every upstream tool shares: the API key and the page number and size.

Spec data files (``specs/*.json``, ``data/datasets.json.gz``) hold only a tool's own
parameters. ``with_generic_params`` adds the generic ones the same way for every tool, so the
convention lives in one place: the key is ``KEY`` (kind API_KEY, mapped to the platform's own
auth parameter), paging is ``pageNo``/``numOfRows`` (mapped to the family's own names where
the upstream pages by number; Seoul's row window and the unpaged upstreams are computed by the
client).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .spec import ParamKind


@dataclass(frozen=True)
class Platform:
    """What the catalog needs to know about one platform (the sandbox's PlatformSpec is the reference)."""

    id: str
    title_ko: str
    domain: str
    key_param: str | None  # the upstream auth parameter; None: in the URL path (Seoul)


PLATFORMS: dict[str, Platform] = {p.id: p for p in (
    Platform("ex", "한국도로공사 공공데이터 포털", "traffic", "key"),
    Platform("seoul", "서울 열린데이터 광장", "traffic", None),
    Platform("dart", "OpenDART 전자공시", "finance", "crtfc_key"),
    Platform("krx", "금융위원회 주식시세정보 (KRX 시세)", "finance", "serviceKey"),
    Platform("kdic", "예금보험공사 부보금융회사 정보", "finance", "ServiceKey"),
    Platform("edu", "교육 데이터 (NEIS 교육정보 개방 포털·학교알리미)", "education", "KEY"),
    Platform("hrdk", "한국산업인력공단 (HRD Korea)", "education", "serviceKey"),
    Platform("law", "국가법령정보센터 (법제처 DRF)", "law", "OC"),
    Platform("assembly", "열린국회정보", "politics", "KEY"),
    Platform("gg", "경기데이터드림", "district", "KEY"),
)}
SCHOOLINFO_KEY_PARAM = "apiKey"  # 학교알리미 (edu platform, base "schoolinfo") spells its key differently

# Upstream names of (page number, page size) per envelope family when the upstream pages by number.
PAGING_NAMES: dict[str, tuple[str, str]] = {
    "hub": ("pIndex", "pSize"), "dart": ("page_no", "page_count"), "law": ("page", "display"),
    "datago": ("pageNo", "numOfRows"), "expressway": ("pageNo", "numOfRows"),
}
KEY_NAME, PAGE_NO_NAME, PAGE_SIZE_NAME = "KEY", "pageNo", "numOfRows"
DEFAULT_PAGE_SIZE = 10


class SpecDataError(ValueError):
    """A spec data file breaks a catalog rule; the message names the file and the tool."""


def key_tool_name(platform: str) -> str:
    return f"get_{platform}_api_key"


def _key_param(endpoint: dict[str, Any], source: str, name: str) -> dict[str, Any]:
    platform = PLATFORMS.get(endpoint.get("platform", ""))
    if platform is None:
        raise SpecDataError(f"{source}: tool {name!r} names unknown platform {endpoint.get('platform')!r}; "
                            f"known: {', '.join(PLATFORMS)}")
    upstream = SCHOOLINFO_KEY_PARAM if endpoint.get("base") == "schoolinfo" else platform.key_param
    param: dict[str, Any] = {
        "name": KEY_NAME, "kind": ParamKind.API_KEY.value, "required": True,
        "description_ko": f"{platform.title_ko} 인증키. {key_tool_name(platform.id)} 도구가 돌려준 키 토큰을 그대로 넣으세요.",
    }
    if upstream not in (None, KEY_NAME):
        param["upstream"] = upstream
    return param


def _paging_params(endpoint: dict[str, Any]) -> list[dict[str, Any]]:
    max_size = endpoint.get("max_page_size", 100)
    names = PAGING_NAMES.get(endpoint["family"]) if endpoint.get("upstream_paged", True) else None
    page_no: dict[str, Any] = {"name": PAGE_NO_NAME, "type": "integer", "kind": ParamKind.PAGE_NO.value, "default": 1,
                               "description_ko": "가져올 페이지 번호(1부터). 결과의 total_count를 보고 다음 페이지를 요청하세요."}
    page_size: dict[str, Any] = {"name": PAGE_SIZE_NAME, "type": "integer", "kind": ParamKind.PAGE_SIZE.value,
                                 "default": DEFAULT_PAGE_SIZE,
                                 "description_ko": f"한 페이지의 레코드 수(1~{max_size}, 기본 {DEFAULT_PAGE_SIZE})."}
    if names is not None:
        for param, upstream in zip((page_no, page_size), names):
            if upstream != param["name"]:
                param["upstream"] = upstream
    return [page_no, page_size]


def with_generic_params(raw: dict[str, Any], source: str) -> dict[str, Any]:
    """The spec dict with KEY first and pageNo/numOfRows last (upstream tools; paging only if paged)."""
    name = raw.get("name", "?")
    own = raw.get("params", [])
    clash = [p["name"] for p in own if p.get("kind", ParamKind.NORMAL.value) != ParamKind.NORMAL.value
             or p["name"] in (KEY_NAME, PAGE_NO_NAME, PAGE_SIZE_NAME)]
    if clash:
        raise SpecDataError(f"{source}: tool {name!r} declares generic parameter(s) {clash}; "
                            "the loader adds KEY, pageNo and numOfRows itself")
    endpoint = raw.get("endpoint")
    if endpoint is None:
        return raw
    params = [_key_param(endpoint, source, name), *own]
    if raw.get("paged", True):
        params += _paging_params(endpoint)
    return {**raw, "params": params}
