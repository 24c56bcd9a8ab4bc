"""``python -m benchmarks stopped``: a checkpoint's "where I stopped" and "next step" lines,
the extractor's against each model's, scored on labelled turns.

Each labelled turn (``benchmarks/data/stopped_labels.json``: the turns of ``draft_labels.json``,
with the acceptable phrasings of each line) is checkpointed as the Stop hook does at the end of
that turn (:func:`~mama_plugin.services.story.autosave.layers_of`), then its two lines are
made, in the same run, by the extractor alone (the checkpoint's own ``stopped_at`` and first
next step) and by each model profile asked for, through the product's own path
(:func:`mama_plugin.assist.stopped.lines_for`: the model's lines where grounded in the
session's facts, else the extractor's). Per configuration and line: lines proposed, the share
grounded, the share correct (:mod:`.coauthor`'s match against any acceptable phrasing; a next
step where the conversation names none is wrong), recall of the labelled lines, *right* (the
turns whose line is right, an empty line where none is labelled counting as right), the
model's lines that grounding dropped, and latency (model load once, first token, full).

A model *earns* a line when that line is right on more turns with it than with the extractor
alone; each line is earned on its own (``Profile.checkpoint_lines`` names the lines a profile
earned), and where none is earned the extractor's lines stand and no model is asked. The *per
line* row of each model is that combination, from the same run: each line is the model's
where this run earned it, else the extractor's (lines are scored one by one, so its figures
are the earning configuration's for each line).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mama_plugin.assist import stopped
from mama_plugin.assist.draft import grounded
from mama_plugin.assist.models import PROFILES, custom
from mama_plugin.assist.runtime import Assistant
from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.services.story.autosave import layers_of
from mama_plugin.transcript import Digest
from mama_plugin.transcript.turns import turn_digests

from .checkout import DATA, FIXTURES
from .coauthor import cell, load_labels, matches, median, p95, profile_config, share, title, uptime

LABELS = DATA / "stopped_labels.json"
LINES = ("stopped", "next_step")


class Tally:
    """One configuration's counts over the labelled turns, per line."""

    def __init__(self) -> None:
        self.counts = {line: dict.fromkeys(_COUNTS, 0) for line in LINES}
        self.model_lines = self.model_dropped = 0
        self.outcomes: dict[str, int] = {}
        self.load: list[float] = []
        self.first: list[float] = []
        self.full: list[float] = []

    def score(self, label: dict[str, Any], lines: stopped.Lines, facts: str) -> None:
        """Count one turn's two lines against its labels."""
        gen = lines.generation
        answer = gen.value if gen is not None else None
        for line, said in (("stopped", lines.stopped), ("next_step", lines.next_step)):
            wanted = [str(x) for x in label[line]]
            right = bool(said) and any(matches(said, w) for w in wanted)
            c = self.counts[line]
            c["turns"] += 1
            c["labelled"] += bool(wanted)
            c["found"] += right
            c["right"] += right or (not said and not wanted)
            if said:
                rooted = grounded(said, facts)
                c["proposed"] += 1
                c["grounded"] += rooted
                c["correct"] += right
                c["both"] += right and rooted
            c["by_model"] += lines.sources[line] == "model"
            if answer is not None and str(getattr(answer, line)).strip():
                c["asked"] += 1  # the model wrote this line
                c["dropped"] += lines.sources[line] != "model"

    def figures(self) -> dict[str, Any]:
        """The configuration's figures, per line and for both."""
        out: dict[str, Any] = {
            "model_lines": self.model_lines,
            "dropped_share": share(self.model_dropped, self.model_lines),
            "outcomes": self.outcomes,
            "load_s": median(self.load),
            "first_token_s_median": median(self.first),
            "full_s_median": median(self.full),
            "full_s_p95": p95(self.full),
        }
        for line in LINES:
            c = self.counts[line]
            out[line] = {
                "proposed": c["proposed"],
                "by_model": c["by_model"],
                "grounded_share": share(c["grounded"], c["proposed"]),
                "correct_share": share(c["correct"], c["proposed"]),
                "grounded_and_correct_share": share(c["both"], c["proposed"]),
                "recall": share(c["found"], c["labelled"]),
                "right": c["right"],
                "turns": c["turns"],
                "model_lines": c["asked"],
                "model_dropped": c["dropped"],
            }
        out["right"] = sum(self.counts[line]["right"] for line in LINES)
        return out


