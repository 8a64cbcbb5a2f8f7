"""Try templates while writing them, against the sandbox world (nothing recorded, nothing written).

    python -m bench.taskset TEMPLATE_OR_TASK_ID [...]      # prints each task as JSON, then runs the oracle on it
    python -m bench.taskset traffic                         # every template of a domain
    python -m bench.taskset --stats traffic                 # Table 6 for those tasks, beside the paper's
    python -m bench.taskset --list                          # task ids, templates and instances
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from bench.agents import OracleAgent
from bench.episode import run_episode
from bench.task import parse_task
from mcp_gateway.gateway import DEFAULT_HOME, open_gateway
from sandbox import InProcessSandbox

from .build import DOMAIN_PREFIX, load_templates, task_ids, to_task, write_drafts
from .stats import format_table, task_set_stats


async def main(names: list[str], scale: float, stats: bool) -> int:
    templates = load_templates()
    domains = {n for n in names if n in DOMAIN_PREFIX}
    only = set(names) | {tpl.name for tpl in templates if tpl.domain in domains}
    gateway = open_gateway(upstream="sandbox", sandbox=InProcessSandbox(DEFAULT_HOME, scale=scale),
                           profile="bench")
    failures = 0
    try:
        drafts = await write_drafts(gateway.runtime, templates, only=only)
        if stats:
            tasks = [parse_task(to_task(d, "try@local", gateway.catalog)) for d in drafts]
            print(format_table(task_set_stats(tasks)))
            return 0
        for draft in drafts:
            record = to_task(draft, "try@local", gateway.catalog)
            print(json.dumps(record, ensure_ascii=False, indent=1))
            outcome = await run_episode(parse_task(record), OracleAgent(), gateway, seed=0)
            print(f"# {draft.task_id}: oracle passed={outcome.passed} action={outcome.action.action:.2f}",
                  file=sys.stderr)
            failures += not outcome.passed
    finally:
        await gateway.aclose()
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--stats", action="store_true", help="draft the named templates/domains and print Table 6")
    parser.add_argument("--scale", type=float, default=1.0)
    options = parser.parse_args()
    if options.list:
        for tpl, variant, task_id in task_ids(load_templates()):
            print(task_id, tpl.domain, tpl.name, variant)
        sys.exit(0)
    sys.exit(asyncio.run(main(options.names, options.scale, options.stats)))
