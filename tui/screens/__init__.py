"""The console's views (one ``Screen`` each, CSS beside it) and their dialogs."""

__all__: list[str] = []  # a namespace: import the modules themselves