_COUNTS = (
    "turns", "labelled", "found", "right", "proposed", "grounded", "correct", "both", "by_model",
    "asked", "dropped",
)  # fmt: skip


def cases(labels: Path, limit: int | None) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The labelled turns: (name, the checkpoint's layers after the turn, label)."""
    data = load_labels(labels, "checkpoint lines")
    turns = data.get("turns") or []
    if not turns:
        raise MamaError(f"no labelled turns in {labels}")
    digests: dict[str, list[Digest]] = {}
    out = []
    for label in turns[:limit]:
        name = label["transcript"]
        path = FIXTURES / f"{name}.jsonl"
        if name not in digests:
            digests[name] = turn_digests(path)
        if not 1 <= label["turn"] <= len(digests[name]):
            raise MamaError(f"{labels}: {name} has no turn {label['turn']} (is {path} there?)")
        d = digests[name][label["turn"] - 1]
        layers = layers_of(d, d.last_request, (d.assistant_texts or [""])[-1], "", [])
        out.append((f"{name}#{label['turn']}", layers, label))
    return out


def stopped_run(
    *,
    config: Config,
    profiles: list[str] | None = None,
    threads: int | None = None,
    labels: Path = LABELS,
    limit: int | None = None,
    timeout_s: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Run the benchmark; return its report and its figures (``profiles``, ``threads``,
    ``limit`` as ``python -m benchmarks draft`` reads them; ``timeout_s`` overrides
    ``assist_timeout_s`` for this run)."""
    say = progress or (lambda _line: None)
    chosen = profiles or [config.settings.assist_profile]
    turns = cases(labels, limit)
    before = uptime()
    extractor = Tally()
    for _name, layers, label in turns:
        started = time.perf_counter()
        lines = stopped.lines_for(layers, None)
        extractor.full.append(time.perf_counter() - started)
        extractor.score(label, lines, stopped.facts(layers))
    tallies = {name: Tally() for name in chosen}
    for profile in chosen:
        tally = tallies[profile]
        chosen_config = profile_config(config, profile)
        if timeout_s is not None:
            settings = dataclasses.replace(chosen_config.settings, assist_timeout_s=timeout_s)
            chosen_config.__dict__["settings"] = settings
        assistant = Assistant(chosen_config, threads=threads)
        try:
            tally.load.append(assistant.warm())
        except MamaError as exc:
            raise MamaError(f"bench stopped: profile {profile}: {exc}") from exc
        for done, (name, layers, label) in enumerate(turns, 1):
            say(f"{profile}: turn {done}/{len(turns)} ({name})")
            started = time.perf_counter()
            lines = stopped.lines_for(layers, assistant)
            tally.full.append(time.perf_counter() - started)
            tally.score(label, lines, stopped.facts(layers))
            gen = lines.generation
            if gen is None:
                continue
            tally.outcomes[gen.outcome] = tally.outcomes.get(gen.outcome, 0) + 1
            if gen.first_token_s is not None:
                tally.first.append(gen.first_token_s)
            if gen.value is not None:
                tally.model_lines += 1 + bool(gen.value.next_step.strip())
                tally.model_dropped += len(lines.dropped)
        assistant.close()
    data: dict[str, Any] = {
        "labels": str(labels),
        "turns": len(turns),
        "threads": threads if threads is not None else config.settings.assist_threads,
        "timeout_s": timeout_s if timeout_s is not None else config.settings.assist_timeout_s,
        "uptime": [before, uptime()],
        "configurations": {"extractor": extractor.figures()}
        | {f"extractor + {p}": tallies[p].figures() for p in chosen},
        "profiles": {p: title(p) for p in chosen},
        "earned": {},
    }
    alone = data["configurations"]["extractor"]
    for p in chosen:
        both = data["configurations"][f"extractor + {p}"]
        won = [line for line in LINES if both[line]["right"] > alone[line]["right"]]
        data["earned"][p] = won
        data["configurations"][f"extractor + {p} (per line)"] = per_line(alone, both, won)
    data["trusted"] = {p: sorted(trusted_lines(p)) for p in chosen}
    return render(data), data


def per_line(alone: dict[str, Any], model: dict[str, Any], won: list[str]) -> dict[str, Any]:
    """The figures of each line taken from ``model`` where it won that line, else from the
    extractor ``alone``: the configuration a profile that earned ``won`` runs in the product.
    Latency is the model's while it is asked for any line; the dropped share counts only the
    model lines kept for the lines it won."""
    out: dict[str, Any] = {line: model[line] if line in won else alone[line] for line in LINES}
    out["right"] = sum(out[line]["right"] for line in LINES)
    written = sum(model[line]["model_lines"] for line in won)
    dropped = sum(model[line]["model_dropped"] for line in won)
    source = model if won else alone
    out |= {k: source[k] for k in ("outcomes", "load_s", "first_token_s_median")}
    out |= {k: source[k] for k in ("full_s_median", "full_s_p95")}
    out |= {"model_lines": written, "dropped_share": share(dropped, written), "lines": won}
    return out


def trusted_lines(profile: str) -> frozenset[str]:
    """The lines ``profile`` is trusted with in the product (a GGUF path: every line)."""
    return (
        PROFILES[profile].checkpoint_lines
        if profile in PROFILES
        else custom(profile).checkpoint_lines
    )


def render(data: dict[str, Any]) -> str:
    """The report: one row per configuration and line."""
    lines = [
        f"Checkpoint lines on {data['turns']} labelled turns ({data['labels']}), "
        f"model threads {data['threads']}, assist_timeout_s {data['timeout_s']:g}",
        f"  uptime before: {data['uptime'][0]}",
        f"  uptime after:  {data['uptime'][1]}",
        "",
        "| configuration | line | proposed (by model) | grounded | correct | grounded+correct "
        "| recall | right (of turns) | dropped | load | first token | full (median / p95) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, f in data["configurations"].items():
        model = name != "extractor" and (not name.endswith("(per line)") or bool(f["lines"]))
        if f["outcomes"]:
            name += " (" + ", ".join(f"{k} {v}" for k, v in sorted(f["outcomes"].items())) + ")"
        unit, scale = (" s", 1.0) if model else (" ms", 1000.0)
        full = (
            f"{cell(f['full_s_median'], unit=unit, scale=scale)} / "
            f"{cell(f['full_s_p95'], unit=unit, scale=scale)}"
        )
        for line in LINES:
            x = f[line]
            lines.append(
                f"| {name} | {line} | {x['proposed']} ({x['by_model']}) | "
                f"{cell(x['grounded_share'])} | {cell(x['correct_share'])} | "
                f"{cell(x['grounded_and_correct_share'])} | {cell(x['recall'])} | "
                f"{x['right']} / {x['turns']} | {cell(f['dropped_share']) if model else '–'} | "
                f"{cell(f['load_s'], unit=' s')} | {cell(f['first_token_s_median'], unit=' s')} "
                f"| {full} |"
            )
    lines.append("")
    alone = data["configurations"]["extractor"]
    for profile, won in data["earned"].items():
        model = data["configurations"][f"extractor + {profile}"]
        rights = ", ".join(
            f"{line} {model[line]['right']} vs {alone[line]['right']}" for line in LINES
        )
        verdict = (
            f"earned {' and '.join(won)}"
            if won
            else "earned neither line: the extractor's lines stand and the model is not asked"
        )
        trusted = data["trusted"][profile]
        setting = "as the profile says" if trusted == sorted(won) else "the profile says "
        if trusted != sorted(won):
            setting += " and ".join(trusted) if trusted else "neither"
        lines.append(
            f"  {data['profiles'][profile]}: right {rights} (the extractor's): {verdict} "
            f"({setting})"
        )
    return "\n".join(lines) + "\n"
