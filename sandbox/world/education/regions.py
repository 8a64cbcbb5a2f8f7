"""Real regional code tables the education world is built on (시군구, 교육지원청, phone, postcode).

Schools hang off a province (``facts.PROVINCES``) and a 시·군·구 with its real 5-digit
행정표준코드, because 학교알리미 is queried by ``sidoCode``/``sggCode`` and other domains chain
region → schools. Seoul and Gyeonggi reuse ``facts``; the other provinces are listed here.
Education support offices (교육지원청) follow the real naming ("경기도수원교육지원청"); Seoul's
eleven offices and their districts are the real grouping.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..facts import GYEONGGI_MUNICIPALITIES, SEOUL_DISTRICTS


@dataclass(frozen=True)
class Sgg:
    """One 시·군·구 that schools can sit in."""

    code: str  # 5-digit 행정표준코드
    name: str  # as the portals print it, e.g. "청주시 상당구"
    weight: float  # relative number of schools
    office: str  # 교육지원청 name (JU_ORG_NM)


# Seoul's 11 교육지원청 and the districts each one covers.
_SEOUL_OFFICES = {
    "동부": ("동대문구", "중랑구"), "서부": ("마포구", "서대문구", "은평구"),
    "남부": ("구로구", "금천구", "영등포구"), "북부": ("노원구", "도봉구"),
    "중부": ("종로구", "중구", "용산구"), "강동송파": ("강동구", "송파구"),
    "강서양천": ("강서구", "양천구"), "강남서초": ("강남구", "서초구"),
    "동작관악": ("동작구", "관악구"), "성동광진": ("성동구", "광진구"), "성북강북": ("성북구", "강북구"),
}
_SEOUL_OFFICE_OF = {d: o for o, ds in _SEOUL_OFFICES.items() for d in ds}

# 시·군·구 of the other provinces: "code name" pairs (2023+ codes: Gangwon 51, Jeonbuk 52).
_SGG_TEXT: dict[str, str] = {
    "26": "26110 중구,26140 서구,26170 동구,26200 영도구,26230 부산진구,26260 동래구,26290 남구,"
          "26320 북구,26350 해운대구,26380 사하구,26410 금정구,26440 강서구,26470 연제구,26500 수영구,"
          "26530 사상구,26710 기장군",
    "27": "27110 중구,27140 동구,27170 서구,27200 남구,27230 북구,27260 수성구,27290 달서구,27710 달성군,"
          "27720 군위군",
    "28": "28110 중구,28140 동구,28177 미추홀구,28185 연수구,28200 남동구,28237 부평구,28245 계양구,"
          "28260 서구,28710 강화군,28720 옹진군",
    "29": "29110 동구,29140 서구,29155 남구,29170 북구,29200 광산구",
    "30": "30110 동구,30140 중구,30170 서구,30200 유성구,30230 대덕구",
    "31": "31110 중구,31140 남구,31170 동구,31200 북구,31710 울주군",
    "36": "36110 세종특별자치시",
    "51": "51110 춘천시,51130 원주시,51150 강릉시,51170 동해시,51190 태백시,51210 속초시,51230 삼척시,"
          "51720 홍천군,51730 횡성군,51750 영월군,51760 평창군,51770 정선군,51780 철원군,51790 화천군,"
          "51800 양구군,51810 인제군,51820 고성군,51830 양양군",
    "43": "43111 청주시 상당구,43112 청주시 서원구,43113 청주시 흥덕구,43114 청주시 청원구,43130 충주시,"
          "43150 제천시,43720 보은군,43730 옥천군,43740 영동군,43745 증평군,43750 진천군,43760 괴산군,"
          "43770 음성군,43800 단양군",
    "44": "44131 천안시 동남구,44133 천안시 서북구,44150 공주시,44180 보령시,44200 아산시,44210 서산시,"
          "44230 논산시,44250 계룡시,44270 당진시,44710 금산군,44760 부여군,44770 서천군,44790 청양군,"
          "44800 홍성군,44810 예산군,44825 태안군",
    "52": "52111 전주시 완산구,52113 전주시 덕진구,52130 군산시,52140 익산시,52180 정읍시,52190 남원시,"
          "52210 김제시,52710 완주군,52720 진안군,52730 무주군,52740 장수군,52750 임실군,52770 순창군,"
          "52790 고창군,52800 부안군",
    "46": "46110 목포시,46130 여수시,46150 순천시,46170 나주시,46230 광양시,46710 담양군,46720 곡성군,"
          "46730 구례군,46770 고흥군,46780 보성군,46790 화순군,46800 장흥군,46810 강진군,46820 해남군,"
          "46830 영암군,46840 무안군,46860 함평군,46870 영광군,46880 장성군,46890 완도군,46900 진도군,"
          "46910 신안군",
    "47": "47111 포항시 남구,47113 포항시 북구,47130 경주시,47150 김천시,47170 안동시,47190 구미시,"
          "47210 영주시,47230 영천시,47250 상주시,47280 문경시,47290 경산시,47730 의성군,47750 청송군,"
          "47760 영양군,47770 영덕군,47820 청도군,47830 고령군,47840 성주군,47850 칠곡군,47900 예천군,"
          "47920 봉화군,47930 울진군,47940 울릉군",
    "48": "48121 창원시 의창구,48123 창원시 성산구,48125 창원시 마산합포구,48127 창원시 마산회원구,"
          "48129 창원시 진해구,48170 진주시,48220 통영시,48240 사천시,48250 김해시,48270 밀양시,"
          "48310 거제시,48330 양산시,48720 의령군,48730 함안군,48740 창녕군,48820 고성군,48840 남해군,"
          "48850 하동군,48860 산청군,48870 함양군,48880 거창군,48890 합천군",
    "50": "50110 제주시,50130 서귀포시",
}

# Metropolitan cities group their districts under compass-named offices (approximation of the
# real grouping: consecutive districts share one office).
_METRO_OFFICES = ("동부", "서부", "남부", "북부")

# Telephone area codes and the first two digits of the 5-digit postcodes per province.
AREA_CODES = {"11": "02", "26": "051", "27": "053", "28": "032", "29": "062", "30": "042", "31": "052",
              "36": "044", "41": "031", "51": "033", "43": "043", "44": "041", "52": "063", "46": "061",
              "47": "054", "48": "055", "50": "064"}
POSTCODE_RANGES = {"11": (1, 8), "26": (46, 49), "27": (41, 43), "28": (21, 23), "29": (61, 62),
                   "30": (34, 35), "31": (44, 45), "36": (30, 30), "41": (10, 18), "51": (24, 26),
                   "43": (27, 29), "44": (31, 33), "52": (54, 56), "46": (57, 59), "47": (36, 40),
                   "48": (50, 53), "50": (63, 63)}
# Internet domain of each office of education (school homepages live under it).
OFFICE_DOMAINS = {"B10": "sen", "C10": "pen", "D10": "dge", "E10": "ice", "F10": "gen", "G10": "dje",
                  "H10": "use", "I10": "sje", "J10": "goe", "K10": "gwe", "M10": "cbe", "N10": "cne",
                  "P10": "jbe", "Q10": "jne", "R10": "gbe", "S10": "gne", "T10": "jje"}
# Leading digits of NEIS standard school codes (SD_SCHUL_CODE) per office.
NEIS_CODE_PREFIX = {"B10": "701", "C10": "715", "D10": "724", "E10": "731", "F10": "738", "G10": "743",
                    "H10": "748", "I10": "930", "J10": "753", "K10": "780", "M10": "800", "N10": "814",
                    "P10": "832", "Q10": "849", "R10": "875", "S10": "901", "T10": "929"}


def _stem(name: str) -> str:
    """"청주시 상당구" → "청주", "수원시" → "수원", "강화군" → "강화" (office names drop 시/군)."""
    city = name.split(" ")[0]
    return city[:-1] if len(city) > 2 and city[-1] in "시군" else city


def sggs_of(province_code: str, province_name: str) -> list[Sgg]:
    """The 시·군·구 of one province with school weights and 교육지원청 names."""
    if province_code == "11":
        return [Sgg(d.code, d.name, 1.0, f"{province_name}{_SEOUL_OFFICE_OF[d.name]}교육지원청")
                for d in SEOUL_DISTRICTS]
    if province_code == "41":
        return [Sgg(m.sigun_cd, m.name, max(4.0, m.population_weight) ** 0.85,
                    f"{province_name}{_stem(m.name)}교육지원청") for m in GYEONGGI_MUNICIPALITIES]
    pairs = [item.split(" ", 1) for item in _SGG_TEXT[province_code].split(",")]
    out = []
    for i, (code, name) in enumerate(pairs):
        if province_code == "36":
            office = f"{province_name}교육청"  # Sejong has no support office
        elif province_code == "50":
            office = f"{province_name}{name}교육지원청"  # Jeju keeps 시: 제주시교육지원청
        elif province_code in ("26", "27", "28", "29", "30", "31"):
            office = f"{province_name}{_METRO_OFFICES[min(i * 4 // len(pairs), 3)]}교육지원청"
        else:
            office = f"{province_name}{_stem(name)}교육지원청"
        weight = 1.0 if name.endswith("군") else 2.5
        out.append(Sgg(code, name, weight, office))
    return out
