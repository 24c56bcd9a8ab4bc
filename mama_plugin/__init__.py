"""MAMA: a memory of decisions for Claude Code.

The public surface is small and imported lazily, so ``import mama_plugin.storage`` from a hook
stays as light as the standard library plus apsw.
"""

from __future__ import annotations

from typing import Any

from .blas import single_threaded_blas
from .lazy import lazy_name

# Before anything here imports numpy (see blas.py for the measurement behind it).
single_threaded_blas()

__version__ = "0.1.0"

_EXPORTS = {
    "Config": "mama_plugin.config",
    "MamaError": "mama_plugin.errors",
    "ValidationError": "mama_plugin.errors",
    "Store": "mama_plugin.storage",
    "MemoryRecord": "mama_plugin.storage",
    "LinkRecord": "mama_plugin.storage",
    "project_key": "mama_plugin.project",
    "save_decision": "mama_plugin.services.saving.memories",
    "save_checkpoint": "mama_plugin.services.saving.memories",
    "save_insight": "mama_plugin.services.saving.memories",
    "save_context": "mama_plugin.services.saving.memories",
    "record_outcome": "mama_plugin.services.saving.memories",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return lazy_name(__name__, _EXPORTS, name)
