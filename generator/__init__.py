"""Builds the speculative decoding explainer; `python -m generator --help` lists the verbs."""

__version__ = "0.1.0"
