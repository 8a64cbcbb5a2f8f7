"""Built-in tools: no upstream endpoint; ``ToolRuntime`` runs them itself.

* ``evaluate_expression`` — arithmetic and symbolic expressions (sympy, parsed safely).
* ``get_<platform>_api_key`` — one per platform; hands out the episode-scoped key token the
  bench profile requires in every upstream tool's ``KEY`` (no real key reaches a model).
* workspace tools — watchlists, saved reports, notes: per-session state that ENVIRONMENT-scored
  benchmark tasks check by its hash.

Output fields match what the runtime returns for each tool.
"""

from __future__ import annotations

from typing import Any

from .generic import PLATFORMS, key_tool_name

INTERNAL = "internal"  # platform id of tools that run inside the gateway


def _param(name: str, description: str, required: bool = True) -> dict[str, Any]:
    return {"name": name, "description_ko": description, "required": required}


def _field(name: str, description: str, type_: str = "string") -> dict[str, Any]:
    return {"name": name, "type": type_, "description_ko": description}


def _tool(name: str, platform: str, domain: str, description: str, params: list[dict[str, Any]],
          output: list[dict[str, Any]], writes_state: bool = False) -> dict[str, Any]:
    return {"name": name, "platform": platform, "domain": domain, "description_ko": description, "params": params,
            "output": output, "paged": False, "writes_state": writes_state}


def _key_tool(platform: str) -> dict[str, Any]:
    p = PLATFORMS[platform]
    return _tool(key_tool_name(platform), platform, p.domain,
                 f"{p.title_ko} API를 부를 때 쓸 인증키 토큰을 돌려줍니다. 이 플랫폼 도구의 KEY 인자에 그대로 넣으세요. "
                 "토큰은 이번 세션에서만 유효합니다.", [], [_field("api_key", "인증키 토큰(KEY 인자에 넣을 값)")])


WATCH_ITEM = [_field("list_name", "관심목록 이름"), _field("item", "항목"), _field("note", "메모")]
REPORT = [_field("title", "보고서 제목"), _field("length", "본문 길이(글자 수)", "integer")]
NOTE = [_field("key", "메모 키"), _field("text", "메모 내용")]
LIST_NAME = _param("list_name", "관심목록 이름(예: 관심종목, 방문할 휴게소)")


def _workspace(name: str, description: str, params: list[dict[str, Any]], output: list[dict[str, Any]],
               writes_state: bool) -> dict[str, Any]:
    return _tool(name, INTERNAL, "workspace", description, params, output, writes_state)


def builtin_specs() -> list[dict[str, Any]]:
    """Spec dicts of every built-in tool, in a fixed order."""
    expression = _tool(
        "evaluate_expression", INTERNAL, "utility",
        "산술식이나 기호식을 계산합니다(sympy). 사칙연산, //, %, **, 괄호와 sqrt, abs, round, floor, ceil, log, ln, exp, sin, cos, tan, "
        "min, max, factorial, 상수 pi·e를 쓸 수 있습니다. 도구 결과의 수치를 더하거나 비율·증감률을 구할 때 쓰세요. 예: (1520-1380)/1380*100",
        [_param("expression", "계산할 식(예: (1520-1380)/1380*100)")],
        [_field("expression", "입력한 식"), _field("value", "계산 결과")])
    workspace = [
        _workspace("add_to_watchlist", "세션 작업공간의 관심목록에 항목을 추가합니다(이미 있으면 메모를 바꿉니다). 목록 전체를 돌려줍니다.",
                   [LIST_NAME, _param("item", "추가할 항목(예: 종목명, 휴게소명)"), _param("note", "항목 메모", required=False)],
                   WATCH_ITEM, True),
        _workspace("remove_from_watchlist", "세션 작업공간의 관심목록에서 항목을 뺍니다. 남은 목록을 돌려줍니다.",
                   [LIST_NAME, _param("item", "뺄 항목")], WATCH_ITEM, True),
        _workspace("get_watchlist", "세션 작업공간의 관심목록 항목과 메모를 조회합니다.", [LIST_NAME], WATCH_ITEM, False),
        _workspace("save_report", "조사 결과를 보고서로 세션 작업공간에 저장합니다(같은 제목이면 덮어씁니다).",
                   [_param("title", "보고서 제목"), _param("content", "보고서 본문")], REPORT, True),
        _workspace("list_reports", "세션 작업공간에 저장한 보고서 목록(제목과 길이)을 조회합니다.", [], REPORT, False),
        _workspace("write_note", "세션 작업공간에 키로 메모를 남깁니다(같은 키면 덮어씁니다). 중간 결과를 기억할 때 쓰세요.",
                   [_param("key", "메모 키"), _param("text", "메모 내용")], NOTE, True),
        _workspace("read_note", "세션 작업공간에서 키로 메모를 읽습니다.", [_param("key", "메모 키")], NOTE, False),
    ]
    return [expression, *(_key_tool(p) for p in PLATFORMS), *workspace]
