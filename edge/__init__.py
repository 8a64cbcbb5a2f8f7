"""EDGE: execution-grounded tool-graph synthesis (paper §3)."""

__all__: list[str] = []  # a namespace: import the modules themselves
