"""The report of ``python -m benchmarks story``: its figures, today's beside a baseline's."""

from __future__ import annotations

from typing import Any

from .story import SOURCES, TOKENS

# (figure key, what the row says, the target)
ROWS: tuple[tuple[str, str, str], ...] = (
    ("resume_right", "resume point right", "≥ 0.95"),
    ("open_precision", "open items precision", "≥ 0.90"),
    ("open_recall", "open items recall", "≥ 0.90"),
    ("told_twice", "starts that tell an item twice", "0"),
    ("closed_told_open", "starts that tell a closed item as open", "0"),
    ("tokens", "tokens per start, mean (max)", f"≤ {TOKENS}"),
    ("decisions_told", "labelled decisions told", "–"),
    ("decisions_cut", "decisions the startup start told, cut from the compact start", "0"),
    ("trivial_told", "starts that tell a trivial session", "0"),
)


def _cell(f: dict[str, Any], key: str) -> str:
    if key == "tokens":
        return f"{f['tokens_mean']:g} ({f['tokens_max']})"
    value = f.get(key)
    if value is None:
        return "–"
    if key in ("told_twice", "closed_told_open", "trivial_told"):
        return f"{value}/{f['starts']}"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def report(data: dict[str, Any], verbose: dict[str, dict[str, list[Any]]] | None) -> str:
    """The report's text; ``verbose``: also every start judged wrong, with its text."""
    columns = list(data["columns"])
    heads = [f"{c} ({s})" for c in columns for s in SOURCES]
    cases = ", ".join(f"{c}: {n}" for c, n in data["case_sequences"].items())
    out = [
        f"session starts after each step of {data['sequences']} labelled sequences "
        f"({data['sessions']} sessions; sequences per case {cases}), judged from the text the "
        "SessionStart hook injects (startup, and after /compact)",
        "",
        "| figure | target | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    for key, label, target in ROWS:
        cells = [_cell(data["columns"][c][s], key) for c in columns for s in SOURCES]
        if key == "decisions_cut":
            cells = [
                cell if s == "compact" else "–"
                for cell, s in zip(cells, SOURCES * len(columns), strict=True)
            ]
        out.append(f"| {label} | {target} | " + " | ".join(cells) + " |")
    out += ["", "per case (startup starts): resume right · precision · recall · told twice", ""]
    out += ["| case | starts | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    first = data["cases"][columns[0]]["startup"]
    for case in first:
        cells = []
        for c in columns:
            f = data["cases"][c]["startup"][case]
            cells.append(
                " · ".join(
                    _cell(f, k)
                    for k in ("resume_right", "open_precision", "open_recall", "told_twice")
                )
            )
        out.append(f"| {case} | {first[case]['starts']} | " + " | ".join(cells) + " |")
    for c in columns:
        out.append(f"\n{c}: {data['columns'][c]['checkout']}")
    t = data["timing"]
    out.append(f"run {t['seconds']:.1f} s; before: {t['load_before']}; after: {t['load_after']}")
    if verbose:
        out += _wrong(verbose)
    return "\n".join(out) + "\n"


def _wrong(verbose: dict[str, dict[str, list[Any]]]) -> list[str]:
    """Every start that misses a figure, with what its text told and what the labels want."""
    out = []
    for column, sources in verbose.items():
        for source, rows in sources.items():
            for q, step, j, text in rows:
                wrong = not j.resume_right or j.twice or j.closed_told or j.correct < len(j.entries)
                if not (wrong or len(j.found) < len(j.wanted.open)):
                    continue
                missed = [i for i in j.wanted.open if i not in j.found]
                out += [
                    "",
                    f"## {column} {source} · {q.name} after step {step}: resume "
                    f"{'right' if j.resume_right else 'WRONG'} (told {j.resumed}, "
                    f"wanted {j.wanted.resume}); missed {missed}; twice {j.twice}; "
                    f"closed told {j.closed_told}",
                    *[f"  [{h}] {e} → open {o} closed {c}" for h, e, o, c in j.entries],
                    text,
                ]
    return out
