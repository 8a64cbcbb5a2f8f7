"""EDGE Phase B filters: answerability (stage 2), quality (stage 3), the contamination audit and the funnel."""

__all__: list[str] = []  # a namespace: import the modules themselves
