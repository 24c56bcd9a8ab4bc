"""MAMA's benchmarks: ``python -m benchmarks <kind>`` prints one benchmark's figures.

Outside the product: they depend on ``mama_plugin``, nothing in ``mama_plugin`` imports them,
and the wheel never ships them. Their data (``data/``) and frozen baselines (``baselines/``)
live here; the benchmarks that drive real Claude Code use the tests' scripted Messages API
(:mod:`.checkout`), so every benchmark runs from a source checkout.
"""
