"""Character n-gram index speed on the real catalog: the gateway's tool search (index build, ms per query) and
the skeleton's default embedder (embedding every distinct schema text, then the whole skeleton).

    python benchmarks/ngram_search_speed.py [--repeats 5]

Each figure is the median of ``--repeats`` runs (the search: of per-query means over a fixed query list).
Copied into another checkout, it measures that checkout (it imports from the folder above it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from edge.graph.skeleton import (  # noqa: E402
    CharNgramEmbedder,
    build_skeleton,
    is_source,
    is_target,
    source_text,
    target_text,
)
from mcp_gateway.catalog import load_catalog  # noqa: E402
from mcp_gateway.server.search import NgramIndex  # noqa: E402

QUERIES = ["전환사채 발행 결정", "전환사채발행결정", "학급 학생 수", "고속도로 톨게이트 교통량", "회사 고유번호 찾기",
           "주식 시세 추이", "gg_dataset_017", "bus", "버스", "지하철역 정보", "서울에서 가장 가까운 지하철역을 찾아줘",
           "school", "xyzzy_nonexistent_tool", "미세먼지 측정소", "부동산 실거래가", "laws search", "약국 위치",
           "대기오염 정보 조회", "어린이집 현황", "corp_code"]


def _median(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    catalog = load_catalog()
    docs = [f"{s.name} {s.description_ko}" for s in catalog]
    build = _median(lambda: NgramIndex(docs), args.repeats)
    index = NgramIndex(docs)
    per_query = _median(lambda: [index.search(q, 20) for q in QUERIES], args.repeats) / len(QUERIES)
    specs = list(catalog)
    texts = sorted({source_text(s) for s in specs if is_source(s)} | {target_text(s) for s in specs if is_target(s)})
    embed = _median(lambda: CharNgramEmbedder().embed(texts), args.repeats)
    skeleton = _median(lambda: build_skeleton(catalog), args.repeats)
    print(f"tools {len(docs)}: search index build {build * 1000:.0f} ms, search {per_query * 1000:.2f} ms/query "
          f"({len(QUERIES)} queries, limit 20)")
    print(f"skeleton texts {len(texts)}: CharNgramEmbedder.embed {embed * 1000:.0f} ms, "
          f"build_skeleton {skeleton * 1000:.0f} ms")


if __name__ == "__main__":
    main()
