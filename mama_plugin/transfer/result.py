"""What an import wrote: per-table counts of source rows and where each one went."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class LegacyResult:
    """Per-table counts: rows in the source and where each one went."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    def tally(self, table: str, outcome: str, n: int = 1) -> None:
        """Count ``n`` rows of ``table`` as ``outcome`` (source, imported, archived, …)."""
        self.counts.setdefault(table, Counter())[outcome] += n
