"""The KOPA-Bench task set: templates that write tasks over the sandbox world, the build, the audit and the statistics.

    python -m bench.taskset NAME        # try a template against the sandbox (prints the tasks, runs the oracle)
    kopa bench build-tasks              # record the default bundle and write bench/tasks/kopa-bench.jsonl
    kopa bench audit bench/tasks/kopa-bench.jsonl
"""

from .audit import Finding, audit_tasks
from .build import build_task_set, load_templates, rebuild_drafts, to_task, write_drafts
from .draft import Draft, DraftError
from .registry import TEMPLATES, Template, template
from .stats import PAPER_TABLE_6, format_table, task_set_stats

__all__ = ["PAPER_TABLE_6", "TEMPLATES", "Draft", "DraftError", "Finding", "Template", "audit_tasks",
           "build_task_set", "format_table", "load_templates", "rebuild_drafts", "task_set_stats", "template",
           "to_task", "write_drafts"]
