"""EDGE: execution-grounded tool-graph synthesis (paper §3)."""
