"""EDGE Phase B synthesis (paper §3.3): junction typing, walks, executed traces, queries and answers, items."""

__all__: list[str] = []  # a namespace: import the modules themselves
