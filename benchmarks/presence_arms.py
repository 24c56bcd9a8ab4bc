"""Another arm of ``python -m benchmarks presence``'s rounds beside this checkout's.

A baseline checkout (``--baseline-plugin``) and the floor (``--floor``, :mod:`.floor_plugin`)
are told alike: their wall time, what they add over no plugin, this checkout beside them, and
each phase's median side by side. Also the medians every arm's figures are read with.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from .latency import percentile
from .phases import PHASES

if TYPE_CHECKING:
    from .presence import Run


def arm_lines(
    label: str,
    other: list[Run],
    mine: list[Run],
    without: list[Run],
    data: dict[str, Any],
    *,
    counts: bool = True,
) -> tuple[str, dict[str, Any]]:
    """Another arm (``label``) of the same rounds beside this checkout's: its wall time, what
    it adds over no plugin, this checkout over it, and each phase's median side by side.
    ``counts``: also whether it was there (tools, prompt hook, Stop; not for the floor)."""
    n = len(other)
    walls, bare = [r.wall_s for r in other], [r.wall_s for r in without]
    added = percentile(walls, 50) - percentile(bare, 50)
    above = percentile([r.wall_s for r in mine], 50) - percentile(walls, 50)
    figures: dict[str, Any] = {
        "p50_s": round(percentile(walls, 50), 2),
        "p95_s": round(percentile(walls, 95), 2),
        "added_p50_s": round(added, 2),
        "this_checkout_above_p50_s": round(above, 2),
        "cpu_p50_s": cpu_p50([r.cpu_s for r in other]),
    }
    lines = []
    if counts:
        present = {
            name: sum(getattr(r, name) for r in other)
            for name in (
                "tools_on_first_request",
                "prompt_hook_injected",
                "stop_checkpoint_written",
                "prompt_by_vectors",
            )
        }
        figures |= present
        figures["observe_prompt_p50_ms"] = p50([r.observe_ms for r in other])
        lines.append(
            f"  {label}, same rounds: tools {present['tools_on_first_request']}/{n}, prompt "
            f"hook {present['prompt_hook_injected']}/{n} (by vectors "
            f"{present['prompt_by_vectors']}/{n}), Stop {present['stop_checkpoint_written']}/{n}\n"
        )
    lines += [
        f"  {label} wall p50 {figures['p50_s']:.2f} s, p95 {figures['p95_s']:.2f} s; added p50 "
        f"{added:.2f} s (this checkout: {data['added_p50_s']} s, {above:+.2f} s beside it); CPU "
        f"per run p50 {figures['cpu_p50_s']} s (this checkout: {data['cpu_with_p50_s']} s)\n",
        f"  phases, p50 ms (this checkout | {label}):\n",
    ]
    table = {}
    for name, _, _ in PHASES:
        a = p50([r.phases.get(name) for r in mine])
        b = p50([r.phases.get(name) for r in other])
        if a is not None or b is not None:
            table[name] = {"this": a, "other": b}
            lines.append(f"    {name:<36} {a if a is not None else '—':>8} | "
                         f"{b if b is not None else '—'}\n")  # fmt: skip
    figures["phases_p50_ms"] = table
    figures["runs_detail"] = [asdict(r) for r in other]
    return "".join(lines), figures


def p50(values: list[float | None]) -> float | None:
    """The median of the values known (None when none is), to a tenth."""
    known = [v for v in values if v is not None]
    return round(percentile(known, 50), 1) if known else None


def cpu_p50(values: list[float]) -> float | None:
    """The median CPU seconds of the runs, to a hundredth (None without runs)."""
    return round(percentile(values, 50), 2) if values else None
