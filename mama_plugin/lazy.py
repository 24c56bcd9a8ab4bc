"""A package's names imported on first use, so importing the package costs nothing.

``mama_plugin`` and ``mama_plugin.embeddings`` keep their public names in a table (name →
module) and look each one up here from their ``__getattr__``: a hook that imports
``mama_plugin.storage`` or a setting that reads an embedding model's card never loads the rest.
Standard library only.
"""

from __future__ import annotations

import importlib
from typing import Any


def by_module(table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """A package's export table (name → module) from its modules' names (module → names)."""
    return {name: module for module, names in table.items() for name in names}


def lazy_name(package: str, exports: dict[str, str], name: str) -> Any:
    """``name`` of ``package``, imported from its module in ``exports`` (relative modules
    start with a dot); AttributeError for a name the table does not hold."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, package), name)
