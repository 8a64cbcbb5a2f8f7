"""Generated personal details of lawmakers: hanja and romanised names, contacts, staff, bios.

Names come from ``korean.person_names``; the hanja and romanisation tables cover exactly the
syllables that generator uses, so every generated name has an HJ_NM and an ENG_NM.
"""

from __future__ import annotations

import numpy as np

from ..korean import person_names

SURNAME_HANJA = {"김": "金", "이": "李", "박": "朴", "최": "崔", "정": "鄭", "강": "姜", "조": "趙", "윤": "尹",
                 "장": "張", "임": "林", "한": "韓", "오": "吳", "서": "徐", "신": "申", "권": "權", "황": "黃",
                 "안": "安", "송": "宋", "류": "柳", "전": "全", "홍": "洪", "고": "高", "문": "文", "양": "梁",
                 "손": "孫", "배": "裵", "백": "白", "허": "許", "유": "劉", "남": "南", "심": "沈", "노": "盧",
                 "하": "河", "곽": "郭", "성": "成", "차": "車", "주": "朱", "우": "禹", "구": "具", "민": "閔"}
SURNAME_ROMAN = {"김": "KIM", "이": "LEE", "박": "PARK", "최": "CHOI", "정": "JUNG", "강": "KANG", "조": "CHO",
                 "윤": "YOON", "장": "JANG", "임": "LIM", "한": "HAN", "오": "OH", "서": "SEO", "신": "SHIN",
                 "권": "KWON", "황": "HWANG", "안": "AHN", "송": "SONG", "류": "RYU", "전": "JEON", "홍": "HONG",
                 "고": "KO", "문": "MOON", "양": "YANG", "손": "SON", "배": "BAE", "백": "BAEK", "허": "HEO",
                 "유": "YOO", "남": "NAM", "심": "SHIM", "노": "NOH", "하": "HA", "곽": "KWAK", "성": "SUNG",
                 "차": "CHA", "주": "JOO", "우": "WOO", "구": "KOO", "민": "MIN"}
GIVEN_HANJA = {"민": "敏", "서": "瑞", "준": "俊", "지": "智", "현": "賢", "우": "宇", "예": "藝", "도": "道",
               "하": "夏", "윤": "允", "수": "秀", "은": "恩", "진": "眞", "영": "英", "재": "在", "성": "成",
               "혜": "惠", "승": "承", "주": "周", "연": "延", "정": "正", "희": "熙", "호": "浩", "원": "元",
               "태": "泰", "경": "京", "동": "東", "상": "相", "유": "有", "나": "娜", "다": "多", "채": "彩",
               "시": "始", "아": "雅", "건": "建", "선": "善", "미": "美", "철": "哲", "용": "龍", "석": "錫",
               "형": "亨", "규": "圭", "빈": "彬", "훈": "勳", "찬": "燦", "혁": "赫", "인": "仁", "환": "煥",
               "기": "基", "범": "範"}
GIVEN_ROMAN = {"민": "min", "서": "seo", "준": "jun", "지": "ji", "현": "hyeon", "우": "woo", "예": "ye",
               "도": "do", "하": "ha", "윤": "yun", "수": "su", "은": "eun", "진": "jin", "영": "young",
               "재": "jae", "성": "seong", "혜": "hye", "승": "seung", "주": "ju", "연": "yeon", "정": "jeong",
               "희": "hui", "호": "ho", "원": "won", "태": "tae", "경": "kyung", "동": "dong", "상": "sang",
               "유": "yu", "나": "na", "다": "da", "채": "chae", "시": "si", "아": "a", "건": "geon",
               "선": "seon", "미": "mi", "철": "cheol", "용": "yong", "석": "seok", "형": "hyeong", "규": "gyu",
               "빈": "bin", "훈": "hun", "찬": "chan", "혁": "hyeok", "인": "in", "환": "hwan", "기": "gi",
               "범": "beom"}

_ALNUM = np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))
_LETTERS = _ALNUM[:26]
_SCHOOLS = ("서울대학교", "고려대학교", "연세대학교", "성균관대학교", "한양대학교", "부산대학교", "경북대학교",
            "전남대학교", "충남대학교", "이화여자대학교", "중앙대학교", "경희대학교")
_CAREERS = ("변호사", "○○지방검찰청 검사", "○○일보 기자", "대통령비서실 행정관", "○○시의회 의원",
            "○○대학교 교수", "시민단체 사무총장", "○○노동조합 위원장", "기획재정부 국장", "의사",
            "○○도 부지사", "당 대변인", "당 정책위원회 부의장", "회계사")


def hanja_name(name: str) -> str:
    return SURNAME_HANJA[name[0]] + "".join(GIVEN_HANJA[c] for c in name[1:])


def english_name(name: str) -> str:
    given = "".join(GIVEN_ROMAN[c] for c in name[1:])
    return f"{SURNAME_ROMAN[name[0]]} {given.capitalize()}"


def mona_codes(rng: np.random.Generator, n: int) -> list[str]:
    """Distinct 8-character member codes shaped like the portal's (e.g. "T2T8225E")."""
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        k = (n - len(out)) * 2
        head = _ALNUM[rng.integers(0, 36, size=(k, 3))]
        digits = rng.integers(0, 10000, size=k)
        tail = _LETTERS[rng.integers(0, 26, size=k)]
        for h, d, t in zip(head, digits, tail):
            code = f"{''.join(h)}{d:04d}{t}"
            if code not in seen and len(out) < n:
                seen.add(code)
                out.append(code)
    return out


def office_details(rng: np.random.Generator, names: list[str]) -> dict[str, list]:
    """Contacts, staff, bio lines and office rooms of current members (one entry per name)."""
    n = len(names)
    rooms = rng.choice([f"{f}{r:02d}" for f in range(3, 11) for r in range(1, 51)], size=n, replace=False)
    phone_mid = rng.choice(["784", "6788"], size=n)
    phone_last = rng.integers(1000, 9999, size=n)
    staff_names = person_names(rng, n * 5)
    homepage_kind = rng.integers(0, 3, size=n)
    school = rng.integers(0, len(_SCHOOLS), size=n)
    careers = rng.integers(0, len(_CAREERS), size=(n, 2))
    out: dict[str, list] = {k: [] for k in ("TEL_NO", "E_MAIL", "HOMEPAGE", "STAFF", "SECRETARY", "SECRETARY2",
                                            "MEM_TITLE", "ASSEM_ADDR")}
    for i, name in enumerate(names):
        handle = english_name(name).replace(" ", "").lower() + str(int(phone_last[i]) % 100)
        out["TEL_NO"].append(f"02-{phone_mid[i]}-{phone_last[i]}")
        out["E_MAIL"].append(f"{handle}@assembly.go.kr")
        out["HOMEPAGE"].append((f"https://blog.naver.com/{handle}", f"https://www.facebook.com/{handle}", None)
                               [homepage_kind[i]])
        s = staff_names[i * 5:(i + 1) * 5]
        out["STAFF"].append(", ".join(s[:2]))
        out["SECRETARY"].append(", ".join(s[2:4]))
        out["SECRETARY2"].append(s[4])
        out["MEM_TITLE"].append(f"{_SCHOOLS[school[i]]} 졸업\r\n(전) {_CAREERS[careers[i, 0]]}\r\n"
                                f"(전) {_CAREERS[careers[i, 1]]}\r\n(현) 제22대 국회의원")
        out["ASSEM_ADDR"].append(f"의원회관 {rooms[i]}호")
    return out
