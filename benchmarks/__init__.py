"""Benchmarks: commands that print numbers (``mama bench retrieval``, ``mama bench latency``)."""
