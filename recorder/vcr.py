"""vcrpy interoperability: bundles out as vcrpy cassettes, vcrpy cassettes in as bundles.

    export_vcr(bundle, Path("kopa.yaml"), Routes.sandbox("http://sandbox"))
    with vcr.VCR(record_mode="none", before_record_request=mask_secrets_for_vcr).use_cassette("kopa.yaml"):
        ...  # any httpx / requests / aiohttp code talking to those URLs, real keys and all

    interactions = import_vcr(Path("theirs.yaml"), Routes.live(), keys=keys)
    store.write("theirs", interactions, parent=None, keys=keys)   # refuses anything still holding a key

The cassette is written by vcrpy's own serializer (``vcr.serialize`` with its YAML serializer),
so the bytes are what vcrpy itself writes: format version 1, UTF-8 bodies as text, binary
bodies (DART's corpCode ZIP) as ``!!binary``. Bundles hold masked URLs (``***`` for every key),
so a live request matches an exported cassette only once its keys are masked the same way:
``mask_secrets_for_vcr`` does that as vcrpy's ``before_record_request`` hook, which vcrpy
applies to the stored requests as they load (``Cassette._load`` → ``append``) and to every
live request before matching (``can_play_response_for``, ``play_response``). It also sorts
the query, as the canonical URLs do, so parameter order does not matter.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from datetime import UTC
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpx
import yaml
from vcr.request import Request as VcrRequest
from vcr.serialize import deserialize, serialize
from vcr.serializers import yamlserializer

from .cassette.bundle import Bundle
from .cassette.interaction import Interaction, Origin, utc_now
from .fingerprint import MASK, SECRET_HEADERS, SEOUL, is_secret_param, mask_seoul_key, query_text, request_key
from .redaction import KeyScanner, mask_echoed_keys, redact_values, safe_headers
from .routes import Routes, UnknownRouteError


class VcrImportError(ValueError):
    """A vcrpy cassette that cannot be imported; the message names the file and the interaction."""


# ---- export -------------------------------------------------------------------------------


def export_vcr(bundle: Bundle, out: Path, routes: Routes) -> Path:
    """Write every interaction of ``bundle``, in recorded order, as one vcrpy YAML cassette.

    URIs are absolute under ``routes`` (the base URLs the replaying code talks to) with keys
    masked as ``***``; replay it with ``before_record_request=mask_secrets_for_vcr``. Identical
    requests stay in recorded order: vcrpy plays each once, in order.
    """
    requests, responses = [], []
    for seq, item in enumerate(bundle.interactions()):
        try:
            uri = absolute_uri(item.url, routes)
        except UnknownRouteError as exc:
            raise UnknownRouteError(f"interaction {seq} ({item.url}) of {bundle.manifest.name}@{bundle.version}: "
                                    f"{exc}") from None
        requests.append(VcrRequest(item.method, uri, item.request_body or b"", {}))
        headers: dict[str, list[str]] = {}
        for name, value in item.headers:
            headers.setdefault(name, []).append(value)
        responses.append({"status": {"code": item.status, "message": httpx.codes.get_reason_phrase(item.status)},
                          "headers": headers, "body": {"string": item.body}})
    # vcrpy keeps ``metadata`` next to the interactions (Cassette.get_metadata): say where they came from.
    metadata = {"kopa_bundle": f"{bundle.manifest.name}@{bundle.version}",
                "kopa_origins": bundle.manifest.counts.get("origins", {})}
    text = serialize({"requests": requests, "responses": responses, "metadata": metadata}, yamlserializer)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


def absolute_uri(canonical: str, routes: Routes) -> str:
    """``label:/path?query`` → ``base URL + /path?query`` (the query stays as canonical: sorted, masked)."""
    label, _, rest = canonical.partition(":")
    return routes.url_of(label) + rest


# ---- masking live requests like canonical URLs --------------------------------------------


def mask_secrets_for_vcr(request: VcrRequest) -> VcrRequest:
    """vcrpy ``before_record_request`` hook: the request with its URI as an exported cassette has it.

    Secret query values and Seoul's key segment become ``***``, the query is sorted and encoded
    like the canonical URLs, and secret headers are dropped. Seoul is found under its live base
    URL or under a sandbox at the request's own origin. Idempotent (vcrpy also applies it to
    the stored requests as they load). Returns a copy; the request sent upstream is untouched.
    """
    request = copy.copy(request)
    request.uri = mask_uri(request.uri)
    request.headers = {k: v for k, v in request.headers.items() if k.lower() not in SECRET_HEADERS}
    return request


def mask_uri(uri: str, routes: Routes | None = None) -> str:
    """``uri`` with secrets masked and the query sorted (see ``mask_secrets_for_vcr``)."""
    try:
        url = httpx.URL(uri)
    except httpx.InvalidURL:
        return uri  # not ours to judge: vcrpy compares it as it is
    origin = f"{url.scheme}://{url.netloc.decode('ascii')}"
    path = url.raw_path.decode("ascii").split("?", 1)[0]
    try:
        route, rel_path = (routes or _routes_at(origin)).match(url)
    except UnknownRouteError:
        route = None
    if route is not None and route.platform == SEOUL and route.url.startswith(origin):
        path = route.url[len(origin):] + mask_seoul_key(rel_path)
    query = sorted((k, MASK if is_secret_param(k) else v) for k, v in url.params.multi_items())
    return origin + path + (f"?{query_text(query)}" if query else "")


@functools.lru_cache(maxsize=64)
def _routes_at(origin: str) -> Routes:
    """The live hosts, and the sandbox's mounts as if ``origin`` served a sandbox."""
    return Routes.everywhere([origin])


