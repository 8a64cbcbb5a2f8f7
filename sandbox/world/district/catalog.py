"""The catalog of district datasets: one entry per service either portal serves.

An entry says what the dataset is (Korean title, description, category), which real fields
it returns in which order (with Korean descriptions and types), which request parameters
filter which fields, and where each field is stored in the shared row tables. The platform
layer (``platforms/datasets.py``) serves every entry; the tool catalog makes one tool per
entry from the ``district_datasets`` table written from these.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .rows import extra_slots
from .stats import StatsTopic
from .topics import Topic

FAMILY_LABELS = {
    "food": "식품", "health": "보건의료", "animal": "동물", "hygiene": "공중위생", "lodging": "관광·숙박",
    "leisure": "문화·오락", "sports": "체육", "retail": "판매·유통", "vehicle": "자동차·건설기계", "env": "환경",
    "labor": "고용·건설·기타", "facility": "시설·장소",
}

# (field, storage column, type, Korean description) of the fields every dataset of a kind has.
GG_HEAD = (("SIGUN_NM", "SIGUN_NM", "string", "시군명"), ("SIGUN_CD", "SIGUN_CD", "string", "시군코드"))
GG_LICENSE = (("LICENSG_DE", "LICENSG_DE", "date", "인허가일자"), ("BSN_STATE_NM", "BSN_STATE_NM", "string", "영업상태명"),
              ("CLSBIZ_DE", "CLSBIZ_DE", "date", "폐업일자"), ("LOCPLC_AR", "LOCPLC_AR", "number", "소재지면적(㎡)"))
GG_LICENSE_TAIL = (("LOCPLC_FACLT_TELNO", "LOCPLC_FACLT_TELNO", "string", "소재지시설전화번호"),
                   ("UNITY_BSN_STATE_NM", "UNITY_BSN_STATE_NM", "string", "상세영업상태명"),
                   ("MANAGE_NO", "MANAGE_NO", "string", "관리번호"))
GG_PLACE = (("REFINE_LOTNO_ADDR", "REFINE_LOTNO_ADDR", "string", "소재지지번주소"),
            ("REFINE_ROADNM_ADDR", "REFINE_ROADNM_ADDR", "string", "소재지도로명주소"),
            ("REFINE_ZIP_CD", "REFINE_ZIP_CD", "string", "소재지우편번호"),
            ("REFINE_WGS84_LOGT", "REFINE_WGS84_LOGT", "number", "WGS84경도"),
            ("REFINE_WGS84_LAT", "REFINE_WGS84_LAT", "number", "WGS84위도"))
SEOUL_LOCALDATA_HEAD = tuple((c, c, t, d) for c, t, d in (
    ("OPNSFTEAMCODE", "string", "개방자치단체코드"), ("MGTNO", "string", "관리번호"), ("APVPERMYMD", "date", "인허가일자"),
    ("APVCANCELYMD", "date", "인허가취소일자"), ("TRDSTATEGBN", "string", "영업상태코드(01 영업/정상, 02 휴업, 03 폐업)"),
    ("TRDSTATENM", "string", "영업상태명"), ("DTLSTATEGBN", "string", "상세영업상태코드"), ("DTLSTATENM", "string", "상세영업상태명"),
    ("DCBYMD", "date", "폐업일자"), ("CLGSTDT", "date", "휴업시작일자"), ("CLGENDDT", "date", "휴업종료일자"),
    ("ROPNYMD", "date", "재개업일자"), ("SITETEL", "string", "전화번호"), ("SITEAREA", "number", "소재지면적(㎡)"),
    ("SITEPOSTNO", "string", "소재지우편번호(구 6자리)"), ("SITEWHLADDR", "string", "지번주소"), ("RDNWHLADDR", "string", "도로명주소"),
    ("RDNPOSTNO", "string", "도로명우편번호"), ("BPLCNM", "string", "사업장명"), ("LASTMODTS", "string", "최종수정시점"),
    ("UPDATEGBN", "string", "데이터갱신구분(I 신규, U 수정)"), ("UPDATEDT", "string", "데이터갱신일자"),
    ("UPTAENM", "string", "업태구분명"), ("X", "number", "좌표정보(X, EPSG:5174)"), ("Y", "number", "좌표정보(Y, EPSG:5174)")))
SEOUL_PLACE = (("RDNMADR", "RDNWHLADDR", "string", "도로명주소"), ("LNMADR", "SITEWHLADDR", "string", "지번주소"),
               ("LAT", "_lat", "number", "위도(WGS84)"), ("LOT", "_lon", "number", "경도(WGS84)"))


@dataclass
class DatasetEntry:
    """One served dataset; ``dataset_id`` is the ``_ds`` value of its rows."""

    dataset_id: int
    platform: str
    service: str
    title_ko: str
    description_ko: str
    category: str
    kind: str  # license | facility | stats
    fields: list[tuple[str, str, str, str]]  # (field, column, type, description)
    filters: list[dict]
    region_code: str = ""
    region_name: str = ""
    year: int | None = None
    row_count: int = 0
    topic_ko: str = field(default="")

    def record(self) -> dict:
        table = "gg_dataset_rows" if self.platform == "gg" else "seoul_dataset_rows"
        return {
            "platform": self.platform, "service": self.service, "dataset_id": self.dataset_id,
            "title_ko": self.title_ko, "description_ko": self.description_ko, "category": self.category,
            "kind": self.kind, "topic_ko": self.topic_ko, "region_code": self.region_code or None,
            "region_name": self.region_name or None, "year": self.year, "row_count": self.row_count,
            "fields": json.dumps([{"name": f, "type": t, "description_ko": d} for f, _, t, d in self.fields],
                                 ensure_ascii=False),
            "filters": json.dumps(self.filters, ensure_ascii=False),
            "storage": json.dumps({"table": table, "where": {"_ds": self.dataset_id},
                                   "columns": [[f, c] for f, c, _, _ in self.fields]}, ensure_ascii=False),
        }


def _extras(topic: Topic, platform: str) -> list[tuple[str, str, str, str]]:
    return [(e.gg if platform == "gg" else e.seoul, slot, e.type, e.description)
            for e, slot in extra_slots(topic.extras)]


def _extra_phrase(topic: Topic) -> str:
    names = [e.description for e in topic.extras][:4]
    return ", ".join(names)


def gg_topic_entry(ds: int, topic: Topic, service: str) -> DatasetEntry:
    name = (topic.name_field, "_name", "string", "사업장명" if topic.license else "명칭")
    if topic.license:
        fields = [*GG_HEAD, name, *GG_LICENSE, *_extras(topic, "gg"), *GG_LICENSE_TAIL, *GG_PLACE]
        filters = [_f("SIGUN_CD"), _f("SIGUN_NM"), _f(topic.name_field, "like"), _f("BSN_STATE_NM")]
        desc = (f"경기도 31개 시·군의 {topic.ko} 인허가 업소 정보입니다. 사업장명, 인허가일자, 영업상태(영업/정상·휴업·폐업)와 "
                f"폐업일자, 소재지면적, {_extra_phrase(topic)}, 전화번호, 관리번호, 정제된 도로명·지번 주소와 우편번호, "
                f"WGS84 좌표를 제공합니다. 시군코드(SIGUN_CD)·시군명(SIGUN_NM)·사업장명({topic.name_field}, 부분일치)·"
                f"영업상태명(BSN_STATE_NM)으로 조회할 수 있습니다.")
    else:
        fields = [*GG_HEAD, name, *_extras(topic, "gg"), *GG_PLACE]
        filters = [_f("SIGUN_CD"), _f("SIGUN_NM"), _f(topic.name_field, "like")]
        desc = (f"경기도 시·군별 {topic.ko.removesuffix(' 현황')} 목록입니다. 명칭({topic.name_field}), {_extra_phrase(topic)} 등의 정보와 "
                f"소재지 도로명·지번 주소, 우편번호, WGS84 위경도 좌표를 제공합니다. 시군코드(SIGUN_CD)·시군명(SIGUN_NM)·"
                f"명칭(부분일치)으로 조회할 수 있습니다.")
    title = f"경기도 {topic.ko}" if topic.ko.endswith("현황") else f"경기도 {topic.ko} 현황"
    return DatasetEntry(ds, "gg", service, title, desc, FAMILY_LABELS[topic.family],
                        "license" if topic.license else "facility", fields, filters, topic_ko=topic.ko)


def seoul_license_entry(ds: int, topic: Topic, service: str, gu: str = "", gu_code: str = "") -> DatasetEntry:
    fields = [*SEOUL_LOCALDATA_HEAD, *_extras(topic, "seoul")]
    where = f"서울특별시 {gu}" if gu else "서울특별시 25개 자치구"
    title = f"서울시 {gu + ' ' if gu else ''}{topic.ko} 인허가 정보"
    desc = (f"{where}의 {topic.ko} 인허가 정보(지방행정 인허가 데이터 LOCALDATA)입니다. 사업장명, 인허가일자, 영업상태·상세영업상태, "
            f"폐업·휴업일자, 전화번호, 소재지면적, 지번·도로명 주소, 업태구분명, 좌표(EPSG:5174)와 {_extra_phrase(topic)}를 "
            f"제공합니다. END_INDEX 다음 경로 인자로 영업상태코드(TRDSTATEGBN: 01 영업/정상, 02 휴업, 03 폐업)를 지정할 수 있습니다.")
    return DatasetEntry(ds, "seoul", service, title, desc, FAMILY_LABELS[topic.family], "license", fields,
                        [_p(1, "TRDSTATEGBN")], region_code=gu_code, region_name=gu, topic_ko=topic.ko)


def seoul_facility_entry(ds: int, topic: Topic, service: str) -> DatasetEntry:
    fields = [("CGG_NM", "_gu", "string", "자치구명"), (topic.name_field, "BPLCNM", "string", "명칭"),
              *_extras(topic, "seoul"), *SEOUL_PLACE]
    desc = (f"서울특별시 25개 자치구의 {topic.ko} 목록입니다. 자치구명, 명칭, {_extra_phrase(topic)}, 도로명·지번 주소와 "
            f"WGS84 위경도를 제공합니다. END_INDEX 다음 경로 인자로 자치구명(CGG_NM)과 명칭({topic.name_field}, 부분일치)을 "
            f"차례로 지정할 수 있습니다.")
    title = f"서울시 {topic.ko}" if topic.ko.endswith("현황") else f"서울시 {topic.ko} 현황"
    return DatasetEntry(ds, "seoul", service, title, desc, FAMILY_LABELS["facility"], "facility", fields,
                        [_p(1, "CGG_NM"), _p(2, topic.name_field, "like")], topic_ko=topic.ko)


def stats_entry(ds: int, topic: StatsTopic, platform: str, service: str, year: int | None) -> DatasetEntry:
    measures = [(m.name, f"_n{i}", "number", m.description) for i, m in enumerate(topic.measures, 1)]
    category = [(topic.category_field, "_s2", "string", topic.category_desc)] if topic.category_field else []
    by = f"{topic.category_desc}별 " if topic.category_field else ""
    values = ", ".join(m.description for m in topic.measures)
    if platform == "gg":
        fields = [("STD_YY", "_s1", "string", "기준연도"), *GG_HEAD[::-1], *category, *measures]
        filters = [_f("SIGUN_CD"), _f("SIGUN_NM")] + ([_f(topic.category_field)] if category else [])
        title = f"경기도 {topic.ko}({year}년)"
        desc = (f"{year}년 기준 경기도 31개 시·군의 {by}{topic.ko} 통계입니다. 항목: {values}. "
                f"시군코드(SIGUN_CD)·시군명(SIGUN_NM)" + (f"·{topic.category_desc}({topic.category_field})" if category else "")
                + "로 조회할 수 있습니다.")
    else:
        fields = [("GIGAN", "_s1", "string", "기간(연도)"), ("JACHIGU", "_gu", "string", "자치구"), *category, *measures]
        filters = [_p(1, "GIGAN"), _p(2, "JACHIGU")]
        title = f"서울시 {topic.ko} (자치구별) 통계"
        desc = (f"서울특별시 25개 자치구의 {by}{topic.ko} 연도별 통계(2019~2025년)입니다. 항목: {values}. "
                f"END_INDEX 다음 경로 인자로 기간(GIGAN, 예: 2024)과 자치구(JACHIGU)를 차례로 지정할 수 있습니다.")
    return DatasetEntry(ds, platform, service, title, desc, "통계", "stats", fields, filters, year=year,
                        topic_ko=topic.ko)


def _f(param: str, match: str = "exact") -> dict:
    return {"param": param, "field": param, "match": match}


def _p(position: int, param: str, match: str = "exact") -> dict:
    return {"position": position, "param": param, "field": param, "match": match}
