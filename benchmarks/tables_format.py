"""What the renderers of benchmarks/README.md's tables share: a Markdown table and its cells."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Renderer", "markdown", "num", "pair", "pr", "share"]

Renderer = Callable[[dict[str, Any]], str]


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table: the header, its rule, one line a row."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def num(value: Any, digits: int = 2, unit: str = "") -> str:
    """A figure to ``digits`` decimals (thousands separated), or "–" when there is none."""
    if value is None:
        return "–"
    return f"{value:,.{digits}f}{unit}"


def pr(figures: dict[str, Any] | None, p: str = "precision", r: str = "recall") -> str:
    """ "P / R" of one class."""
    figures = figures or {}
    return f"{num(figures.get(p))} / {num(figures.get(r))}"


def share(part: int, whole: int) -> str:
    return f"{part}/{whole}" + (f" ({part / whole:.0%})" if whole else "")


def pair(d: dict[str, Any], key: str, digits: int = 1) -> str:
    """ "p50 / p95" of ``d[KEY_p50_ms]`` and ``d[KEY_p95_ms]``."""
    return f"{num(d[f'{key}_p50_ms'], digits)} / {num(d[f'{key}_p95_ms'], digits)}"
