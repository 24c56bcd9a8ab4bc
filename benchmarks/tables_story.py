"""The story benchmark's tables of benchmarks/README.md (the starts; pairs of their open items):
the reports' figures, as they print them."""

from __future__ import annotations

from typing import Any

from .items import report_of
from .story_report import report


def story(data: dict[str, Any]) -> str:
    """The figures table ``python -m benchmarks story`` prints (today's beside the baseline's)."""
    return _table(report(data, None), "| figure")


def items(data: dict[str, Any]) -> str:
    """The first judges table ``python -m benchmarks items`` prints: are two items one?"""
    return _table(report_of(data), "| judge")


def items_closes(data: dict[str, Any]) -> str:
    """Its second: does a later session close a step?"""
    return _table(report_of(data), "| judge | precision | recall | closed while open")


def _table(text: str, head: str) -> str:
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(head))
    table = []
    for line in lines[first:]:
        if not line.startswith("|"):
            break
        table.append(line)
    return "\n".join(table) + "\n"
