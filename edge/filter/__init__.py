"""EDGE Phase B filters: answerability (stage 2), quality (stage 3), the contamination audit and the funnel."""
