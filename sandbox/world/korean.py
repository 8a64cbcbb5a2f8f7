"""Seeded generators of Korean names: people, organisations, places, addresses.

All functions take an explicit ``numpy.random.Generator`` so that the world stays a pure
function of (seed, version).
"""

from __future__ import annotations

import numpy as np

# Surnames with approximate frequency weights (통계청 2015 census order).
SURNAMES = ("김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오", "서", "신",
            "권", "황", "안", "송", "류", "전", "홍", "고", "문", "양", "손", "배", "백", "허",
            "유", "남", "심", "노", "하", "곽", "성", "차", "주", "우", "구", "민")
_SURNAME_WEIGHTS = np.array([21.5, 14.7, 8.4, 4.7, 4.3, 2.4, 2.1, 2.0, 2.0, 1.6, 1.5, 1.5,
                             1.5, 1.5, 1.4, 1.4, 1.4, 1.4, 1.1, 1.1, 1.0, 0.9, 0.9, 0.9,
                             0.9, 0.8, 0.8, 0.7, 0.7, 0.6, 0.5, 0.5, 0.5, 0.4, 0.4, 0.4,
                             0.4, 0.4, 0.4, 0.3])
_SURNAME_P = _SURNAME_WEIGHTS / _SURNAME_WEIGHTS.sum()
GIVEN_SYLLABLES = ("민", "서", "준", "지", "현", "우", "예", "도", "하", "윤", "수", "은", "진",
                   "영", "재", "성", "혜", "승", "주", "연", "정", "희", "호", "원", "태", "경",
                   "동", "상", "유", "나", "다", "채", "시", "아", "건", "선", "미", "철", "용",
                   "석", "형", "규", "빈", "훈", "찬", "혁", "인", "환", "기", "범")
PLACE_SYLLABLES = ("한", "신", "중", "동", "서", "남", "북", "새", "푸른", "가람", "솔", "해",
                   "달", "별", "은", "금", "청", "백", "대", "소", "미", "송", "매", "화",
                   "양", "덕", "명", "광", "장", "평", "산", "수", "월", "봉", "문", "성")
ROAD_SUFFIXES = ("로", "길", "대로")
COMPANY_STEMS = ("대한", "한국", "동양", "서울", "유니", "삼영", "태광", "대성", "한빛", "세원",
                 "우진", "동원", "한솔", "대림", "신성", "제일", "코리아", "미래", "하나", "에이스",
                 "그린", "블루", "넥스", "케이", "엠", "디", "에스", "티", "아이", "씨",
                 "지", "비", "에이", "엔", "오", "이", "엘", "알", "제이", "큐")
COMPANY_TAILS = ("전자", "바이오", "테크", "솔루션", "케미칼", "에너지", "제약", "건설",
                 "중공업", "물산", "산업", "시스템", "소재", "정밀", "반도체", "디스플레이",
                 "로직스", "모빌리티", "헬스케어", "엔터테인먼트", "푸드", "게임즈", "네트웍스",
                 "인베스트", "홀딩스", "파트너스", "메디칼", "이노베이션", "머티리얼즈", "통신")


def person_names(rng: np.random.Generator, n: int) -> list[str]:
    """Return ``n`` Korean full names (surname + two syllables)."""
    surnames = rng.choice(len(SURNAMES), size=n, p=_SURNAME_P)
    first = rng.integers(0, len(GIVEN_SYLLABLES), size=n)
    second = rng.integers(0, len(GIVEN_SYLLABLES), size=n)
    return [SURNAMES[s] + GIVEN_SYLLABLES[a] + GIVEN_SYLLABLES[b]
            for s, a, b in zip(surnames, first, second)]


def place_words(rng: np.random.Generator, n: int, syllables: int = 2) -> list[str]:
    """Return ``n`` short Korean place-like words (e.g. "한솔", "푸른달")."""
    idx = rng.integers(0, len(PLACE_SYLLABLES), size=(n, syllables))
    return ["".join(PLACE_SYLLABLES[i] for i in row) for row in idx]


def company_names(rng: np.random.Generator, n: int, taken: set[str] | None = None) -> list[str]:
    """Return ``n`` distinct company names such as "한빛바이오" or "넥스테크"."""
    taken = set() if taken is None else set(taken)
    out: list[str] = []
    while len(out) < n:
        stem = COMPANY_STEMS[int(rng.integers(len(COMPANY_STEMS)))]
        extra = "" if rng.random() < 0.6 else PLACE_SYLLABLES[int(rng.integers(len(PLACE_SYLLABLES)))]
        tail = COMPANY_TAILS[int(rng.integers(len(COMPANY_TAILS)))]
        name = stem + extra + tail
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out


def road_addresses(rng: np.random.Generator, prefixes: list[str]) -> list[str]:
    """Return one road-name address per prefix ("경기도 수원시" → "경기도 수원시 한솔로 123")."""
    words = place_words(rng, len(prefixes))
    suffix = rng.integers(0, len(ROAD_SUFFIXES), size=len(prefixes))
    numbers = rng.integers(1, 400, size=len(prefixes))
    return [f"{p} {w}{ROAD_SUFFIXES[s]} {num}" for p, w, s, num in zip(prefixes, words, suffix, numbers)]


def phone_numbers(rng: np.random.Generator, area_codes: list[str]) -> list[str]:
    """Return a landline number per area code, formatted as the portals print them."""
    mid = rng.integers(200, 9999, size=len(area_codes))
    last = rng.integers(0, 10000, size=len(area_codes))
    return [f"{a}-{m}-{l:04d}" for a, m, l in zip(area_codes, mid, last)]


def jitter_coords(rng: np.random.Generator, centres: list[tuple[float, float]],
                  spread: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Scatter points around centres; returns (lat, lon) rounded to 6 decimals like the portals."""
    c = np.asarray(centres, dtype=float).reshape(-1, 2)
    lat = np.round(c[:, 0] + rng.normal(0, spread, len(c)), 6)
    lon = np.round(c[:, 1] + rng.normal(0, spread * 1.2, len(c)), 6)
    return lat, lon


# Revised Romanization of Hangul jamo (initial, medial, final), for English names and domains.
_RR_INITIAL = ("g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h")
_RR_MEDIAL = ("a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo", "we",
              "wi", "yu", "eu", "ui", "i")
_RR_FINAL = ("", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l", "m", "p", "p",
             "t", "t", "ng", "t", "t", "k", "t", "p", "t")


def romanize(text: str) -> str:
    """Revised Romanization of the Hangul syllables in ``text``; other characters pass through."""
    out = []
    for ch in text:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            out.append(_RR_INITIAL[code // 588] + _RR_MEDIAL[(code % 588) // 28] + _RR_FINAL[code % 28])
        else:
            out.append(ch)
    return "".join(out)
