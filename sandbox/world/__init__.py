"""The sandbox world generator: one DuckDB file built per domain (one subpackage each), its drift and its diffs."""

__all__: list[str] = []  # a namespace: import the modules themselves
