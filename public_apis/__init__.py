"""The ten Korean public API platforms: ids, real base URLs and hosts, auth parameters, sandbox mounts.

The one fact sheet that every layer shares and that depends on nothing: the recorder names
requests by platform and path below these base URLs, the gateway's clients send to them, and the
sandbox emulates each platform under ``host_prefix`` + the real base URL's path. Nothing of ours
is imported here, so ``recorder`` and ``sandbox`` stay independent of each other.

Two modules beside it, for the same reason: ``public_apis.ports.free_port``, the loopback port every layer's
servers are started on, and ``public_apis.ngrams``, the one character n-gram analyser and index that the gateway's
tool search and EDGE's skeleton, proposer and filters share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

MAIN = "main"  # name of a platform's first base; a second one (학교알리미 beside NEIS) is named by its host prefix


@dataclass(frozen=True)
class PlatformSpec:
    """Identity of one platform base and where it lives, live and in the sandbox."""

    id: str  # short id used in config and cassettes, e.g. "dart"
    title: str  # Korean display name
    domain: str  # traffic | finance | education | law | politics | district
    live_base_url: str  # the real service's base URL, e.g. "https://opendart.fss.or.kr/api"
    host: str  # the real host name, used for Host-header dispatch
    host_prefix: str  # sandbox path prefix standing for the host, e.g. "/dart"
    key_param: str  # name of the auth parameter ("crtfc_key", "KEY", ...) or "path" for Seoul
    formats: tuple[str, ...] = ("json",)

    @property
    def mount(self) -> str:
        """Sandbox path under which this platform's routes live (host prefix + real path)."""
        return self.host_prefix + urlsplit(self.live_base_url).path.rstrip("/")

    def sandbox_base_url(self, origin: str) -> str:
        """Base URL of this platform on a sandbox reached at ``origin`` (e.g. http://127.0.0.1:8088)."""
        return origin.rstrip("/") + self.mount


# In the order of the paper's Table 5 (traffic, finance, education, law, politics, district).
PLATFORM_SPECS: tuple[PlatformSpec, ...] = (
    PlatformSpec(id="ex", title="한국도로공사 공공데이터 포털", domain="traffic",
                 live_base_url="https://data.ex.co.kr/openapi", host="data.ex.co.kr", host_prefix="/ex",
                 key_param="key", formats=("json", "xml")),
    PlatformSpec(id="seoul", title="서울 열린데이터 광장", domain="traffic",
                 live_base_url="http://openapi.seoul.go.kr:8088", host="openapi.seoul.go.kr", host_prefix="/seoul",
                 key_param="path", formats=("json", "xml")),
    PlatformSpec(id="dart", title="OpenDART 전자공시", domain="finance",
                 live_base_url="https://opendart.fss.or.kr/api", host="opendart.fss.or.kr", host_prefix="/dart",
                 key_param="crtfc_key", formats=("json", "xml")),
    PlatformSpec(id="krx", title="금융위원회 주식시세정보 (KRX 시세)", domain="finance",
                 live_base_url="https://apis.data.go.kr/1160100/service", host="apis.data.go.kr",
                 host_prefix="/datago", key_param="serviceKey", formats=("json", "xml")),
    PlatformSpec(id="kdic", title="예금보험공사 부보금융회사 정보", domain="finance",
                 live_base_url="https://apis.data.go.kr/B190017/service", host="apis.data.go.kr",
                 host_prefix="/datago", key_param="ServiceKey", formats=("json", "xml")),
    PlatformSpec(id="edu", title="교육 데이터 (NEIS 교육정보 개방 포털·학교알리미)", domain="education",
                 live_base_url="https://open.neis.go.kr/hub", host="open.neis.go.kr", host_prefix="/neis",
                 key_param="KEY", formats=("json", "xml")),
    PlatformSpec(id="edu", title="학교알리미 공시정보", domain="education",
                 live_base_url="https://www.schoolinfo.go.kr", host="www.schoolinfo.go.kr",
                 host_prefix="/schoolinfo", key_param="apiKey", formats=("json",)),
    PlatformSpec(id="hrdk", title="한국산업인력공단 (HRD Korea)", domain="education",
                 live_base_url="https://apis.data.go.kr/B490007", host="apis.data.go.kr", host_prefix="/datago",
                 key_param="serviceKey", formats=("json", "xml")),
    PlatformSpec(id="law", title="국가법령정보센터 (법제처 DRF)", domain="law",
                 live_base_url="https://www.law.go.kr/DRF", host="www.law.go.kr", host_prefix="/law",
                 key_param="OC", formats=("json", "xml")),
    PlatformSpec(id="assembly", title="열린국회정보", domain="politics",
                 live_base_url="https://open.assembly.go.kr/portal/openapi", host="open.assembly.go.kr",
                 host_prefix="/assembly", key_param="KEY", formats=("json", "xml")),
    PlatformSpec(id="gg", title="경기데이터드림", domain="district",
                 live_base_url="https://openapi.gg.go.kr", host="openapi.gg.go.kr", host_prefix="/gg",
                 key_param="KEY", formats=("json", "xml")),
)

PLATFORM_IDS: tuple[str, ...] = tuple(dict.fromkeys(s.id for s in PLATFORM_SPECS))
DATAGO_PLATFORMS = ("krx", "kdic", "hrdk")  # one data.go.kr portal key serves all three


def base_name(spec: PlatformSpec) -> str:
    """``main`` for a platform's first base, else the base's host prefix without the slash."""
    first = next(s for s in PLATFORM_SPECS if s.id == spec.id)
    return MAIN if first == spec else spec.host_prefix.strip("/")


def platform_spec(platform: str, base: str = MAIN) -> PlatformSpec:
    """The spec of ``platform``'s base ``base`` (``platform_spec("edu", "schoolinfo")`` for 학교알리미)."""
    for spec in PLATFORM_SPECS:
        if spec.id == platform and base_name(spec) == base:
            return spec
    raise KeyError(f"unknown platform base {platform!r}/{base!r}; platform ids: {', '.join(PLATFORM_IDS)}")


def platform_bases(url_of: Callable[[PlatformSpec], str]) -> dict[tuple[str, str], str]:
    """``{(platform, base name): base URL}`` over every platform base, the URL chosen by ``url_of``."""
    return {(spec.id, base_name(spec)): url_of(spec).rstrip("/") for spec in PLATFORM_SPECS}


def live_bases() -> dict[tuple[str, str], str]:
    return platform_bases(lambda s: s.live_base_url)


def sandbox_bases(origin: str) -> dict[tuple[str, str], str]:
    """The sandbox served at ``origin`` (``http://127.0.0.1:8088``, or ``http://sandbox`` over ASGI)."""
    return platform_bases(lambda s: s.sandbox_base_url(origin))


__all__ = ["DATAGO_PLATFORMS", "MAIN", "PLATFORM_IDS", "PLATFORM_SPECS", "PlatformSpec", "base_name",
           "live_bases", "platform_bases", "platform_spec", "sandbox_bases"]
