"""Plain data from a record: its named fields, as ``--json`` output and the page read them."""

from __future__ import annotations

from typing import Any


def picked(record: object, *names: str) -> dict[str, Any]:
    """``record``'s fields ``names``, in the order named; ``"key=field"`` shows a field under
    another key, and a tuple becomes a list (as JSON shows it).

    ``picked(step, "newer", "rel=relationship")`` is ``{"newer": step.newer, "rel":
    step.relationship}``.
    """
    out: dict[str, Any] = {}
    for name in names:
        key, _, field = name.partition("=")
        value = getattr(record, field or key)
        out[key] = list(value) if isinstance(value, tuple) else value
    return out
