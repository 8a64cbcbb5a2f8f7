"""vcrpy interoperability, both ways, with stock vcrpy.

Real parts: the gateway recording against the in-process sandbox, vcrpy's own loader, matcher
and httpx patch serving the exported cassette (no server behind those URLs: a miss fails), and
vcrpy recording real httpx requests to the sandbox on a loopback port, imported and replayed
through the recorder's transport.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import zipfile
from pathlib import Path
from urllib.parse import quote

import httpx
import pyarrow.parquet as pq
import pytest
import vcr
import yaml
from vcr.errors import CannotOverwriteExistingCassetteException
from vcr.request import Request as VcrRequest
from vcr.serialize import serialize
from vcr.serializers import yamlserializer

from mcp_gateway.gateway import open_gateway
from recorder import (
    MASK,
    CassetteStore,
    Interaction,
    Origin,
    RecorderTransport,
    Route,
    Routes,
    UnknownRouteError,
    request_key,
)
from recorder.cassette import INDEX
from recorder.redaction import KeyScanner
from recorder.vcr import (
    VcrImportError,
    absolute_uri,
    export_vcr,
    import_vcr,
    mask_secrets_for_vcr,
    mask_uri,
)
from sandbox import default_keys
from tests.conftest import TEST_DATA_DIR, sandbox_upstream

KEYS = default_keys()
# Seoul (key in the path), DART's corpCode ZIP (binary), data.go.kr (key with +/=), NEIS, 학교알리미
# (a second base of one platform), law.go.kr (OC echoed in bodies).
CALLS = [
    ("search_subway_stations", {"LINE_NUM": "02호선"}),
    ("find_dart_corp_code", {"corp_name": "삼성"}),
    ("list_deposit_insured_institutions", {"numOfRows": 5}),
    ("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}),
    ("search_laws", {"query": "민법"}),
    ("school_basic_disclosure", {}),  # codes taken from the world (see calls_for)
]


def calls_for(world) -> list[tuple[str, dict]]:
    school = world.rows("SELECT _kind_code AS k, _sgg_code AS s FROM edu_school LIMIT 1")[0]
    return [(tool, {"schulKndCode": school["k"], "sggCode": school["s"]} if tool == "school_basic_disclosure" else args)
            for tool, args in CALLS]


def stock_vcr(**kw) -> vcr.VCR:
    return vcr.VCR(before_record_request=mask_secrets_for_vcr, **kw)


def live_url(item: Interaction, routes: Routes) -> str:
    """The request the gateway's client made: the real key back in, and the query in another order."""
    key = KEYS[item.platform]
    url = httpx.URL(absolute_uri(item.url, routes))
    path = url.raw_path.decode().split("?")[0].replace(f"/{MASK}/", f"/{key}/")
    params = [(k, key if v == MASK else v) for k, v in url.params.multi_items()][::-1]
    return str(httpx.URL(f"{url.scheme}://{url.netloc.decode()}{path}", params=params))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, world):
    """CALLS recorded through the gateway: (the bundle, the routes its clients used)."""
    tmp = tmp_path_factory.mktemp("cassettes")

    async def record():
        gw = open_gateway(sandbox=sandbox_upstream(), home=TEST_DATA_DIR, mode="record", cassettes=tmp, bundle="gw")
        try:
            for tool, args in calls_for(world):
                result = await gw.runtime.call(tool, args, "s")
                assert result.outcome.endswith("success"), (tool, result.message)
            return gw.transport.routes
        finally:
            await gw.aclose()

    routes = asyncio.run(record())
    return CassetteStore(tmp).open("gw"), routes


@pytest.mark.parametrize("match_on", [None, ("method", "uri")], ids=["vcr-defaults", "exact-uri"])
def test_export_replays_with_stock_vcrpy(recorded, tmp_path, match_on):
    bundle, routes = recorded
    items = list(bundle.interactions())
    assert {i.platform for i in items} >= {"seoul", "dart", "kdic", "edu", "law"}
    assert any(i.label == "edu.schoolinfo" for i in items)
    out = export_vcr(bundle, tmp_path / "kopa.yaml", routes)
    text = out.read_text()
    assert KeyScanner(KEYS).find(text) is None
    data = yaml.load(text, Loader=yaml.CSafeLoader)
    assert data["version"] == 1 and len(data["interactions"]) == len(items)
    assert data["metadata"]["kopa_bundle"] == f"gw@{bundle.version}"
    assert "!!binary" in text  # the corpCode ZIP, as vcrpy itself writes bytes

    urls = [live_url(item, routes) for item in items]
    assert any(KEYS["seoul"] in u for u in urls) and any("serviceKey=" in u and MASK not in u for u in urls)
    matching = {"match_on": match_on} if match_on else {}  # exact URIs: the query order must be normalised too
    with stock_vcr(record_mode="none", **matching).use_cassette(str(out)) as cassette, httpx.Client() as client:
        for item, url in zip(items, urls, strict=True):
            response = client.get(url)
            assert response.status_code == item.status, url
            assert response.content == item.body, item.url
        assert cassette.all_played
    corp = next(i for i in items if i.platform == "dart" and "corpCode" in i.url)
    assert zipfile.ZipFile(io.BytesIO(corp.body)).namelist()


