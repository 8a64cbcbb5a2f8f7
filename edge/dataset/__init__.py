"""EDGE Phase B dataset: statistics beside the paper's Tables 10-12, and the verl / SFT export."""

__all__: list[str] = []  # a namespace: import the modules themselves
