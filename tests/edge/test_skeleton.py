"""The similarity skeleton: who may be a source or a target, K limits, the similarity floor, determinism, and the real
catalog."""

from __future__ import annotations

import sys
import time
import types
from collections import Counter

import numpy as np
import pytest

from edge.graph.skeleton import (
    CROSS_FLOOR,
    CandidateEdge,
    CharNgramEmbedder,
    SentenceTransformerEmbedder,
    build_skeleton,
    is_source,
    is_target,
)
from mcp_gateway.catalog import Catalog, load_catalog
from mcp_gateway.catalog.spec import Endpoint, FieldSpec, ParamKind, ParamSpec, ToolSpec

KEY = ParamSpec(name="KEY", description_ko="인증키", required=True, kind=ParamKind.API_KEY)
PAGE = ParamSpec(name="pageNo", type="integer", description_ko="페이지 번호", kind=ParamKind.PAGE_NO)
CORP_CODE_OUT = FieldSpec(name="corp_code", description_ko="고유번호(8자리)")


def tool(name: str, *, platform: str = "dart", params: tuple[ParamSpec, ...] = (), output: tuple[FieldSpec, ...] = (),
         endpoint: bool = True, realtime: bool = False, writes_state: bool = False) -> ToolSpec:
    family = {"dart": "dart", "krx": "datago", "ex": "expressway"}.get(platform, "internal")
    return ToolSpec(name=name, platform=platform, domain="finance", description_ko=f"{name} 도구",
                    params=(KEY, *params, PAGE), output=output, realtime=realtime, writes_state=writes_state,
                    endpoint=Endpoint(platform=platform, family=family, path=name) if endpoint else None)


def param(name: str, description: str, required: bool = True) -> ParamSpec:
    return ParamSpec(name=name, description_ko=description, required=required)


def field(name: str, description: str) -> FieldSpec:
    return FieldSpec(name=name, description_ko=description)


FIXTURE_TOOLS = [
    tool("corp_finder", params=(param("corp_name", "회사명(예: 삼성전자)", False),),
         output=(CORP_CODE_OUT, field("corp_name", "회사명"))),
    tool("company_overview", params=(param("corp_code", "고유번호 8자리(예: 00126380)"),),
         output=(field("ceo_nm", "대표자명"), field("adres", "주소"))),
    tool("key_accounts", params=(param("corp_code", "고유번호 8자리"), param("bsns_year", "사업연도 YYYY")),
         output=(field("account_nm", "계정명"), field("thstrm_amount", "당기금액"))),
    tool("generic_only", output=(CORP_CODE_OUT,)),  # only KEY and pageNo: never a target
    tool("route_lookup", platform="ex", params=(param("routeNm", "노선명(예: 경부선)"),),
         output=(field("routeCd", "노선번호"), field("routeNm", "노선명"))),
    tool("krx_by_corp", platform="krx", params=(param("corp_code", "고유번호(8자리)", False),),
         output=(field("srtnCd", "단축코드(6자리 종목코드)"),)),
    tool("builtin_lookup", params=(param("corp_code", "고유번호"),), output=(CORP_CODE_OUT,), endpoint=False),
    tool("realtime_feed", platform="krx", params=(param("corp_code", "고유번호 8자리"),), output=(CORP_CODE_OUT,),
         realtime=True),
    tool("state_writer", params=(param("corp_code", "고유번호 8자리"),), output=(CORP_CODE_OUT,), writes_state=True),
]


@pytest.fixture(scope="module")
def fixture_catalog() -> Catalog:
    return Catalog((spec, "fixture") for spec in FIXTURE_TOOLS)


def out_of(edges: list[CandidateEdge], source: str) -> list[CandidateEdge]:
    return [e for e in edges if e.source == source]


# --- the fixture catalog ---------------------------------------------------------------------------------------


def test_a_corp_code_output_reaches_the_tools_that_take_corp_code_first(fixture_catalog):
    edges = build_skeleton(fixture_catalog)
    intra = [e for e in out_of(edges, "corp_finder") if not e.cross_platform]
    takers = {"company_overview", "key_accounts", "state_writer"}  # every same-platform tool taking corp_code
    assert {e.target for e in intra[:3]} == takers
    assert intra[-1].target == "key_accounts"  # bsns_year dilutes its text
    assert intra[0].similarity >= intra[1].similarity > intra[2].similarity >= 0.3
    cross = [e for e in out_of(edges, "corp_finder") if e.cross_platform]
    assert [e.target for e in cross][0] == "krx_by_corp"
    assert "route_lookup" not in {e.target for e in out_of(edges, "corp_finder")}  # nothing in common


