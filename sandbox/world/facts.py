"""Public facts the world is built on: real administrative codes and names.

Everything here is a real, published code table, so that chains an agent learns in the
sandbox (a region name leads to an office-of-education code, a SIGUN_CD, ...) carry over to
the live services unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Province:
    """One of the 17 first-level administrative divisions (시·도)."""

    code: str  # 2-digit legal-dong prefix (행정표준코드), e.g. "11" for Seoul
    name: str  # official name, e.g. "서울특별시"
    short: str  # common short name, e.g. "서울"
    neis_office: str  # NEIS ATPT_OFCDC_SC_CODE of its office of education
    office_name: str  # that office's name
    population_weight: float  # relative population, used to size generated data


# Codes: 행정표준코드 시도 (2023 onward: Gangwon 51, Jeonbuk 52). NEIS office codes are the
# ones NEIS publishes (B10 Seoul ... T10 Jeju).
PROVINCES: tuple[Province, ...] = (
    Province("11", "서울특별시", "서울", "B10", "서울특별시교육청", 9.4),
    Province("26", "부산광역시", "부산", "C10", "부산광역시교육청", 3.3),
    Province("27", "대구광역시", "대구", "D10", "대구광역시교육청", 2.4),
    Province("28", "인천광역시", "인천", "E10", "인천광역시교육청", 3.0),
    Province("29", "광주광역시", "광주", "F10", "광주광역시교육청", 1.4),
    Province("30", "대전광역시", "대전", "G10", "대전광역시교육청", 1.4),
    Province("31", "울산광역시", "울산", "H10", "울산광역시교육청", 1.1),
    Province("36", "세종특별자치시", "세종", "I10", "세종특별자치시교육청", 0.4),
    Province("41", "경기도", "경기", "J10", "경기도교육청", 13.6),
    Province("51", "강원특별자치도", "강원", "K10", "강원특별자치도교육청", 1.5),
    Province("43", "충청북도", "충북", "M10", "충청북도교육청", 1.6),
    Province("44", "충청남도", "충남", "N10", "충청남도교육청", 2.1),
    Province("52", "전북특별자치도", "전북", "P10", "전북특별자치도교육청", 1.7),
    Province("46", "전라남도", "전남", "Q10", "전라남도교육청", 1.8),
    Province("47", "경상북도", "경북", "R10", "경상북도교육청", 2.6),
    Province("48", "경상남도", "경남", "S10", "경상남도교육청", 3.2),
    Province("50", "제주특별자치도", "제주", "T10", "제주특별자치도교육청", 0.7),
)

PROVINCE_BY_CODE = {p.code: p for p in PROVINCES}
PROVINCE_BY_OFFICE = {p.neis_office: p for p in PROVINCES}


@dataclass(frozen=True)
class Municipality:
    """A Gyeonggi city or county (시·군) with its SIGUN_CD."""

    sigun_cd: str
    name: str
    population_weight: float  # relative population (tens of thousands), to size datasets
    lat: float  # approximate city-hall latitude (WGS84)
    lon: float  # approximate city-hall longitude (WGS84)


# The 31 Gyeonggi municipalities as Gyeonggi Data Dream keys them (city-level SIGUN_CD).
GYEONGGI_MUNICIPALITIES: tuple[Municipality, ...] = (
    Municipality("41110", "수원시", 119, 37.2636, 127.0286),
    Municipality("41130", "성남시", 92, 37.4200, 127.1267),
    Municipality("41150", "의정부시", 46, 37.7381, 127.0338),
    Municipality("41170", "안양시", 55, 37.3943, 126.9568),
    Municipality("41190", "부천시", 79, 37.5035, 126.7660),
    Municipality("41210", "광명시", 28, 37.4786, 126.8646),
    Municipality("41220", "평택시", 59, 36.9921, 127.1129),
    Municipality("41250", "동두천시", 9, 37.9036, 127.0606),
    Municipality("41270", "안산시", 63, 37.3219, 126.8309),
    Municipality("41280", "고양시", 107, 37.6584, 126.8320),
    Municipality("41290", "과천시", 8, 37.4292, 126.9876),
    Municipality("41310", "구리시", 19, 37.5943, 127.1296),
    Municipality("41360", "남양주시", 73, 37.6360, 127.2165),
    Municipality("41370", "오산시", 23, 37.1498, 127.0772),
    Municipality("41390", "시흥시", 52, 37.3800, 126.8029),
    Municipality("41410", "군포시", 26, 37.3617, 126.9352),
    Municipality("41430", "의왕시", 16, 37.3448, 126.9683),
    Municipality("41450", "하남시", 33, 37.5393, 127.2149),
    Municipality("41460", "용인시", 108, 37.2411, 127.1776),
    Municipality("41480", "파주시", 50, 37.7600, 126.7800),
    Municipality("41500", "이천시", 22, 37.2722, 127.4350),
    Municipality("41550", "안성시", 19, 37.0080, 127.2797),
    Municipality("41570", "김포시", 49, 37.6153, 126.7156),
    Municipality("41590", "화성시", 95, 37.1995, 126.8312),
    Municipality("41610", "광주시", 39, 37.4294, 127.2550),
    Municipality("41630", "양주시", 25, 37.7853, 127.0458),
    Municipality("41650", "포천시", 15, 37.8949, 127.2003),
    Municipality("41670", "여주시", 11, 37.2983, 127.6370),
    Municipality("41800", "연천군", 4, 38.0966, 127.0748),
    Municipality("41820", "가평군", 6, 37.8315, 127.5105),
    Municipality("41830", "양평군", 12, 37.4917, 127.4875),
)

GYEONGGI_BY_CODE = {m.sigun_cd: m for m in GYEONGGI_MUNICIPALITIES}


@dataclass(frozen=True)
class SeoulDistrict:
    """One of Seoul's 25 autonomous districts (자치구) with its 5-digit code."""

    code: str
    name: str
    lat: float
    lon: float


