"""Fingerprints: equal for requests that must replay the same, different otherwise, never holding a key."""

from __future__ import annotations

import httpx
import pytest

from recorder import Routes, request_key
from recorder.routes import UnknownRouteError

SANDBOX = Routes.sandbox("http://sandbox")
LIVE = Routes.live()


def key_of(url: str, routes: Routes = SANDBOX, method: str = "GET", content: bytes | None = None):
    request = httpx.Request(method, url, content=content)
    route, rel = routes.match(request.url)
    return request_key(request, route, rel)


def test_query_order_and_key_value_do_not_matter():
    a = key_of("http://sandbox/datago/1160100/service/x/getStockPriceInfo?serviceKey=A%2Bb%3D&pageNo=1&numOfRows=10")
    b = key_of("http://sandbox/datago/1160100/service/x/getStockPriceInfo?numOfRows=10&pageNo=1&serviceKey=other")
    assert a.fingerprint == b.fingerprint
    assert "serviceKey=***" in a.url and "A%2Bb" not in a.url and "serviceKey" not in a.canonical


@pytest.mark.parametrize("param", ["serviceKey", "ServiceKey", "crtfc_key", "KEY", "key", "OC", "apiKey"])
def test_every_platform_key_parameter_is_removed(param):
    k = key_of(f"http://sandbox/dart/api/list.json?{param}=secret123&corp_code=1")
    assert "secret123" not in k.url + k.canonical
    assert k.fingerprint == key_of("http://sandbox/dart/api/list.json?corp_code=1").fingerprint


def test_sandbox_and_live_recordings_share_fingerprints():
    sandbox = key_of("http://sandbox/dart/api/list.json?crtfc_key=k&corp_code=00126380")
    live = key_of("https://opendart.fss.or.kr/api/list.json?crtfc_key=k&corp_code=00126380", LIVE)
    assert sandbox.fingerprint == live.fingerprint and sandbox.url == "dart:/list.json?corp_code=00126380&crtfc_key=***"


def test_seoul_key_in_path_is_masked_and_pages_read_from_the_path():
    a = key_of("http://sandbox/seoul/REALKEY/json/CardSubwayStatsNew/11/20/20261130")
    b = key_of("http://sandbox/seoul/OTHERKEY/json/CardSubwayStatsNew/1/30/20261130")
    assert "REALKEY" not in a.url + a.canonical and a.url.startswith("seoul:/***/json/CardSubwayStatsNew/11/20")
    assert (a.page, a.size) == (2, 10) and (b.page, b.size) == (1, 30)
    assert a.fingerprint != b.fingerprint and a.query_fingerprint == b.query_fingerprint
    assert key_of("http://sandbox/seoul/K/json/CardSubwayStatsNew/1/5/20261129").query_fingerprint != a.query_fingerprint


@pytest.mark.parametrize(("url", "page", "size"), [
    ("http://sandbox/neis/hub/schoolInfo?KEY=k&pIndex=3&pSize=100&ATPT_OFCDC_SC_CODE=T10", 3, 100),
    ("http://sandbox/dart/api/list.json?crtfc_key=k&page_no=2&page_count=50", 2, 50),
    ("http://sandbox/law/DRF/lawSearch.do?OC=k&page=4&display=20&query=a", 4, 20),
    ("http://sandbox/ex/openapi/locationinfo/locationinfoUnit?key=k&pageNo=5&numOfRows=10", 5, 10),
])
def test_paging_is_read_per_platform_and_left_out_of_the_query_fingerprint(url, page, size):
    k = key_of(url)
    assert (k.page, k.size) == (page, size)
    other = key_of(url.replace(f"={page}", "=9", 1))
    assert other.fingerprint != k.fingerprint and other.query_fingerprint == k.query_fingerprint


def test_unpaged_requests_have_no_query_fingerprint_and_bodies_count():
    k = key_of("http://sandbox/dart/api/corpCode.xml?crtfc_key=k")
    assert k.page is None and k.query_fingerprint is None
    a = key_of("http://sandbox/dart/api/list.json", method="POST", content=b"a=1")
    b = key_of("http://sandbox/dart/api/list.json", method="POST", content=b"a=2")
    assert a.fingerprint != b.fingerprint


def test_a_url_under_no_platform_is_a_clear_error():
    with pytest.raises(UnknownRouteError, match="under no configured platform base URL"):
        key_of("http://elsewhere/api")


def test_an_echoed_key_is_masked_in_a_body_that_is_not_valid_utf8():
    """A garbled page (a fault cut a multi-byte character) still reaches the client: its echoed key must not."""
    from recorder.redaction import mask_echoed_keys

    garbled = '{"link": "/DRF/lawService.do?OC=secret-oc-key&x=1", "name": "민'.encode()[:-1] + b'"}'
    masked = mask_echoed_keys(garbled)
    assert b"secret-oc-key" not in masked and b"?OC=***&x=1" in masked
    clean = '{"link": "/DRF/lawService.do?oc=k2&x=1", "법령": "민법"}'.encode()
    assert mask_echoed_keys(clean).decode() == '{"link": "/DRF/lawService.do?oc=***&x=1", "법령": "민법"}'