# ---- import -------------------------------------------------------------------------------


def import_vcr(path: Path, routes: Routes, *, keys: Mapping[str, str]) -> list[Interaction]:
    """A stock vcrpy YAML cassette as interactions (``origin=imported``), keys masked.

    Keys go by name as in recordings (secret parameters, Seoul's segment, echoes in bodies,
    secret headers), then by value: any form of a value in ``keys`` left in a text body, a
    header or a request body becomes ``***``. A key that cannot be masked (inside a binary
    body) refuses the whole cassette. Compressed bodies (recorded without
    ``decode_compressed_response``) are decoded first. Nothing is written here: commit with
    ``CassetteStore.write``, which scans for ``keys`` once more.
    """
    path = Path(path)
    scanner = KeyScanner(keys)
    key_values = [key for key in keys.values() if key]
    try:
        requests, responses, *_ = deserialize(path.read_text(encoding="utf-8"), yamlserializer)
    except FileNotFoundError:
        raise VcrImportError(f"{path}: no such cassette file") from None
    except (ValueError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise VcrImportError(f"{path}: not a vcrpy cassette ({type(exc).__name__}: {exc})") from None
    out = []
    for index, (request, response) in enumerate(zip(requests, responses)):
        where = f"{path.name}: interaction {index}"
        try:
            route, rel_path = routes.match(request.uri)
        except UnknownRouteError:
            shown = redact_values(mask_uri(request.uri, routes), key_values)  # a key may sit outside known names
            bases = ", ".join(sorted(r.url for r in routes.routes))
            raise VcrImportError(f"{where}: {request.method} {shown} is under no configured platform base URL "
                                 f"(configured: {bases})") from None
        request_body = _bytes(getattr(request, "body_bytes", request.body))
        key = request_key(httpx.Request(request.method, request.uri, content=request_body), route, rel_path)
        status, raw_headers, body = _response_parts(response, where)
        body = _mask_values(mask_echoed_keys(body), key_values)
        headers = [(k, redact_values(v, key_values)) for k, v in safe_headers(raw_headers)]
        item = Interaction(
            fingerprint=key.fingerprint, method=key.method, url=key.url, platform=route.platform, status=status,
            body=body, headers=tuple(headers), query_fingerprint=key.query_fingerprint, page=key.page,
            size=key.size, request_body=_mask_values(request_body, key_values) or None,
            recorded_at=_recorded_at(raw_headers), source=f"vcr:{path.name}", origin=Origin.IMPORTED)
        _refuse_leftover_keys(item, scanner, where)
        out.append(item)
    return out


def _response_parts(response: dict[str, Any], where: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """(status, headers, decoded body) of a vcrpy response dict (also the pre-8.x httpx layout)."""
    try:
        if "status_code" in response:  # httpx cassettes of old vcrpy versions
            status, raw_headers, body = response["status_code"], response["headers"], response["content"]
        else:
            status, raw_headers, body = response["status"]["code"], response["headers"], response["body"]["string"]
        headers = [(str(k), str(v)) for k, vs in (raw_headers or {}).items()
                   for v in (vs if isinstance(vs, list) else [vs])]
        body = _bytes(body)
        if any(k.lower() == "content-encoding" for k, _ in headers):
            body = httpx.Response(int(status), headers=headers, stream=httpx.ByteStream(body)).read()
        return int(status), headers, body
    except (KeyError, TypeError, ValueError, httpx.DecodingError) as exc:
        raise VcrImportError(f"{where}: unreadable response ({type(exc).__name__}: {exc})") from None


def _bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, list):  # iterator bodies are kept as a list of chunks
        return b"".join(_bytes(chunk) for chunk in body)
    if hasattr(body, "read"):
        return body.read()
    return bytes(body)


def _mask_values(data: bytes, keys: list[str]) -> bytes:
    """Key values in UTF-8 text masked; binary data is left for the scan (masking would corrupt it)."""
    if not data or not keys:
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    masked = redact_values(text, keys)
    return data if masked == text else masked.encode("utf-8")


def _refuse_leftover_keys(item: Interaction, scanner: KeyScanner, where: str) -> None:
    for what, data in (("request URL", item.url), ("request body", item.request_body or b""),
                       ("response headers", item.headers_json()), ("response body", item.body)):
        found = scanner.find(data)
        if found:
            raise VcrImportError(f"{where} ({item.platform} {item.method} {item.url.split('?')[0]}): its {what} "
                                 f"holds {found}, which cannot be masked there; nothing was imported")


def _recorded_at(headers: list[tuple[str, str]]) -> str:
    """When the upstream answered (its Date header), else now: vcrpy cassettes keep no times of their own."""
    date = next((v for k, v in headers if k.lower() == "date"), None)
    if date:
        try:
            when = parsedate_to_datetime(date)
            if when.tzinfo is not None:
                return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        except (TypeError, ValueError):
            pass
    return utc_now()


__all__ = ["VcrImportError", "absolute_uri", "export_vcr", "import_vcr", "mask_secrets_for_vcr", "mask_uri"]
