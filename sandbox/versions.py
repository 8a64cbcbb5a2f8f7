"""Which worlds exist and the default seed: light constants the CLI and configuration read without
importing the generator (which pulls in DuckDB, pyarrow and every domain module)."""

WORLD_VERSIONS = ("v1", "v2")
DEFAULT_SEED = 20260901
