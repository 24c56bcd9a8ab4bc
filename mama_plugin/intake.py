"""How deep and how large MAMA reads what another program or a teammate hands it.

What comes from outside (an MCP request, a teammate's row or ``.mama/`` file) is refused past
:data:`MAX_DEPTH` levels of arrays and objects rather than read: Python's JSON reader gives up
near 1,000 levels with a RecursionError, and every reader after it (validation, masking,
logging) would recurse again. MCP's messages nest a handful of levels; a memory a few more.
A teammate's memory is refused past :data:`MAX_CHARS`: the largest a save accepts (its texts
at 8,000 characters, its items at 2,000, 50 to a list) stays well under it, and a 20 MB one
once made every matching prompt take over 3 s. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
MAX_CHARS = 1_000_000  # of a teammate's memory, as JSON or as its shared file


def nesting(value: Any, most: int = MAX_DEPTH) -> int:
    """How many levels of arrays and objects ``value`` nests (a scalar: 0); it stops counting
    past ``most``. Iterative: no depth of input can exhaust the stack here."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > most:
            break
        todo.extend((child, depth + 1) for child in children)
    return deepest


def loads(text: str | bytes) -> Any:
    """``text`` parsed as JSON; ValueError for what is not JSON or nests past
    :data:`MAX_DEPTH` (never RecursionError)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    if nesting(value) > MAX_DEPTH:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    return value
