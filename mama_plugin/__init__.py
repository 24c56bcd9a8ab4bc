"""MAMA: a memory of decisions for Claude Code.

The public surface is small and imported lazily, so ``import mama_plugin.storage`` from a hook
stays as light as the standard library plus apsw.
"""

from __future__ import annotations

from typing import Any

from .blas import single_threaded_blas
from .lazy import by_module, lazy_name

# Before anything here imports numpy (see blas.py for the measurement behind it).
single_threaded_blas()

__version__ = "0.1.0"

_EXPORTS = by_module(
    {
        "mama_plugin.config": ("Config",),
        "mama_plugin.errors": ("MamaError", "ValidationError"),
        "mama_plugin.storage": ("Store", "MemoryRecord", "LinkRecord"),
        "mama_plugin.project": ("project_key",),
        "mama_plugin.services.saving.memories": (
            "save_decision",
            "save_checkpoint",
            "save_insight",
            "save_context",
            "record_outcome",
        ),
    }
)

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return lazy_name(__name__, _EXPORTS, name)
