"""World generator for the politics domain: the National Assembly (열린국회정보, ``assembly``).

Builds, in dependency order: the lawmakers of terms 17-22 (``politics_members``), the meeting
calendar of terms 20-22 (``politics_minutes``), the bills of terms 20-22 (``politics_bills``)
and from them the portal's tables: members and committees, bills, minutes and the 22nd
term's plenary votes. Every table is named ``assembly_*`` and uses the portal's field names.
"""

from __future__ import annotations

from ..context import BuildContext
from .bill_tables import bill_table
from .bills import build_bills
from .member_tables import add_member_tables
from .members import build_roster
from .minutes import PLENARY, add_minutes_tables, sitting_calendar
from .votes import AGE as VOTE_AGE
from .votes import add_vote_tables

__all__ = ["build"]


def build(ctx: BuildContext) -> None:
    """Add the politics tables to the world."""
    roster = build_roster(ctx)
    add_member_tables(ctx, roster)
    sittings = sitting_calendar(ctx)
    bills = bill_table(ctx, roster, build_bills(ctx, roster, sittings))
    ctx.add_table("assembly_bill", bills, sort_by=("AGE DESC", "BILL_NO DESC"), indexes=(("BILL_ID",),),
                  key=("BILL_ID",), description="열린국회정보 bills of terms 20-22 (nzmimeepazxkubdpn, "
                                                "TVBPMBILL11, ALLBILL), member, committee and government bills")
    add_minutes_tables(ctx, sittings, bills)
    add_vote_tables(ctx, roster, bills, sittings[(VOTE_AGE, PLENARY)])
