"""Classes and students per school and year: 학교알리미 school status, NEIS classInfo and majors.

One set of arrays (school × disclosure year 2019–2025 × grade slot) drives three tables, so
they agree with each other: ``edu_status`` (학교알리미 apiType 62/09, one row per school and
year), ``edu_class`` (NEIS classInfo, one row per class for AY 2024 and 2025) and
``edu_major`` (NEIS schoolMajorinfo). Enrolment shrinks over the years as it does in Korea;
most schools run 0–2 special(-education) classes of 2–6 pupils.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..context import BuildContext
from .schools import HS_TYPES, LOAD_DTM

YEARS = tuple(range(2019, 2026))  # disclosure years (pbanYr)
CLASS_YEARS = (2024, 2025)  # academic years served by NEIS classInfo
# Grade slots per kind: (course name, grade) — special schools run three courses.
_COURSES = {"02": (("초등학교", 6),), "03": (("중학교", 3),), "04": (("고등학교", 3),),
            "05": (("초등학교", 6), ("중학교", 3), ("고등학교", 3)), "07": (("고등학교", 3),)}
SLOTS = {k: [(c, g) for c, n in v for g in range(1, n + 1)] for k, v in _COURSES.items()}
MAX_SLOTS = 12
# Per kind: median classes per grade (urban, rural), class size mean, special-class count odds.
_SIZE = {"02": (3.5, 1.2, 21.0), "03": (6.0, 2.0, 25.0), "04": (7.5, 3.0, 23.0),
         "05": (1.6, 1.2, 5.0), "07": (1.5, 1.5, 15.0)}
_SPECIAL_P = {"02": (0.35, 0.45, 0.15, 0.05), "03": (0.30, 0.45, 0.18, 0.07),
              "04": (0.45, 0.40, 0.12, 0.03), "05": (1.0, 0, 0, 0), "07": (1.0, 0, 0, 0)}
EXCLUDED_REASON = "본교는 해당항목에 대해서 교육통계 입력자료가 없으므로 제외함"
VOCATIONAL_MAJORS = ("전기과", "전자과", "기계과", "자동차과", "건축과", "토목과", "화학공업과", "조리과",
                     "제과제빵과", "미용과", "회계과", "세무회계과", "경영정보과", "금융경영과", "관광경영과",
                     "디자인과", "소프트웨어과", "게임개발과", "웹툰콘텐츠과", "보건간호과", "사회복지과",
                     "식품가공과", "조경과", "스마트팜과")
_VOCATIONAL_TYPES = [i for i, t in enumerate(HS_TYPES) if t[2] == "전문계"]


def build_enrolment(ctx: BuildContext, schools: pa.Table) -> None:
    rng = ctx.rng("education.enrolment")
    n, ny = schools.num_rows, len(YEARS)
    kinds = np.array(schools["_kind_code"].to_pylist())
    urban = schools["_urban"].to_numpy(zero_copy_only=False)
    founded = schools["_founded_year"].to_numpy()

    # Slot mask, 2025 classes per slot, class size per school.
    slot_used = np.zeros((n, MAX_SLOTS), bool)
    median = np.empty(n)
    size = np.empty(n)
    for code, slots in SLOTS.items():
        idx = kinds == code
        slot_used[idx, : len(slots)] = True
        urban_med, rural_med, mean_size = _SIZE[code]
        median[idx] = np.where(urban[idx], urban_med, rural_med)
        size[idx] = mean_size
    school_scale = np.exp(rng.normal(0, 0.55, n))
    classes_2025 = np.maximum(1, np.round(median * school_scale)).astype(int)
    small = classes_2025 == 1
    class_size = np.clip(rng.normal(size, size * 0.12) * np.where(small & (kinds == "02"), 0.55, 1.0), 2, 35)

    # Students per slot and year: 2025 base grown backwards by each school's decline rate.
    decline = rng.normal(0.02, 0.02, n)
    years_back = 2025 - np.array(YEARS)
    factor = (1 + decline[:, None]) ** years_back[None, :]  # (n, ny)
    base = classes_2025[:, None] * class_size[:, None] * rng.normal(1, 0.06, (n, MAX_SLOTS))
    students = np.round(base[:, None, :] * factor[:, :, None] * rng.normal(1, 0.04, (n, ny, MAX_SLOTS)))
    students = np.where(slot_used[:, None, :], np.maximum(students, 1), 0).astype(int)
    classes = np.where(slot_used[:, None, :],
                       np.maximum(1, np.round(students / class_size[:, None, None])), 0).astype(int)

    # Special classes: a school-level count that occasionally moves by one between years.
    sp_p = np.array([_SPECIAL_P[k] for k in kinds])
    sp_base = (rng.random(n)[:, None] > np.cumsum(sp_p, axis=1)).sum(axis=1)
    sp_base = np.where(students[:, -1].sum(axis=1) < 60, 0, sp_base)
    sp_step = rng.choice([-1, 0, 1], size=(n, ny), p=[0.05, 0.9, 0.05])
    sp_classes = np.clip(sp_base[:, None] + np.cumsum(sp_step, axis=1) * (sp_base[:, None] > 0), 0, 4)
    sp_students = np.zeros((n, ny), int)
    for j in range(4):  # add up to four classes of 2–6 pupils
        sp_students += np.where(sp_classes > j, rng.integers(2, 7, (n, ny)), 0)

    hs_type = schools["_hs_type"].to_numpy()
    vocational = np.isin(hs_type, _VOCATIONAL_TYPES)
    n_majors = np.where(vocational, rng.integers(2, 5, n), 1)
    exists = np.array(YEARS)[None, :] >= founded[:, None]
    excluded = rng.random((n, ny)) < 0.004
    _status_table(ctx, schools, exists, excluded, classes, students, sp_classes, sp_students)
    _class_table(ctx, schools, exists, classes, vocational, n_majors)
    _major_table(ctx, schools, vocational, n_majors)


def _status_table(ctx: BuildContext, schools: pa.Table, exists, excluded, classes, students,
                  sp_classes, sp_students) -> None:
    school_idx, year_idx = np.nonzero(exists)
    take = pa.array(school_idx)
    cols = {
        "ATPT_OFCDC_ORG_NM": schools["ATPT_OFCDC_SC_NM"].take(take),
        "JU_ORG_NM": schools["JU_ORG_NM"].take(take),
        "ADRCD_NM": pa.array([f"{a} {b}" for a, b in zip(schools["LCTN_SC_NM"].take(take).to_pylist(),
                                                         schools["_sgg_nm"].take(take).to_pylist())]),
        "SCHUL_CODE": schools["_pbi_code"].take(take),
        "SCHUL_NM": schools["SCHUL_NM"].take(take),
        "SCHUL_KND_SC_CODE": schools["_kind_code"].take(take),
        "FOND_SC_CODE": schools["FOND_SC_NM"].take(take),
        "PBAN_EXCP_YN": pa.array(np.where(excluded[school_idx, year_idx], "Y", "N")),
        "PBAN_EXCP_RSN": pa.array(np.where(excluded[school_idx, year_idx], EXCLUDED_REASON, "")),
        "_pban_yr": pa.array(np.array(YEARS)[year_idx].astype(np.int16)),
        "_sido_code": schools["_sido_code"].take(take),
        "_sgg_code": schools["_sgg_code"].take(take),
        "_sd_schul_code": schools["SD_SCHUL_CODE"].take(take),
        "_sp_classes": pa.array(sp_classes[school_idx, year_idx].astype(np.int16)),
        "_sp_students": pa.array(sp_students[school_idx, year_idx].astype(np.int32)),
    }
    for s in range(MAX_SLOTS):
        cols[f"_c{s + 1}"] = pa.array(classes[school_idx, year_idx, s].astype(np.int16))
        cols[f"_s{s + 1}"] = pa.array(students[school_idx, year_idx, s].astype(np.int32))
    ctx.add_table("edu_status", pa.table(cols),
                  sort_by=("_sgg_code", "SCHUL_KND_SC_CODE", "_pban_yr", "SCHUL_CODE"),
                  key=("_pban_yr", "SCHUL_CODE"),
                  description="학교알리미 school status per disclosure year: classes, students, special classes")


def _class_table(ctx: BuildContext, schools: pa.Table, exists, classes, vocational, n_majors) -> None:
    kinds = schools["_kind_code"].to_pylist()
    parts = []
    for ay in CLASS_YEARS:
        y = YEARS.index(ay)
        counts = np.where(exists[:, y, None], classes[:, y, :], 0)  # (n, slots)
        school_idx, slot_idx = np.nonzero(counts)
        reps = counts[school_idx, slot_idx]
        row_school = np.repeat(school_idx, reps)
        row_slot = np.repeat(slot_idx, reps)
        starts = np.repeat(np.cumsum(reps) - reps, reps)
        class_no = np.arange(reps.sum()) - starts + 1
        parts.append((ay, row_school, row_slot, class_no))
    ay_col = np.concatenate([np.full(len(p[1]), p[0]) for p in parts])
    row_school = np.concatenate([p[1] for p in parts])
    row_slot = np.concatenate([p[2] for p in parts])
    class_no = np.concatenate([p[3] for p in parts])
    take = pa.array(row_school)
    # Course name and grade of each slot, per kind (special schools restart grades per course).
    course = np.empty(len(row_school), dtype=object)
    grade = np.empty(len(row_school), dtype=np.int16)
    kind_arr = np.array(kinds)[row_school]
    for code, slots in SLOTS.items():
        m = kind_arr == code
        course[m] = [slots[s][0] for s in row_slot[m]]
        grade[m] = [slots[s][1] for s in row_slot[m]]
    row_voc = vocational[row_school]
    is_high = kind_arr == "04"
    majors = _major_name(row_school, (class_no - 1) % n_majors[row_school], row_voc)
    ord_nm = np.where(is_high, np.where(row_voc, "전문계", "일반계"), None)
    dddep = np.where(is_high, majors, None)
    cols = {
        "ATPT_OFCDC_SC_CODE": schools["ATPT_OFCDC_SC_CODE"].take(take),
        "ATPT_OFCDC_SC_NM": schools["ATPT_OFCDC_SC_NM"].take(take),
        "SD_SCHUL_CODE": schools["SD_SCHUL_CODE"].take(take),
        "SCHUL_NM": schools["SCHUL_NM"].take(take),
        "AY": pa.array([str(a) for a in ay_col]),
        "GRADE": pa.array(grade.astype(str)),
        "DGHT_CRSE_SC_NM": pa.array(["주간"] * len(row_school)),
        "SCHUL_CRSE_SC_NM": pa.array(course.tolist()),
        "ORD_SC_NM": pa.array(ord_nm.tolist()),
        "DDDEP_NM": pa.array(dddep.tolist()),
        "CLASS_NM": pa.array(class_no.astype(str)),
        "LOAD_DTM": pa.array([LOAD_DTM] * len(row_school)),
        "_grade": pa.array(grade),
        "_class_no": pa.array(class_no.astype(np.int16)),
        "_slot": pa.array(row_slot.astype(np.int16)),
    }
    ctx.add_table("edu_class", pa.table(cols),
                  sort_by=("ATPT_OFCDC_SC_CODE", "SD_SCHUL_CODE", "AY", "_slot", "_class_no"),
                  key=("SD_SCHUL_CODE", "AY", "SCHUL_CRSE_SC_NM", "GRADE", "CLASS_NM"),
                  description="NEIS classInfo: one row per class, academic years 2024-2025")


def _major_name(school_idx: np.ndarray, k: np.ndarray, vocational: np.ndarray) -> np.ndarray:
    """The k-th major of a school: a vocational major, or "일반학과" for academic schools."""
    return np.where(vocational, np.array(VOCATIONAL_MAJORS)[(school_idx * 7 + k + 1) % len(VOCATIONAL_MAJORS)],
                    "일반학과")


def _major_table(ctx: BuildContext, schools: pa.Table, vocational, n_majors) -> None:
    high = np.flatnonzero(schools["_hs_type"].to_numpy() >= 0)
    reps = n_majors[high]
    row_school = np.repeat(high, reps)
    k = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
    row_voc = vocational[row_school]
    majors = _major_name(row_school, k, row_voc)
    take = pa.array(row_school)
    cols = {
        "ATPT_OFCDC_SC_CODE": schools["ATPT_OFCDC_SC_CODE"].take(take),
        "ATPT_OFCDC_SC_NM": schools["ATPT_OFCDC_SC_NM"].take(take),
        "SD_SCHUL_CODE": schools["SD_SCHUL_CODE"].take(take),
        "SCHUL_NM": schools["SCHUL_NM"].take(take),
        "DGHT_CRSE_SC_NM": pa.array(["주간"] * len(row_school)),
        "ORD_SC_NM": pa.array(np.where(row_voc, "전문계", "일반계").tolist()),
        "DDDEP_NM": pa.array(majors.tolist()),
        "LOAD_DTM": pa.array([LOAD_DTM] * len(row_school)),
    }
    ctx.add_table("edu_major", pa.table(cols), sort_by=("ATPT_OFCDC_SC_CODE", "SD_SCHUL_CODE", "DDDEP_NM"),
                  key=("SD_SCHUL_CODE", "DGHT_CRSE_SC_NM", "ORD_SC_NM", "DDDEP_NM"),
                  description="NEIS schoolMajorinfo: majors (학과) of every high school")
