"""Lawmakers of terms 17-22: who held which seat, for which party, on which committees.

Each term's district seats are handed to parties by regional lean (보수 in 영남, 민주 in 호남),
with the real seat counts; incumbents of the same party lineage often keep their district, so
one person (one MONA_CD) serves several terms and REELE_GBN_NM / UNITS follow from that.
A few seats per term change hands mid-term (재보궐선거 for districts, 승계 for 비례대표), so a
term has a little more than 300 member-terms. Committee seats follow the committees' sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..context import BuildContext
from ..korean import person_names
from .facts import (
    COMMITTEES,
    DISTRICT_SEATS,
    NEGOTIATING_GROUP_MIN,
    PARTIES,
    PROVINCE_LEAN,
    TERMS,
    Party,
    district_names,
)
from .people import mona_codes

KEEP_DISTRICT_P = 0.55  # an incumbent of the same lineage runs again and wins
BIRYE_TO_DISTRICT_P = 0.12  # a former 비례대표 wins a district of the same lineage
RETURN_BIRYE_P = 0.05


@dataclass
class Person:
    name: str
    female: bool
    birth: str  # YYYY-MM-DD
    lunar: bool
    prior: int  # terms served before the 17th
    lineage: str
    seats: list[int] = field(default_factory=list)


@dataclass
class Seat:
    """One member-term: a person holding a seat in one term."""

    person: int
    age: int
    party: Party
    orig: str  # ORIG_NM
    elect: str  # 지역구 | 비례대표
    start: str
    end: str
    current: bool  # still holds the seat at the end of the term (or today, for the 22nd)
    committee: str = ""  # primary committee key
    extra: list[str] = field(default_factory=list)  # concurrent committee keys
    roles: dict[str, str] = field(default_factory=dict)  # committee key -> 위원장 | 간사


@dataclass
class Roster:
    persons: list[Person]
    seats: list[Seat]
    mona: list[str]

    def term_seats(self, age: int) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s.age == age]

    def terms_served(self, person: int, up_to: int) -> int:
        p = self.persons[person]
        return p.prior + len({self.seats[i].age for i in p.seats if self.seats[i].age <= up_to})


def build_roster(ctx: BuildContext) -> Roster:
    rng = ctx.rng("politics.members")
    persons: list[Person] = []
    seats: list[Seat] = []
    districts = district_names()
    prev_holder: dict[str, int] = {}
    prev_birye: dict[str, list[int]] = {}

    def new_person(lineage: str, birye: bool, age: int, start: str) -> int:
        year = int(start[:4]) - int(np.clip(rng.normal(54, 8), 32, 76))
        prior = int(rng.choice(4, p=[0.55, 0.27, 0.12, 0.06])) if age == 17 and lineage in ("cons", "dem") else 0
        persons.append(Person(person_names(rng, 1)[0], bool(rng.random() < (0.55 if birye else 0.12)),
                              f"{year}-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d}",
                              bool(rng.random() < 0.12), prior, lineage))
        return len(persons) - 1

    for term in TERMS:
        parties = PARTIES[term.age]
        seated: set[int] = set()
        term_first = len(seats)
        for party, (_province, orig) in _place_district_seats(rng, parties, districts[:DISTRICT_SEATS[term.age]]):
            pid = prev_holder.get(orig)
            pool = prev_birye.get(party.lineage, [])
            if pid is not None and pid not in seated and persons[pid].lineage == party.lineage \
                    and rng.random() < KEEP_DISTRICT_P:
                pass
            elif pool and rng.random() < BIRYE_TO_DISTRICT_P:
                pid = pool.pop(int(rng.integers(len(pool))))
            else:
                pid = new_person(party.lineage, False, term.age, term.start)
            seated.add(pid)
            seats.append(Seat(pid, term.age, party, orig, "지역구", term.start, term.end, True))
        for party in parties:
            for _ in range(party.proportional):
                pool = prev_birye.get(party.lineage, [])
                if pool and rng.random() < RETURN_BIRYE_P:
                    pid = pool.pop(int(rng.integers(len(pool))))
                else:
                    pid = new_person(party.lineage, True, term.age, term.start)
                seated.add(pid)
                seats.append(Seat(pid, term.age, party, "비례대표", "비례대표", term.start, term.end, True))
        _replace_some(rng, seats, term_first, term, parties, new_person)
        for i in range(term_first, len(seats)):
            s = seats[i]
            persons[s.person].seats.append(i)
            persons[s.person].lineage = s.party.lineage
        prev_holder = {s.orig: s.person for s in seats[term_first:] if s.current and s.elect == "지역구"}
        prev_birye = {}
        for s in seats[term_first:]:
            if s.elect == "비례대표":
                prev_birye.setdefault(s.party.lineage, []).append(s.person)
        _assign_committees(rng, seats, term_first, term.age)
    return Roster(persons, seats, mona_codes(rng, len(persons)))


def _place_district_seats(rng: np.random.Generator, parties: tuple[Party, ...],
                          districts: list[tuple[str, str]]) -> list[tuple[Party, tuple[str, str]]]:
    # Rank districts by regional lean (plus local noise) and party seats by party lean, then pair them.
    slot_party = np.repeat(np.arange(len(parties)), [p.seats - p.proportional for p in parties])
    slot_lean = np.array([parties[i].lean for i in slot_party]) + rng.normal(0, 0.3, len(slot_party))
    dist_lean = np.array([PROVINCE_LEAN[p] for p, _ in districts]) + rng.normal(0, 0.9, len(districts))
    slots = slot_party[np.argsort(-slot_lean, kind="stable")]
    order = np.argsort(-dist_lean, kind="stable")
    return [(parties[slots[k]], districts[order[k]]) for k in range(len(districts))]


def _replace_some(rng: np.random.Generator, seats: list[Seat], first: int, term, parties: tuple[Party, ...],
                  new_person) -> None:
    """Mid-term changes: the holder leaves, a 재보궐 winner or the next 비례 candidate follows."""
    start, end = np.datetime64(term.start), np.datetime64(term.end)
    span = int((end - start).astype(int))
    big = [p for p in parties if p.seats >= NEGOTIATING_GROUP_MIN]
    for i in rng.choice(np.arange(first, len(seats)), size=int(rng.integers(3, 9)), replace=False):
        old = seats[int(i)]
        left = start + int(rng.integers(90, max(91, span - 150)))
        gap = int(rng.integers(5, 20)) if old.elect == "비례대표" else int(rng.integers(40, 200))
        joined = min(left + gap, end)
        old.end, old.current = str(left), False
        party = old.party if old.elect == "비례대표" or rng.random() < 0.6 else big[int(rng.integers(len(big)))]
        pid = new_person(party.lineage, old.elect == "비례대표", term.age, str(joined))
        seats.append(Seat(pid, term.age, party, old.orig, old.elect, str(joined), term.end, True))


def _assign_committees(rng: np.random.Generator, seats: list[Seat], first: int, age: int) -> None:
    """One primary standing committee each; concurrent seats on 운영/정보/여가/예결; chairs and 간사."""
    idx = np.arange(first, len(seats))
    primaries = [c for c in COMMITTEES if c.primary]
    slots = np.repeat([c.key for c in primaries], [c.limit for c in primaries])
    slots = np.resize(rng.permutation(slots), len(idx))
    for i, key in zip(idx, rng.permutation(slots)):
        seats[int(i)].committee = str(key)
    active = np.array([i for i in idx if seats[i].current])
    for c in COMMITTEES:
        if not c.primary:
            for i in rng.choice(active, size=min(c.limit, len(active)), replace=False):
                seats[int(i)].extra.append(c.key)
    counts: dict[str, int] = {}
    for i in active:
        counts[seats[i].party.name] = counts.get(seats[i].party.name, 0) + 1
    ranked = sorted(counts, key=lambda name: (-counts[name], name))
    groups = [name for name in ranked if counts[name] >= NEGOTIATING_GROUP_MIN and name != "무소속"]
    for c in COMMITTEES:
        members = [int(i) for i in active if seats[i].committee == c.key or c.key in seats[i].extra]
        chair_party = groups[0] if rng.random() < 0.65 or len(groups) < 2 else groups[1]
        for role, party in [("위원장", chair_party)] + [("간사", g) for g in groups]:
            pool = [i for i in members if seats[i].party.name == party and c.key not in seats[i].roles]
            if pool:
                seats[pool[int(rng.integers(len(pool)))]].roles[c.key] = role
