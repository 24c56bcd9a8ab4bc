"""Keep numpy's BLAS to one thread in MAMA's processes. Standard library only.

MAMA multiplies one query vector by the memory matrix (memory-bound: a second thread saves
~4 ms at 100k memories) right before llama.cpp embeds the next query on the same two cores.
OpenBLAS threads keep spinning after a call, and the two pools then stall each other: search
p95 went from 13 ms to 114 ms at 10k memories (``python -m benchmarks latency``). OpenBLAS reads the
setting once, when numpy is first imported, so this must run before that import.
"""

from __future__ import annotations

import os

# Not OMP_NUM_THREADS: llama.cpp may run its own threads through OpenMP.
_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def single_threaded_blas() -> None:
    """Ask for one BLAS thread unless the user chose otherwise (no effect once numpy loaded)."""
    for name in _VARIABLES:
        os.environ.setdefault(name, "1")
