"""The ``truth`` benchmark ("Shown by"): three judgements of the product against labelled turns.

The label set (``truth_labels.json``, its ``about`` says who labelled what and how) covers
every turn of the recorded sessions of ``tests/fixtures/transcripts`` (real Claude Code
against the scripted model; scripts in ``extraction_labels.json`` and ``truth_sessions.json``).
Each judgement is scored as the product makes it and as the rules before it made it, in the
same run:

- **carries work**, per turn: ``services.story.autosave.moved_on`` on the digest the Stop hook
  reads at the end of that turn, against the rule before it (any tool call but MAMA's own);
  and per session so far: the rolling checkpoint's ``work`` flag as the Stop hook stored it
  (``WorkLog.work``), against any tool call but MAMA's so far. Precision and recall of "work"
  and of "looks".
- **passed / failed / unknown**, per Bash call: the digest's command (``transcript.verdict``
  through ``transcript.entries``) against its exit status alone (``is_error``). Precision and
  recall per class.
- **done**: each session is cut after every turn ``c``; turns 1..c go through the Stop hook's
  path as one session (its rolling checkpoint holds the next steps), the rest is replayed as a
  new session, and after each of its turns ``services.story.freshness.open_steps`` says which
  of the held steps are still open. A step it leaves out is judged done: precision = right /
  dropped, recall = right / steps done by then (labelled). The baseline feeds the exit-status
  verdicts into the same path (:mod:`.truth_replay`). Every step a holder carries must be
  labelled.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.services.story.autosave import moved_on
from mama_plugin.services.story.freshness import open_steps
from mama_plugin.services.story.worklog import WorkLog
from mama_plugin.storage import MemoryRecord, Store
from mama_plugin.transcript import Digest, read_transcript
from mama_plugin.transcript.verdict import FAILED, PASSED, UNKNOWN

from .checkout import DATA, FIXTURES
from .truth_replay import Replay, bash_results, parse, turn_ends

LABELS = DATA / "truth_labels.json"
ARMS = ("before", "now")
CLASSES = (PASSED, FAILED, UNKNOWN)


@dataclass
class Recorded:
    """One recorded session: its lines, where each turn ends, and its labels."""

    name: str
    lines: list[bytes]
    entries: list[dict[str, Any] | None]
    ends: list[int]  # where each turn ends (the first turn takes the lines before it too)
    labels: dict[str, Any]

    def turn(self, t: int) -> tuple[list[bytes], list[dict[str, Any] | None]]:
        """Turn ``t``'s lines (1-based; the first turn's begin at the file's start)."""
        start = 0 if t == 1 else self.ends[t - 2]
        return self.lines[start : self.ends[t - 1]], self.entries[start : self.ends[t - 1]]

    def step(self, text: str) -> dict[str, Any]:
        """The label of a step the product holds (compared without case or a final stop)."""
        wanted = _norm(text)
        for label in self.labels["steps"]:
            if _norm(label["step"]) == wanted:
                return dict(label)
        raise MamaError(f"{LABELS.name}: {self.name} has no label for the step {text!r}")


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def load(
    labels: Path = LABELS, folder: Path = FIXTURES, names: Sequence[str] | None = None
) -> list[Recorded]:
    """The labelled sessions (``names``: only those), each checked against its recording."""
    try:
        spec = json.loads(labels.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MamaError(f"cannot read the label set {labels}: {exc}") from exc
    unknown = sorted(set(names or ()) - spec["sessions"].keys())
    if unknown:
        raise MamaError(
            f"no labelled session {', '.join(unknown)}; known: {list(spec['sessions'])}"
        )
    out = []
    for name, session in spec["sessions"].items():
        if names and name not in names:
            continue
        lines = (folder / f"{name}.jsonl").read_bytes().rstrip(b"\n").split(b"\n")
        entries = parse(lines)
        _, ends = turn_ends(entries)
        if len(ends) != len(session["turns"]):
            raise MamaError(
                f"{name}.jsonl has {len(ends)} turns, {labels.name} labels "
                f"{len(session['turns'])}: re-record it or relabel it"
            )
        out.append(Recorded(name, lines, entries, ends, session))
    return out


def verdict_rows(sessions: list[Recorded]) -> list[dict[str, Any]]:
    """Every Bash call: its label, the product's verdict and the exit status's."""
    rows = []
    for s in sessions:
        labelled = [
            (t, b) for t, turn in enumerate(s.labels["turns"], 1) for b in turn.get("bash", [])
        ]
        results = bash_results(s.entries)
        digest = read_transcript(FIXTURES / f"{s.name}.jsonl")
        found = [(r.turn, r.command) for r in results]
        if found != [(t, b["command"]) for t, b in labelled] or len(digest.commands) != len(found):
            raise MamaError(f"{s.name}: the labelled Bash calls are not the recording's")
        for (t, label), result, command in zip(labelled, results, digest.commands, strict=True):
            now = FAILED if command.failed else UNKNOWN if command.unknown else PASSED
            rows.append(
                {
                    "ref": f"{s.name}#{t}",
                    "command": result.command,
                    "truth": label["verdict"],
                    "now": now,
                    "before": FAILED if result.is_error else PASSED,
                }
            )
    return rows


def _others(digest: Digest, start: int = 0) -> bool:
    """Whether the session called a tool other than MAMA's since tool call ``start``."""
    return any(not n.startswith("mcp__plugin_mama_") for n in digest.tool_names[start:])


def work_rows(store: Store, sessions: list[Recorded], tmp: Path) -> list[dict[str, Any]]:
    """Every turn replayed through the Stop hook: its label, the product's judgement (the turn:
    ``moved_on``; the session so far: the stored checkpoint's ``work``) and the old rule's."""
    rows = []
    for s in sessions:
        replay = Replay(
            store, f"/truth/work/{s.name}", f"{s.name}/work", tmp / "work.jsonl", baseline=False
        )
        so_far = False
        for t, label in enumerate(s.labels["turns"], 1):
            digest, saved = replay.turn(*s.turn(t))
            last = digest.assistant_texts[-1] if digest.assistant_texts else ""
            log = WorkLog.of(saved) if saved is not None else None
            so_far = so_far or bool(label["work"])
            rows.append(
                {
                    "ref": f"{s.name}#{t}",
                    "note": label.get("note", ""),
                    "turn": {
                        "truth": bool(label["work"]),
                        "now": moved_on(digest, last),
                        "before": _others(digest, digest.turn_tools),
                    },
                    "session": {
                        "truth": so_far,
                        "now": bool(log and log.work),
                        "before": _others(digest),
                    },
                }
            )
    return rows


def done_pairs(
    store: Store,
    sessions: list[Recorded],
    tmp: Path,
    *,
    baseline: bool,
    facts: Callable[[MemoryRecord], str] | None = None,
) -> list[dict[str, Any]]:
    """(cut, turn, step) pairs: the step held after turn ``cut``, judged after ``turn``;
    with ``facts``, each pair also holds what it makes of the later session's checkpoint."""
    arm = "before" if baseline else "now"
    pairs = []
    for s in sessions:
        head, _ = turn_ends(s.entries)
        for cut in range(1, len(s.ends)):
            project = f"/truth/{arm}/{s.name}/{cut}"
            first = Replay(store, project, f"{project}/a", tmp / "a.jsonl", baseline=baseline)
            held = None
            for t in range(1, cut + 1):
                held = first.turn(*s.turn(t))[1]
            if held is None:
                continue
            steps = {str(x.get("step", "")) for x in held.continuity.get("next_steps") or []}
            labels = {text: s.step(text) for text in steps if text.strip()}
            rest = Replay(store, project, f"{project}/b", tmp / "b.jsonl", baseline=baseline)
            rest.turn(s.lines[:head], s.entries[:head])  # what precedes the first request
            for t in range(cut + 1, len(s.ends) + 1):
                later = rest.turn(*s.turn(t))[1]
                shown = {o.step for o in open_steps(store, [held])}
                told = facts(later) if facts and later is not None else ""
                for text, label in labels.items():
                    done = label["done"] is not None and label["done"] <= t
                    pairs.append(
                        {
                            "session": s.name,
                            "cut": cut,
                            "turn": t,
                            "step": text,
                            "dropped": text not in shown,
                            "done": done,
                        }
                        | ({"facts": told} if facts else {})
                    )
    return pairs


def _scores(said: list[Any], truth: list[Any], classes: Sequence[Any]) -> dict[str, Any]:
    """Precision and recall of each class (None when nothing was said or labelled so)."""
    out: dict[str, Any] = {"n": len(truth)}
    for value in classes:
        hits = sum(s == t == value for s, t in zip(said, truth, strict=True))
        shown, wanted = said.count(value), truth.count(value)
        out[str(value)] = {
            "precision": hits / shown if shown else None,
            "recall": hits / wanted if wanted else None,
            "said": shown,
            "labelled": wanted,
        }
    return out


def _done_scores(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    right = sum(p["dropped"] and p["done"] for p in pairs)
    wrong = [p for p in pairs if p["dropped"] and not p["done"]]
    stale = [p for p in pairs if not p["dropped"] and p["done"]]
    return {
        "n": len(pairs),
        "right": right,
        "wrongly_dropped": len(wrong),
        "stale": len(stale),
        "precision": right / (right + len(wrong)) if right + len(wrong) else None,
        "recall": right / (right + len(stale)) if right + len(stale) else None,
        "steps": len({(p["session"], p["step"]) for p in pairs}),
    }


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _row(label: str, cells: Sequence[object]) -> str:
    return f"  {label:44}" + "".join(f"{c!s:>10}" for c in cells)


def _pr(scores: dict[str, Any], classes: Sequence[Any]) -> list[str]:
    """Precision and recall of each class, as cells."""
    return [_f(scores[str(c)][k]) for c in classes for k in ("precision", "recall")]


# Each level of "carries work": the rule before, the product's.
WORK_RULES = {
    "turn": ("a tool but MAMA's", "autosave.moved_on"),
    "session": ("a tool but MAMA's", "WorkLog.work"),
}


def truth_run(
    names: Sequence[str] | None = None,
    *,
    verbose: bool = False,
    labels: Path = LABELS,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Score the three judgements on the labelled sessions; the report and its figures."""
    sessions = load(labels, FIXTURES, names)
    verdicts = verdict_rows(sessions)
    with tempfile.TemporaryDirectory(prefix="mama-bench-truth-") as folder:
        tmp = Path(folder)
        with Store.open(tmp / "mama.db", config=Config(tmp)) as store:
            work = work_rows(store, sessions, tmp)
            if progress:
                progress("work judged; replaying every cut for done")
            pairs = {
                arm: done_pairs(store, sessions, tmp, baseline=arm == "before") for arm in ARMS
            }
    data: dict[str, Any] = {"sessions": [s.name for s in sessions], "labels": str(labels)}
    lines = [
        f"Shown by: {len(work)} labelled turns, {len(verdicts)} Bash calls of {len(sessions)} "
        f"recorded sessions ({labels.name});",
        "before = the rules before issue 35, now = the product's rules, in the same run",
        "",
        _row("carries work", ["n", "work P", "work R", "looks P", "looks R"]),
    ]
    for key, (old, new) in WORK_RULES.items():
        for arm, rule in zip(ARMS, (old, new), strict=True):
            said, truth = [r[key][arm] for r in work], [r[key]["truth"] for r in work]
            scores = data[f"work_{key}_{arm}"] = _scores(said, truth, (True, False))
            cells = [len(work), *_pr(scores, (True, False))]
            lines.append(_row(f"{key}, {arm} ({rule})", cells))
    lines += [
        "",
        _row(
            "verdict per Bash call",
            ["n", "passed P", "passed R", "failed P", "failed R", "unknown P", "unknown R"],
        ),
    ]
    for arm, rule in zip(ARMS, ("exit status", "transcript.verdict"), strict=True):
        scores = _scores([r[arm] for r in verdicts], [r["truth"] for r in verdicts], CLASSES)
        data[f"verdict_{arm}"] = scores
        lines.append(_row(f"{arm} ({rule})", [len(verdicts), *_pr(scores, CLASSES)]))
    lines += [
        "",
        _row(
            "done (a held step left out of open_steps)",
            ["pairs", "steps", "done P", "done R", "wrong", "stale"],
        ),
    ]
    for arm, rule in zip(ARMS, ("exit-status verdicts fed in", "the product"), strict=True):
        d = data[f"done_{arm}"] = _done_scores(pairs[arm])
        cells = [d["n"], d["steps"], _f(d["precision"]), _f(d["recall"])]
        lines.append(_row(f"{arm} ({rule})", [*cells, d["wrongly_dropped"], d["stale"]]))
    lines += [
        "  (pairs: each session cut after every turn c, the step held then judged after each "
        "later turn;",
        "   wrong: dropped while open, work hidden; stale: done and still shown)",
    ]
    found = data["disagreements"] = _disagreements(work, verdicts, pairs)
    if verbose:
        lines += ["", *found]
    return "\n".join(lines) + "\n", data


def _disagreements(
    work: list[dict[str, Any]],
    verdicts: list[dict[str, Any]],
    pairs: dict[str, list[dict[str, Any]]],
) -> list[str]:
    """Every judgement the labels disagree with, one line each (``--verbose``)."""
    out = []
    names = {True: "work", False: "looks"}
    for key in WORK_RULES:
        level = "turn" if key == "turn" else "session so far"
        out.append(f"carries work, per {level}: label / before / now")
        out += [
            f"  {r['ref']}: {names[r[key]['truth']]} / {names[r[key]['before']]} / "
            f"{names[r[key]['now']]}" + (f" — {r['note']}" if key == "turn" else "")
            for r in work
            if r[key]["now"] != r[key]["truth"] or r[key]["before"] != r[key]["truth"]
        ]
    out.append("verdict: label / before / now")
    out += [
        f"  {r['ref']} `{r['command']}`: {r['truth']} / {r['before']} / {r['now']}"
        for r in verdicts
        if r["now"] != r["truth"] or r["before"] != r["truth"]
    ]
    for arm in ARMS:
        out.append(f"done, {arm}: the step, and the cuts → later turns where it was judged wrong")
        for kind, wanted in (("wrongly dropped", (True, False)), ("stale", (False, True))):
            seen: dict[tuple[str, str], dict[int, list[int]]] = {}
            for p in pairs[arm]:
                if (p["dropped"], p["done"]) == wanted:
                    cuts = seen.setdefault((p["session"], p["step"]), {})
                    cuts.setdefault(p["cut"], []).append(p["turn"])
            out += [
                f"  {kind}: {session}: {step!r}: "
                + "; ".join(f"{c} → {','.join(map(str, t))}" for c, t in cuts.items())
                for (session, step), cuts in seen.items()
            ]
    return out
