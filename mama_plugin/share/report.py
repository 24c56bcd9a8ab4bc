"""What one share or import did, file by file, as counts and lines for a person."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ShareReport:
    """The ids (or paths) each step touched; ``problems`` are files MAMA could not read."""

    imported: list[str] = field(default_factory=list)  # new memories from teammates
    updated: list[str] = field(default_factory=list)  # memories a teammate edited
    forgotten: list[str] = field(default_factory=list)  # tombstones honoured
    conflicts: list[str] = field(default_factory=list)  # changed on both sides, both kept
    links_added: int = 0
    links_skipped: list[str] = field(default_factory=list)  # to a memory this clone lacks
    written: list[str] = field(default_factory=list)  # files (re)written by the share
    tombstones: list[str] = field(default_factory=list)  # tombstones written
    unchanged: int = 0
    held: list[str] = field(default_factory=list)  # not written: an open conflict
    withheld: list[str] = field(default_factory=list)  # not written: looks like a secret
    missing: list[str] = field(default_factory=list)  # shared files gone without a tombstone
    problems: list[str] = field(default_factory=list)
    embedded: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}

    def lines(self) -> list[str]:
        """The report for a terminal: one line a kind of change, nothing for an empty one."""
        out = []
        for name, text in _LINES:
            items = getattr(self, name)
            n = items if isinstance(items, int) else len(items)
            if n:
                shown = "" if isinstance(items, int) else ": " + ", ".join(items[:8])
                more = f" (+{n - 8})" if not isinstance(items, int) and n > 8 else ""
                out.append(f"{text.format(n=n)}{shown}{more}")
        out.extend(f"problem: {p}" for p in self.problems)
        return out or ["nothing to do: .mama/ and this clone agree"]


# The report's lines in the order told: the field each counts ({n}: how many) and its words.
_LINES = (
    ("imported", "imported {n} new memories from .mama/"),
    ("updated", "updated {n} memories a teammate edited"),
    ("forgotten", "forgot {n} memories a teammate deleted (tombstones)"),
    ("links_added", "added {n} links"),
    ("links_skipped", "skipped {n} links to memories this clone does not have"),
    ("written", "wrote {n} files"),
    ("tombstones", "wrote {n} tombstones (memories forgotten here)"),
    ("unchanged", "{n} files already up to date"),
    ("embedded", "embedded {n} memories"),
    (
        "conflicts",
        "{n} conflicts: changed here and by a teammate since the last share; "
        "both kept (`mama share --conflicts`)",
    ),
    ("held", "left {n} files alone while their conflict is open"),
    ("withheld", "withheld {n} files: they would carry something that looks secret"),
    (
        "missing",
        "{n} shared files are gone from .mama/ without a tombstone: nothing was forgotten "
        "here (`mama forget ID` then `mama share` deletes on purpose)",
    ),
)
