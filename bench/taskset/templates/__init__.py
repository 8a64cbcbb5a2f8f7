"""Task templates, one module per domain (importing a module registers its templates)."""

__all__: list[str] = []  # a namespace: import the modules themselves
