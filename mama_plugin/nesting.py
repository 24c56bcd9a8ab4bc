"""How deep a JSON value nests, counted without recursion, and how deep MAMA reads one.

What another program hands MAMA (an MCP request, a teammate's row) is refused past
:data:`MAX_DEPTH` levels of arrays and objects rather than read: Python's JSON reader gives up
near 1,000 levels with a RecursionError, and every reader after it (validation, masking,
logging) would recurse again. MCP's messages nest a handful of levels; a memory a few more.
Standard library only.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64


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
