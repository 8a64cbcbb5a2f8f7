"""World generator for the education domain: schools (NEIS, 학교알리미) and national qualifications (HRD Korea).

Tables: ``edu_school`` (school register), ``edu_class`` (classInfo), ``edu_major``
(schoolMajorinfo), ``edu_status`` (학교알리미 school status 2019–2025) and the ``hrdk_*``
qualification tables. The work is split by subject into ``education_*`` modules.
"""

from __future__ import annotations

from ..context import BuildContext
from .enrolment import build_enrolment
from .hrdk import build_hrdk
from .schools import build_schools

__all__ = ["build"]


def build(ctx: BuildContext) -> None:
    """Add the education tables to the world."""
    schools = build_schools(ctx)
    build_enrolment(ctx, schools)
    build_hrdk(ctx)
