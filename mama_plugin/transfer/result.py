"""What an import wrote: per-table counts of source rows and where each one went."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import LegacyImportError, ValidationError

T = TypeVar("T")


@dataclass
class LegacyResult:
    """Per-table counts: rows in the source and where each one went."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    def tally(self, table: str, outcome: str, n: int = 1) -> None:
        """Count ``n`` rows of ``table`` as ``outcome`` (source, imported, archived, …)."""
        self.counts.setdefault(table, Counter())[outcome] += n

    def parsed(
        self, table: str, rows: list[Any], parse: Callable[[dict[str, Any]], T]
    ) -> Iterator[T]:
        """Each row of ``table`` as ``parse`` reads it, counted as a source row; a row that is
        not an object or does not parse raises LegacyImportError naming it (``links[3]: …``)."""
        for index, row in enumerate(rows):
            self.tally(table, "source")
            try:
                if not isinstance(row, dict):
                    raise ValueError("not an object")
                parsed = parse(row)
            except (KeyError, TypeError, ValueError, ValidationError) as exc:
                raise LegacyImportError(f"{table}[{index}]: {exc}") from exc
            yield parsed
