"""EDGE Phase B dataset: statistics beside the paper's Tables 10-12, and the verl / SFT export."""
