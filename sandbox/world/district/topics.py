"""What a district dataset is about: the ``Topic`` record and the field kinds rows are drawn from.

A topic is one real business-license type (일반음식점, 미용업, …) or one facility/registry
kind (공영주차장, 무더위쉼터, …). ``district_licenses`` and ``district_facilities`` list them;
``district_specs`` turns each into the datasets the two portals publish.

Extra (topic-specific) fields are declared as ``Extra(gg_name, seoul_name, description, kind,
arg)``; ``kind`` says how values are drawn (see ``district_values``) and whether the field
is a number, a date or a string.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Extra:
    """One topic-specific field, named the way each portal names it."""

    gg: str
    seoul: str
    description: str
    kind: str  # int | float | year | date | choice | kind (the row's 업태) | yn | tel | hours | office | emd | url | bizno
    arg: str = ""  # "lo,hi" for numbers and dates, "a|b|c" for choices

    @property
    def type(self) -> str:
        return {"int": "number", "float": "number", "date": "date", "year": "number"}.get(self.kind, "string")


@dataclass(frozen=True)
class Topic:
    """One license type or facility kind, with its size on each portal."""

    ko: str  # Korean name, e.g. "일반음식점"
    gloss: str  # English gloss; CamelCase of it is the generated Gyeonggi service name
    family: str  # license family (food, health, …) or "facility"
    gg_rows: int  # full-scale rows on Gyeonggi (0 = not published there)
    seoul_rows: int  # full-scale rows on Seoul (0 = not published there)
    license: bool = True
    name_field: str = "BIZPLC_NM"  # Gyeonggi name of the name column (Seoul licenses use BPLCNM)
    suffixes: str = ""  # "|"-separated endings of generated names
    kinds: str = ""  # "|"-separated 업태 (business sub-type) values
    extras: tuple[Extra, ...] = field(default_factory=tuple)
    seoul_code: str = ""  # real 6-digit LOCALDATA code when known (others are generated)
    gg_service: str = ""  # real Gyeonggi service name when known
    seoul_service: str = ""  # real Seoul service name when known (facilities)
    name_from_dong: bool = False  # names like "매화동 경로당" rather than "한솔경로당"


def camel(gloss: str) -> str:
    """'General Restaurant' -> 'GeneralRestaurant' (the shape of Gyeonggi service names)."""
    return "".join(w[:1].upper() + w[1:] for w in gloss.replace("-", " ").split())
