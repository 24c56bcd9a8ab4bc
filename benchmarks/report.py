"""Print benchmark figures as compact tables."""

from __future__ import annotations

from typing import Any

TURN_COLUMNS = ("r1", "r5", "r10", "r25", "r_all10", "mrr", "ndcg10")
SESSION_COLUMNS = ("r1", "r3", "r5", "r10", "r_all10", "mrr", "ndcg10")
GROUP_ORDER = ("1", "2", "3", "4", "1-4", "5")


def retrieval_tables(figures: dict[str, Any]) -> str:
    """One table per evidence set: a row per system and category, turn then session columns."""
    lines: list[str] = []
    for evidence, systems in figures.items():
        lines.append(f"\n== evidence: {evidence} ==")
        head = (
            " ".join(f"{c:>7}" for c in TURN_COLUMNS)
            + "  |"
            + " ".join(f"{'s_' + c:>9}" for c in SESSION_COLUMNS)
        )
        lines.append(f"{'system':<7} {'cat':>4} {'n':>5} {head}")
        for system, units in systems.items():
            for group in GROUP_ORDER:
                turn = units["turn"].get(group)
                session = units["session"].get(group)
                if turn is None or session is None:
                    continue
                cells = " ".join(f"{turn[c]:>7.3f}" for c in TURN_COLUMNS)
                scells = " ".join(f"{session[c]:>9.3f}" for c in SESSION_COLUMNS)
                lines.append(f"{system:<7} {group:>4} {turn['n']:>5} {cells}  |{scells}")
    return "\n".join(lines) + "\n"
