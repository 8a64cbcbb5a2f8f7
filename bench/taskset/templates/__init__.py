"""Task templates, one module per domain (importing a module registers its templates)."""