def test_who_can_be_a_source_or_a_target(fixture_catalog):
    edges = build_skeleton(fixture_catalog, min_similarity=-1.0)
    sources, targets = {e.source for e in edges}, {e.target for e in edges}
    assert "generic_only" in sources and "generic_only" not in targets  # generic parameters never make an edge
    assert "builtin_lookup" not in sources | targets  # no endpoint
    assert {"realtime_feed", "state_writer"}.isdisjoint(sources)  # not reproducible / not read-only
    assert "realtime_feed" in targets and "state_writer" in targets  # ... but they can still be called
    assert all(e.source != e.target for e in edges)
    assert not is_target(fixture_catalog.get("generic_only")) and is_source(fixture_catalog.get("generic_only"))


def test_a_same_platform_neighbour_needs_something_in_common_another_platform_s_the_floor(fixture_catalog):
    loose = build_skeleton(fixture_catalog, min_similarity=-1.0, min_cross_similarity=-1.0)
    default = build_skeleton(fixture_catalog)
    assert "route_lookup" in {e.target for e in out_of(loose, "corp_finder")}
    assert set(default) < set(loose)
    assert all(e.similarity > 0 for e in default)
    # a weak same-platform neighbour stays a candidate: the proposer's feasibility (s_min) admits an edge
    assert any(e.similarity < CROSS_FLOOR and not e.cross_platform for e in default)
    # across platforms a weak match is a coincidence of words: only neighbours above the cross floor
    assert all(e.similarity > CROSS_FLOOR for e in default if e.cross_platform)
    assert any(e.cross_platform and 0 < e.similarity <= CROSS_FLOOR for e in loose)
    same_platform = {e for e in default if not e.cross_platform}
    assert {e for e in loose if not e.cross_platform and e.similarity > 0} == same_platform
    assert build_skeleton(fixture_catalog, min_similarity=1.01) == []


def test_intra_and_cross_limits_are_separate(fixture_catalog):
    full = build_skeleton(fixture_catalog, min_similarity=-1.0)
    only_best = build_skeleton(fixture_catalog, min_similarity=-1.0, k_intra=1, k_cross=0)
    per_source = Counter(e.source for e in only_best)
    assert max(per_source.values()) == 1 and not any(e.cross_platform for e in only_best)
    for source in per_source:  # the one kept is the best same-platform edge of the full skeleton
        assert only_best[[e.source for e in only_best].index(source)] == next(
            e for e in out_of(full, source) if not e.cross_platform)
    cross_only = build_skeleton(fixture_catalog, min_similarity=-1.0, k_intra=0, k_cross=2)
    assert cross_only and all(e.cross_platform for e in cross_only)
    assert max(Counter(e.source for e in cross_only).values()) == 2
    assert all(fixture_catalog.get(e.source).platform != fixture_catalog.get(e.target).platform for e in cross_only)


def test_edges_are_sorted_and_the_same_for_the_same_seed(fixture_catalog):
    first = build_skeleton(fixture_catalog, min_similarity=-1.0, seed=7)
    assert first == build_skeleton(fixture_catalog, min_similarity=-1.0, seed=7)
    assert first == sorted(first, key=lambda e: (e.source, -e.similarity, e.target))


def test_tools_restricts_the_skeleton_to_a_subset(fixture_catalog):
    edges = build_skeleton(fixture_catalog, tools=["corp_finder", "key_accounts", "route_lookup"], min_similarity=-1.0)
    assert {e.source for e in edges} | {e.target for e in edges} <= {"corp_finder", "key_accounts", "route_lookup"}
    assert CandidateEdge in {type(e) for e in edges}
    assert build_skeleton(fixture_catalog, tools=["generic_only"]) == []


class KeywordEmbedder:
    """One axis per keyword: exact, hand-checkable similarities."""

    AXES = ("고유번호", "사업연도", "노선")

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = np.array([[text.count(word) for word in self.AXES] for text in texts], dtype=np.float32) + 1e-3
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_custom_embedder_decides_the_ranking(fixture_catalog):
    edges = build_skeleton(fixture_catalog, embedder=KeywordEmbedder(), k_cross=0, min_similarity=0.5)
    # corp_finder's text mentions only 고유번호: company_overview (only 고유번호) beats key_accounts (also 사업연도)
    assert [e.target for e in out_of(edges, "corp_finder")] == ["company_overview", "state_writer", "key_accounts"]
    sims = [e.similarity for e in out_of(edges, "corp_finder")]
    assert sims[0] == sims[1] == pytest.approx(1.0, abs=1e-3) and sims[2] == pytest.approx(2 ** -0.5, abs=1e-2)


