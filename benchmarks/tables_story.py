"""The story benchmark's table of benchmarks/README.md: its report's figures, as it prints them."""

from __future__ import annotations

from typing import Any

from .story_report import report


def story(data: dict[str, Any]) -> str:
    """The figures table ``python -m benchmarks story`` prints (today's beside the baseline's)."""
    lines = report(data, None).splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("| figure"))
    table = []
    for line in lines[first:]:
        if not line.startswith("|"):
            break
        table.append(line)
    return "\n".join(table) + "\n"
