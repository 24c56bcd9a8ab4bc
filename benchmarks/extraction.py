"""The ``extraction`` benchmark: the rolling checkpoint's "Unresolved" and "Next step", scored.

The label set (``extraction_labels.json``) holds real Claude Code turns: the transcript
fixtures of ``tests/fixtures/transcripts`` (recorded against the scripted fake model by
scripts/record_transcripts.py), each turn labelled with what is unresolved when it ends (each
item a substring an extracted concern must contain) and the next step a reader should be given
(a substring; null when nothing explicit is due). For every turn the checkpoint is built from
the transcript as it stood at the end of that turn, with the session's saved decisions, by
today's rules (:func:`services.story.autosave.layers_of`) and by the rules before them (kept below
as the baseline), and scored:

- tension precision: extracted concerns that contain a labelled item / extracted concerns;
  recall: labelled items found in some concern / labelled items;
- next step (the first one, which the cliffhanger shows): precision = right / turns where one
  was shown, recall = right / turns labelled with one. A step still carrying its cue ("Next:
  …", "Remaining: …", shown as "Next step: Next: …") is not right.

It also scores whether a turn moved the work on (``services.story.autosave.moved_on``: a turn that
did not keeps the session's rolling checkpoint as it was) against the turns labelled
``moved_on``, beside the rule before it (every turn rewrote the checkpoint): precision and
recall of "quiet" (kept) and of "moved on" (rewritten).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from mama_plugin.errors import MamaError
from mama_plugin.services.render import clip
from mama_plugin.services.story.autosave import layers_of, moved_on
from mama_plugin.text import NEXT_STEP, REMAINS, split
from mama_plugin.transcript import Digest
from mama_plugin.transcript.turns import turn_digests

from .checkout import DATA, FIXTURES

LABELS = DATA / "extraction_labels.json"

# The rules before this change, kept verbatim as the baseline.
_OLD_NEXT = re.compile(
    r"^(next( step)?s?\b|then\b|todo\b|still (need|to)\b|remaining\b|follow[- ]up\b)", re.I
)
_OLD_TENSION = re.compile(
    r"\b(but|however|risk|concern|not yet|unresolved|trade-?off|fails?|failing|blocked|"
    r"downside|caveat|spof|single point of failure)\b",
    re.I,
)


def baseline(digest: Digest, last: str) -> tuple[list[str], list[str]]:
    """Concerns and next steps as the checkpoint made them before (no decisions)."""
    sentences = split(last)
    steps = [t.subject for t in digest.open_tasks()]
    steps += [clip(s, 400) for s in sentences if _OLD_NEXT.match(s)]
    concerns = [clip(c.failure(), 400) for c in digest.commands[-8:] if c.failed]
    concerns += [
        clip(s, 400) for s in sentences if _OLD_TENSION.search(s) and not _OLD_NEXT.match(s)
    ]
    return concerns[:8], steps[:8]


def labelled_turns(labels: Path = LABELS, folder: Path = FIXTURES) -> list[dict[str, Any]]:
    """Every labelled turn with its digest, closing text and the session's current decisions."""
    try:
        spec = json.loads(labels.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MamaError(f"cannot read the label set {labels}: {exc}") from exc
    wanted: list[tuple[str, int, dict[str, Any], list[dict[str, Any]], bool]] = []
    for name, session in spec["sessions"].items():
        decisions = session.get("decisions") or []
        held_out = bool(session.get("held_out"))
        for number, turn in enumerate(session["turns"], 1):
            current = [d for d in decisions if d["from_turn"] <= number]
            expect = {**turn["expect"], "say": turn["say"]}
            wanted.append((f"{name}.jsonl", number, expect, current, held_out))
    wanted += [(e["transcript"], e["turn"], e["expect"], [], False) for e in spec["existing"]]
    turns, cache = [], {}
    for transcript, number, expect, decisions, held_out in wanted:
        if transcript not in cache:
            cache[transcript] = turn_digests(folder / transcript)
        digests = cache[transcript]
        if len(digests) < number:
            raise MamaError(
                f"{folder / transcript} has {len(digests)} turns, the label set wants turn "
                f"{number}: record it with scripts/record_transcripts.py"
            )
        digest = digests[number - 1]
        last = digest.assistant_texts[-1] if digest.assistant_texts else ""
        if expect.get("say") and expect["say"] != last:
            raise MamaError(f"{transcript} turn {number} does not end as labelled: re-record it")
        turns.append(
            {"ref": f"{transcript}#{number}", "digest": digest, "last": last, "expect": expect,
             "decisions": [SimpleNamespace(**d) for d in decisions], "held_out": held_out}
        )  # fmt: skip
    return turns


def _score(rows: list[tuple[list[str], str, dict[str, Any]]]) -> dict[str, Any]:
    """Precision and recall of concerns and first next steps against the labels."""
    extracted = hit_items = labelled = found = shown = right = wanted = cued = 0
    misses: list[str] = []
    for concerns, step, expect in rows:
        keys = [k.lower().split("|") for k in expect["tension"]]  # "a|b": either
        low = [c.lower() for c in concerns]
        extracted += len(low)
        hit_items += sum(any(a in c for k in keys for a in k) for c in low)
        labelled += len(keys)
        found += sum(any(a in c for c in low for a in k) for k in keys)
        has_cue = bool(step and (NEXT_STEP.match(step) or REMAINS.match(step)))
        cued += has_cue
        shown += bool(step)
        wanted += bool(expect.get("next"))
        ok = bool(step and expect.get("next") and expect["next"].lower() in step.lower())
        right += ok and not has_cue
        if bool(expect.get("next")) != ok or has_cue:
            misses.append(step)
    return {
        "tension_precision": hit_items / extracted if extracted else 1.0,
        "tension_recall": found / labelled if labelled else 1.0,
        "tension_extracted": extracted,
        "tension_labelled": labelled,
        "next_precision": right / shown if shown else 1.0,
        "next_recall": right / wanted if wanted else 1.0,
        "next_shown": shown,
        "next_labelled": wanted,
        "next_with_cue": cued,
    }


def extraction_run(labels: Path = LABELS, folder: Path = FIXTURES) -> tuple[str, dict[str, Any]]:
    """Score today's rules and the baseline on the label set; the report and its figures.

    Every figure is given for all turns, then for the held-out session alone.
    """
    turns = labelled_turns(labels, folder)
    rows: dict[str, list[tuple[list[str], str, dict[str, Any]]]] = {}
    for t in turns:
        digest, last = t["digest"], t["last"]
        layers = layers_of(digest, digest.last_request, last, digest.cwd, t["decisions"])
        steps = layers["continuity"]["next_steps"]
        new = (layers["tension"]["concerns"], steps[0]["step"] if steps else "", t["expect"])
        old_concerns, old_steps = baseline(digest, last)
        old = (old_concerns, old_steps[0] if old_steps else "", t["expect"])
        for group in ("all", "held out") if t["held_out"] else ("all",):
            rows.setdefault(f"before, {group}", []).append(old)
            rows.setdefault(f"now, {group}", []).append(new)
    held = sum(t["held_out"] for t in turns)
    data: dict[str, Any] = {"turns": len(turns), "held_out": held, "labels": str(labels)}
    lines = [
        f"Tension and next step of the rolling checkpoint: {len(turns)} labelled turns "
        f"({held} held out), {labels.name}",
        f"  {'':19} {'tension P':>9} {'tension R':>9} {'next P':>7} {'next R':>7} {'cue left':>8}",
    ]
    for arm, found in rows.items():
        s = data[arm] = _score(found)
        lines.append(
            f"  {arm:19} {s['tension_precision']:9.2f} {s['tension_recall']:9.2f} "
            f"{s['next_precision']:7.2f} {s['next_recall']:7.2f} {s['next_with_cue']:8d}"
        )
    judged = [(moved_on(t["digest"], t["last"]), bool(t["expect"]["moved_on"]))
              for t in turns if "moved_on" in t["expect"]]  # fmt: skip
    lines.append(f"Quiet turns keep the session's checkpoint: {len(judged)} labelled turns")
    lines.append(f"  {'':19} {'quiet P':>9} {'quiet R':>9} {'moved P':>7} {'moved R':>7}")
    for arm, said in (("before (all moved)", [True] * len(judged)),
                      ("now", [j[0] for j in judged])):  # fmt: skip
        s = data[f"moved_on, {arm}"] = _agreement(said, [j[1] for j in judged])
        lines.append(
            f"  {arm:19} {s['quiet_precision']:9.2f} {s['quiet_recall']:9.2f} "
            f"{s['moved_precision']:7.2f} {s['moved_recall']:7.2f}"
        )
    return "\n".join(lines) + "\n", data


def _agreement(said: list[bool], truth: list[bool]) -> dict[str, float]:
    """Precision and recall of each answer ("quiet" is False, "moved" is True)."""
    out: dict[str, float] = {}
    for name, value in (("quiet", False), ("moved", True)):
        hits = sum(s == t == value for s, t in zip(said, truth, strict=True))
        shown, wanted = said.count(value), truth.count(value)
        out[f"{name}_precision"] = hits / shown if shown else 1.0
        out[f"{name}_recall"] = hits / wanted if wanted else 1.0
    return out