def test_stock_vcrpy_refuses_what_was_not_recorded(recorded, tmp_path):
    bundle, routes = recorded
    out = export_vcr(bundle, tmp_path / "kopa.yaml", routes)
    seoul = next(i for i in bundle.interactions() if i.platform == "seoul")
    other = live_url(seoul, routes).replace("SearchSTNBySubwayLineInfo", "SomethingElse")
    with stock_vcr(record_mode="none").use_cassette(str(out)), httpx.Client() as client:
        with pytest.raises(CannotOverwriteExistingCassetteException):
            client.get(other)


def test_masking_matches_canonical_urls(recorded):
    bundle, routes = recorded
    for item in bundle.interactions():
        exported = absolute_uri(item.url, routes)
        assert mask_uri(live_url(item, routes)) == exported
        assert mask_uri(exported) == exported  # vcrpy applies the hook to stored requests too
    assert mask_uri("http://openapi.seoul.go.kr:8088/REALKEY/json/X/1/5?b=2&a=1") == \
        "http://openapi.seoul.go.kr:8088/***/json/X/1/5?a=1&b=2"
    original = VcrRequest("GET", "https://opendart.fss.or.kr/api/list.json?crtfc_key=abc&corp_code=1", b"",
                          {"Authorization": "Bearer abc", "Accept": "*/*"})
    masked = mask_secrets_for_vcr(original)
    assert masked.uri == "https://opendart.fss.or.kr/api/list.json?corp_code=1&crtfc_key=***"
    assert dict(masked.headers) == {"Accept": "*/*"}
    assert "crtfc_key=abc" in original.uri and "Authorization" in original.headers  # the request sent is untouched


def test_repeats_play_in_order_and_bytes_round_trip(tmp_path):
    """Identical requests keep their order; tricky text and raw binary come back byte for byte."""
    routes = Routes.sandbox("http://sandbox")
    url = routes.url_of("dart") + "/list.json?corp_code=00126380&crtfc_key=secret"
    route, rel = routes.match(url)
    key = request_key(httpx.Request("GET", url), route, rel)
    bodies = [b"first\r\nline\x00 \xef\xbb\xbf \xe2\x80\xa8 \xea\xb0\x80\n", bytes(range(256)), b"third"]
    items = [Interaction(fingerprint=key.fingerprint, method="GET", url=key.url, platform="dart", status=200 + n,
                         body=body, headers=(("content-type", "application/octet-stream"),),
                         origin=Origin.SYNTHETIC, source="test") for n, body in enumerate(bodies)]
    store = CassetteStore(tmp_path / "cas")
    bundle = store.open(str(store.write("rep", items, parent=None)))
    out = export_vcr(bundle, tmp_path / "rep.yaml", routes)
    with stock_vcr(record_mode="none").use_cassette(str(out)), httpx.Client() as client:
        for n, body in enumerate(bodies):
            response = client.get(url.replace("secret", "another-key"))
            assert (response.status_code, response.content) == (200 + n, body)
        with pytest.raises(CannotOverwriteExistingCassetteException):
            client.get(url)  # each recorded answer plays once
    with pytest.raises(UnknownRouteError, match=rf"interaction 0 \(dart:/list.json.*\) of rep@{bundle.version}"):
        export_vcr(bundle, tmp_path / "nowhere.yaml", Routes([Route("seoul", "main", "http://elsewhere/seoul")]))


def sandbox_requests(origin: str) -> list[str]:
    """Requests with real keys (in the path, in the query, encoded) to the sandbox on loopback."""
    routes = Routes.sandbox(origin)
    return [
        f"{routes.url_of('seoul')}/{KEYS['seoul']}/json/SearchSTNBySubwayLineInfo/1/5",
        str(httpx.URL(routes.url_of("dart") + "/corpCode.xml", params={"crtfc_key": KEYS["dart"]})),
        str(httpx.URL(routes.url_of("kdic") + "/GetInsurgTrgetFnltInfoService/getInsurgTrgetFnltInfoList",
                      params={"serviceKey": KEYS["kdic"], "pageNo": 1, "numOfRows": 5, "resultType": "json"})),
        str(httpx.URL(routes.url_of("edu") + "/schoolInfo", params={
            "KEY": KEYS["edu"], "Type": "json", "pIndex": 1, "pSize": 5, "ATPT_OFCDC_SC_CODE": "T10"})),
    ]