SEOUL_DISTRICTS: tuple[SeoulDistrict, ...] = (
    SeoulDistrict("11110", "종로구", 37.5735, 126.9790),
    SeoulDistrict("11140", "중구", 37.5641, 126.9979),
    SeoulDistrict("11170", "용산구", 37.5326, 126.9905),
    SeoulDistrict("11200", "성동구", 37.5634, 127.0369),
    SeoulDistrict("11215", "광진구", 37.5385, 127.0823),
    SeoulDistrict("11230", "동대문구", 37.5744, 127.0400),
    SeoulDistrict("11260", "중랑구", 37.6066, 127.0927),
    SeoulDistrict("11290", "성북구", 37.5894, 127.0167),
    SeoulDistrict("11305", "강북구", 37.6396, 127.0257),
    SeoulDistrict("11320", "도봉구", 37.6688, 127.0471),
    SeoulDistrict("11350", "노원구", 37.6542, 127.0568),
    SeoulDistrict("11380", "은평구", 37.6027, 126.9291),
    SeoulDistrict("11410", "서대문구", 37.5791, 126.9368),
    SeoulDistrict("11440", "마포구", 37.5663, 126.9019),
    SeoulDistrict("11470", "양천구", 37.5169, 126.8664),
    SeoulDistrict("11500", "강서구", 37.5509, 126.8495),
    SeoulDistrict("11530", "구로구", 37.4954, 126.8874),
    SeoulDistrict("11545", "금천구", 37.4569, 126.8955),
    SeoulDistrict("11560", "영등포구", 37.5264, 126.8962),
    SeoulDistrict("11590", "동작구", 37.5124, 126.9393),
    SeoulDistrict("11620", "관악구", 37.4784, 126.9516),
    SeoulDistrict("11650", "서초구", 37.4837, 127.0324),
    SeoulDistrict("11680", "강남구", 37.5172, 127.0473),
    SeoulDistrict("11710", "송파구", 37.5145, 127.1059),
    SeoulDistrict("11740", "강동구", 37.5301, 127.1238),
)

# Approximate centre of each province (WGS84), for coordinates of generated places.
PROVINCE_CENTRES: dict[str, tuple[float, float]] = {
    "11": (37.5665, 126.9780), "26": (35.1796, 129.0756), "27": (35.8714, 128.6014),
    "28": (37.4563, 126.7052), "29": (35.1595, 126.8526), "30": (36.3504, 127.3845),
    "31": (35.5384, 129.3114), "36": (36.4800, 127.2890), "41": (37.2752, 127.0095),
    "51": (37.8228, 128.1555), "43": (36.6357, 127.4917), "44": (36.6588, 126.6728),
    "52": (35.8203, 127.1088), "46": (34.8161, 126.4629), "47": (36.5760, 128.5056),
    "48": (35.2383, 128.6925), "50": (33.4890, 126.4983),
}