def test_ties_between_same_schema_targets_are_spread_by_seed():
    twins = [tool(f"twin_{i:02d}", params=(param("corp_code", "고유번호 8자리"),), output=(field("x", "값"),))
             for i in range(12)]
    sources = [tool(f"src_{i:02d}", output=(CORP_CODE_OUT,)) for i in range(12)]
    catalog = Catalog((spec, "fixture") for spec in twins + sources)
    edges = build_skeleton(catalog, k_intra=2, k_cross=0)
    picked = [e for e in edges if e.source.startswith("src_")]
    assert Counter(e.source for e in picked) == {s.name: 2 for s in sources}
    assert len({e.target for e in picked}) > 2  # not the alphabetically first two for every source
    assert edges == build_skeleton(catalog, k_intra=2, k_cross=0)


# --- the embedders ------------------------------------------------------------------------------------------------


def test_char_ngram_vectors_are_normalised_and_see_identifiers():
    embedder = CharNgramEmbedder()
    assert {"w:corp_code", "고유", "고유번", "cor", "de"} <= set(embedder.features("corp_code 고유번호"))
    vectors = embedder.embed(["corp_code 고유번호", "corp_code 고유번호", "routeNm 노선명"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0] @ vectors[1] == pytest.approx(1.0) and vectors[0] @ vectors[2] == pytest.approx(0.0)


def test_sentence_transformer_embedder_loads_lazily_from_a_local_path(monkeypatch):
    loaded: list[str] = []

    class FakeModel:
        def __init__(self, path: str, device: str | None = None, local_files_only: bool = False):
            assert local_files_only  # offline by construction, not by HF_HUB_OFFLINE in os.environ
            loaded.append(path)

        def encode(self, texts, **options):
            assert options["normalize_embeddings"] and options["convert_to_numpy"]
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=FakeModel))
    embedder = SentenceTransformerEmbedder("/models/local-e5")
    assert loaded == []  # nothing is loaded until the first embed
    vectors = embedder.embed(["가나", "가나다라"])
    assert loaded == ["/models/local-e5"] and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    embedder.embed(["다"])
    assert loaded == ["/models/local-e5"]


# --- the real catalog ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def skeleton(catalog) -> list[CandidateEdge]:
    started = time.perf_counter()
    edges = build_skeleton(catalog)
    assert time.perf_counter() - started < 30  # well under a minute on 2 cores (about 1 s when written)
    return edges


def test_find_dart_corp_code_reaches_dart_tools_that_take_corp_code(catalog, skeleton):
    intra = {e.target for e in out_of(skeleton, "find_dart_corp_code") if not e.cross_platform}
    takes_corp_code = {name for name in intra if (p := catalog.get(name).param("corp_code")) and p.required}
    assert "get_dart_company_overview" in takes_corp_code
    assert all(catalog.get(name).platform == "dart" for name in intra)


def test_a_search_tool_reaches_its_detail_tool_though_its_many_fields_dilute_the_match(catalog, skeleton):
    # KOPA-Bench's law, subway and tollbooth chains: each source's text is a dozen output fields, of which one feeds
    # the target (판례일련번호 → ID scores 0.24); with a 0.3 similarity floor none of them was ever a candidate
    pairs = {(e.source, e.target): e.similarity for e in skeleton}
    assert pairs[("search_court_precedents", "get_court_precedent_text")] < 0.3
    assert ("list_tollbooths", "get_tollbooth_traffic_volume") in pairs


def test_real_skeleton_respects_every_rule(catalog, skeleton):
    assert len(skeleton) > 10_000 and len({e.source for e in skeleton}) > 2_000
    intra, cross = Counter(), Counter()
    for e in skeleton:
        source, target = catalog.get(e.source), catalog.get(e.target)
        assert e.similarity > 0 and e.source != e.target
        assert is_source(source) and is_target(target)  # a target always has a non-generic parameter
        assert e.cross_platform == (source.platform != target.platform)
        (cross if e.cross_platform else intra)[e.source] += 1
    assert max(intra.values()) <= 15 and max(cross.values()) <= 10
    assert len(set(skeleton)) == len(skeleton)
    assert skeleton == sorted(skeleton, key=lambda e: (e.source, -e.similarity, e.target))


def test_real_skeleton_is_deterministic_and_subsettable(catalog, skeleton):
    names = [n for n in catalog.names() if catalog.get(n).platform not in ("seoul", "gg")]
    subset = build_skeleton(catalog, tools=names)
    assert subset == build_skeleton(catalog, tools=names)
    assert {e.source for e in subset} | {e.target for e in subset} <= set(names)
    assert skeleton == build_skeleton(catalog)