async def test_vcrpy_cassette_imports_and_replays(sandbox_origin, tmp_path):
    urls = sandbox_requests(sandbox_origin)
    urls.append(urls[0])  # a repeated request: two interactions, replayed in order
    cassette = tmp_path / "theirs.yaml"
    seen = []
    with vcr.VCR(record_mode="once").use_cassette(str(cassette)), httpx.Client(timeout=30) as client:
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, response.text[:200]
            seen.append(response.content)
    assert KeyScanner(KEYS).find(cassette.read_text()) is not None  # vcrpy kept the real keys

    interactions = import_vcr(cassette, Routes.sandbox(sandbox_origin), keys=KEYS)
    assert len(interactions) == len(urls)
    assert all(i.origin is Origin.IMPORTED and i.source == "vcr:theirs.yaml" for i in interactions)
    assert interactions[0].url == "seoul:/***/json/SearchSTNBySubwayLineInfo/1/5"
    store = CassetteStore(tmp_path / "cas")
    ref = store.write("theirs", interactions, parent=None, keys=KEYS)
    assert_no_key_in(ref.folder)

    # Replayed for a gateway on other URLs with another key: the same bytes, no upstream at all.
    elsewhere = Routes.sandbox("http://sandbox")
    transport = RecorderTransport("replay", routes=elsewhere, replay=store.open("theirs"))
    async with httpx.AsyncClient(transport=transport) as client:
        for url, body in zip(urls, seen, strict=True):
            moved = url.replace(sandbox_origin, "http://sandbox")
            for platform in ("seoul", "dart", "edu"):
                moved = moved.replace(KEYS[platform], f"other-{platform}-key")
            moved = moved.replace(quote(KEYS["kdic"], safe=""), "other-datago-key")
            response = await client.get(moved)
            assert response.content == body, moved
            assert response.extensions.get("kopa_replayed")
    assert sum(transport.stats.hits.values()) == len(urls)


def assert_no_key_in(folder: Path) -> None:
    """No form of any key in the bundle's files, nor in its decompressed index."""
    scanner = KeyScanner(KEYS)
    for path in folder.iterdir():
        assert scanner.find(path.read_bytes()) is None, path.name
    assert scanner.find(repr(pq.read_table(folder / INDEX).to_pylist())) is None


def test_import_masks_keys_by_value_and_decodes_compression(tmp_path):
    base = Routes.live().url_of("dart")
    requests = [VcrRequest("GET", f"{base}/list.json?crtfc_key={KEYS['dart']}&corp_code=1", b"", {})]
    body = f'{{"status":"000","echo":"{KEYS["dart"]}"}}'.encode()
    responses = [{"status": {"code": 200, "message": "OK"},
                  "headers": {"Content-Encoding": ["gzip"], "Content-Type": ["application/json"],
                              "Date": ["Tue, 03 Feb 2026 04:05:06 GMT"]},
                  "body": {"string": gzip.compress(body)}}]
    path = tmp_path / "gz.yaml"
    path.write_text(serialize({"requests": requests, "responses": responses}, yamlserializer))
    [item] = import_vcr(path, Routes.live(), keys=KEYS)
    assert item.body == b'{"status":"000","echo":"***"}'
    assert item.url == "dart:/list.json?corp_code=1&crtfc_key=***"
    assert item.headers == (("Content-Type", "application/json"),)
    assert item.recorded_at == "2026-02-03T04:05:06.000Z"


def test_import_refusals_name_the_interaction(tmp_path):
    dart = Routes.live().url_of("dart")
    ok = {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}}
    requests = [VcrRequest("GET", f"{dart}/list.json?corp_code=1", b"", {}),
                VcrRequest("GET", f"https://example.com/api?serviceKey={KEYS['kdic']}&x=1", b"", {})]
    path = tmp_path / "foreign.yaml"
    path.write_text(serialize({"requests": requests, "responses": [ok, ok]}, yamlserializer))
    with pytest.raises(VcrImportError, match=r"foreign\.yaml: interaction 1: GET https://example\.com/api\?") as exc:
        import_vcr(path, Routes.live(), keys=KEYS)
    assert "serviceKey=***" in str(exc.value) and KeyScanner(KEYS).find(str(exc.value)) is None

    binary = {"status": {"code": 200, "message": "OK"}, "headers": {},
              "body": {"string": b"\xff\xfe" + KEYS["dart"].encode()}}  # a key inside bytes that can't be masked
    path.write_text(serialize({"requests": requests[:1], "responses": [binary]}, yamlserializer))
    with pytest.raises(VcrImportError, match=r"interaction 0 .*response body holds platform 'dart'"):
        import_vcr(path, Routes.live(), keys=KEYS)

    path.write_text("just: [some, yaml]\n")
    with pytest.raises(VcrImportError, match="not a vcrpy cassette"):
        import_vcr(path, Routes.live(), keys=KEYS)
