"""Stage 3: rule checks, near-duplicates kept by id order, and the judge over real loopback HTTP."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from edge.filter.quality import QualityJudge, check_quality, rule_problem
from edge.filter.screen import Screen
from mcp_gateway.catalog import load_catalog
from models.settings import JudgeProfile
from tests.edge.filter.items import bench, task_like, wrap

GOOD = "남해선 고속도로 휴게소 주유소 중에서 휘발유가 제일 싼 곳의 대표 메뉴를 알려 주세요."


@pytest.mark.parametrize(("query", "expected"), [
    ("휴게소 알려줘", "characters long"),
    ("전월 대비人口 증감 수치를 알려줘. 서울특별시 기준으로 부탁해요.", "foreign-script"),
    ("서울 지하철 2호선 을지로4가역의 sub_sta_nm 값을 이용해서 승하차 인원을 알려 주세요.", "'sub_sta_nm'"),
    ("남해선 휴게소 목록을 routeName 으로 찾아서 제일 싼 주유소를 알려 주세요.", "'routeName'"),
    ("남해선 휴게소 주유소 가격을 조회한 뒤 제일 싼 곳의 대표 메뉴를 알려 주세요.", "'조회한 뒤'"),
    ("휴게소 목록 도구를 호출해서 남해선에서 제일 싼 주유소를 찾아 주세요.", "narrates"),
    ("Please tell me the cheapest rest area fuel station on the Namhae line today.", "Hangul"),
])
def test_rules_name_what_they_found(query, expected):
    problem = rule_problem(query)
    assert problem is not None and expected in problem


def test_catalog_identifiers_are_refused():
    assert rule_problem(GOOD) is None
    assert "'KEYWORD'" in rule_problem(GOOD + " KEYWORD", {"KEYWORD"})


def test_bench_queries_pass_the_rules_and_the_one_near_duplicate_pair_is_found():
    items = [wrap(t) for t in bench().values()]
    result = check_quality(items, judge=None)
    assert [(r.item_id, r.stage) for r in result.rejections] == [("edu-030", "quality")]
    assert "near-duplicate of edu-029" in result.rejections[0].reason and "edu-029 is kept" in result.rejections[0].reason
    # the kept one is the first by id, whatever order the items come in
    again = check_quality(list(reversed(items)), judge=None)
    assert again.rejections == result.rejections and [i.task.id for i in again.kept] == [i.task.id for i in result.kept]


def test_planted_near_duplicate_names_the_kept_item():
    original = bench()["trf-001"]
    copy = task_like("trf-001", id="zz-copy", query=original.query.replace("휘발유가", "휘발유 값이"))
    result = check_quality([wrap(copy), wrap(original)], judge=None)
    assert [i.task.id for i in result.kept] == ["trf-001"]
    assert result.rejections[0].item_id == "zz-copy" and "near-duplicate of trf-001" in result.rejections[0].reason


def test_the_screens_verdict_on_a_question_alone_is_the_one_it_gives_the_item_and_indexes_nothing():
    """Synthesis asks ``duplicate`` before it records an item's calls: the verdict must be the full screen's."""
    screen = Screen(catalog=load_catalog())
    original = bench()["trf-001"]
    copy = task_like("trf-001", id="zz-copy", query=original.query.replace("휘발유가", "휘발유 값이"))
    assert screen.duplicate("zz-copy", copy.query) is None  # nothing has passed yet
    assert screen(wrap(original)) is None
    early = screen.duplicate("zz-copy", copy.query)
    assert early is not None and early.stage == "quality" and "near-duplicate of trf-001" in early.reason
    assert screen(wrap(copy)) == early  # the early questions indexed nothing, and the item gets the same verdict


# ------------------------------------------------------------------------------------------ the judge

class _Judge(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # refuses any query holding "어색" and accepts the rest
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        query = body["messages"][-1]["content"]
        verdict = {"ok": "어색" not in query, "reason": "문장이 어색합니다" if "어색" in query else "좋음"}
        payload = json.dumps({"choices": [{"message": {"role": "assistant",
                                                       "content": json.dumps(verdict, ensure_ascii=False)}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def judge_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


def test_judge_rejects_with_its_reason(judge_url):
    awkward = task_like("trf-002", query="중앙선에서 경유 값이 가장 싼 휴게소는 어색하게 어디인지 알려 주세요.")
    judge = QualityJudge(JudgeProfile(base_url=judge_url, model="judge-test", max_retries=0))
    result = check_quality([wrap(bench()["trf-001"]), wrap(awkward)], judge=judge)
    assert [i.task.id for i in result.kept] == ["trf-001"]
    assert result.rejections[0].item_id == "trf-002" and "문장이 어색합니다" in result.rejections[0].reason
    assert result.judge_stats["judged"] == 2 and result.judge_stats["rejected"] == 1


def test_unreachable_judge_leaves_the_rule_result_and_is_counted():
    judge = QualityJudge(JudgeProfile(base_url=f"http://127.0.0.1:{_closed_port()}/v1", model="gone",
                                      max_retries=0, timeout_s=2))
    result = check_quality([wrap(bench()["trf-001"]), wrap(bench()["trf-002"])], judge=judge)
    assert [i.task.id for i in result.kept] == ["trf-001", "trf-002"] and result.rejections == []
    assert result.judge_stats["judge_error"] == 2


def test_the_judge_comes_from_the_judge_profile(monkeypatch):
    from appliance.config import KopaSettings
    from edge.filter.quality import quality_judge

    assert quality_judge(KopaSettings().models.judge) is None
    monkeypatch.setenv("KOPA_MODELS__JUDGE__BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("KOPA_MODELS__JUDGE__MODEL", "qwen-judge")
    monkeypatch.setenv("KOPA_MODELS__JUDGE__API_KEY", "sk-judge")
    judge = quality_judge(KopaSettings().models.judge)
    settings = judge.settings
    assert settings.model == "qwen-judge" and settings.api_key.get_secret_value() == "sk-judge"
