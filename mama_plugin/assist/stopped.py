"""A rolling checkpoint's two lines — "where I stopped" and "next step" — by the model, grounded.

The Stop hook's checkpoint (:mod:`mama_plugin.services.story.autosave`) already holds both
lines, made without a model: ``continuity.stopped_at`` (the session's last command and what
it showed, or the file it last changed) and the first of ``continuity.next_steps``. Those are
the *extractor's lines*: the default, and the fallback for everything here.

:func:`polish` asks the model for the two lines from the checkpoint's facts (what the session
asked, did and said last, as :func:`facts` writes them), constrained to
:class:`~mama_plugin.schema.assist.StoppedLines`, and *grounds* each line as drafts are
grounded (:func:`.draft.grounded`): a line whose words or numbers the facts do not hold is
dropped and the extractor's line stays. A kept line replaces the extractor's in the
checkpoint, which records whose each line is (``metadata.lines``). It runs after a session's
turn, in the server's background, as one model job (:mod:`.jobs`), never on a hook's path.
Each line is earned on its own on the labelled evaluation (``python -m benchmarks stopped``):
only the lines the profile in force earned (:func:`.models.earned_lines`) are taken from the
model — it is given the prompt it was measured with and its other line is not used — and a
profile that earned neither is never asked (:func:`.models.lines_writer`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConflictError
from ..schema.assist import StoppedLines
from ..services.story.worklog import WorkLog
from ..storage import MemoryRecord, Store
from ..text import unique
from .draft import grounded
from .models import LINES
from .runtime import Generation, Model, Prompt

log = logging.getLogger("mama.assist")
MAX_TOKENS = 120
MAX_FACT = 300  # characters of one fact given to the model
INSTRUCTIONS = (
    "Each record turns the facts of a coding session that just paused into two lines for "
    "whoever resumes it. stopped: where the work stopped, as it was left — the last thing "
    "done and what it showed, naming the file, command or figure. next_step: the one action "
    "to take first when work resumes, as the facts state it; an empty string when they name "
    "none. Use only the facts' own words; never invent a file, a command or a number."
)
EXAMPLE = (
    "Asked: make the sync stop freezing the app\n"
    "Claude's last message: WAL is on and the sync test passes: 0.9 s instead of 4.2 s. "
    "Next: update the backup script to copy the -wal file.\n"
    "Last action: I had just run `pytest tests/test_sync.py` (run the sync test): it passed "
    "(3 passed in 0.91s)\n"
    "Changed: app/db.py (edited)\n"
    "Unresolved: backups must copy the -wal files too",
    '{"stopped": "WAL is on in app/db.py and the sync test passes (3 passed, 0.9 s instead of '
    '4.2 s)", "next_step": "Update the backup script to copy the -wal file"}',
)


@dataclass
class Lines:
    """The two lines, whose each is (``sources``: model | extractor | none), and the model's
    lines grounding dropped."""

    stopped: str
    next_step: str
    sources: dict[str, str]
    note: str = ""  # what the model did, in words
    dropped: list[str] = field(default_factory=list)
    generation: Generation[StoppedLines] | None = None

    @property
    def by_model(self) -> bool:
        """Whether the model wrote at least one of the lines."""
        return "model" in self.sources.values()


def extracted(layers: Mapping[str, Any]) -> tuple[str, str]:
    """The extractor's lines of a checkpoint's ``layers`` (``content``, ``continuity``, …, as
    :func:`~mama_plugin.services.story.autosave.layers_of` makes them or a record holds them):
    its ``stopped_at`` and the step of its first next step ("" for none)."""
    c = layers.get("continuity") or {}
    steps = [s for s in c.get("next_steps") or [] if isinstance(s, dict) and s.get("step")]
    return str(c.get("stopped_at") or ""), str(steps[0]["step"]) if steps else ""


def layers_of(m: MemoryRecord) -> dict[str, Any]:
    """A checkpoint record's layers, as :func:`extracted` and :func:`facts` read them."""
    return {
        "content": m.content,
        "continuity": m.continuity or {},
        "tension": m.tension or {},
        "evidence": m.evidence or [],
        "metadata": m.metadata or {},
    }


def facts(layers: Mapping[str, Any]) -> str:
    """The session's facts as the model reads them and its lines are grounded in: the
    requests, Claude's last message, the last action, files changed, commands run, open tasks,
    what is unresolved and the next steps the checkpoint noted ("" when it holds nothing)."""
    log_ = WorkLog.read(layers.get("metadata") or {})
    c = layers.get("continuity") or {}
    t = layers.get("tension") or {}

    def clip(text: object) -> str:
        flat = " ".join(str(text or "").split())
        return flat if len(flat) <= MAX_FACT else flat[: MAX_FACT - 1] + "…"

    out: list[str] = []
    if line := log_.requests_line():
        out.append(f"Asked: {clip(line)}")
    if log_.last_message:
        out.append(f"Claude's last message: {' '.join(log_.last_message.split())}")
    if c.get("stopped_at"):
        out.append(f"Last action: {clip(c['stopped_at'])}")
    if changed := log_.changed_line():
        out.append(clip(changed.replace("Changed ", "Changed: ", 1)))
    commands = [
        f"`{e.get('source', '')}`" + (f" {e['detail']}" if e.get("detail") else "")
        for e in layers.get("evidence") or []
        if isinstance(e, dict) and e.get("kind") == "command"
    ]
    if commands:
        out.append(f"Commands run: {clip('; '.join(commands))}")
    tasks = [
        f"{x.get('task')} ({x.get('status')})"
        for x in c.get("tasks") or []
        if isinstance(x, dict) and x.get("status") != "done"
    ]
    if tasks:
        out.append(f"Open tasks: {clip('; '.join(tasks))}")
    if concerns := [str(x) for x in t.get("concerns") or []]:
        out.append(f"Unresolved: {clip('; '.join(concerns))}")
    steps = [str(s.get("step")) for s in c.get("next_steps") or [] if isinstance(s, dict)]
    if steps:
        out.append(f"Next steps noted: {clip('; '.join(steps))}")
    return "\n".join(out)


def prompt_of(text: str) -> Prompt:
    """The model's prompt for a session's :func:`facts`."""
    return Prompt(INSTRUCTIONS, [EXAMPLE], "", text)


def ask(model: Model, text: str, timeout_s: float | None = None) -> Generation[StoppedLines]:
    """The model's two lines for ``text`` (:func:`facts`); never raises for model trouble."""
    return model.generate(prompt_of(text), StoppedLines, max_tokens=MAX_TOKENS, timeout_s=timeout_s)


def compose(
    extractor: tuple[str, str],
    generation: Generation[StoppedLines] | None,
    text: str,
    note: str,
    lines: frozenset[str] = LINES,
) -> Lines:
    """The lines: the model's where grounded in ``text`` (the facts) and among ``lines`` (the
    ones its profile earned), else the extractor's; a model line outside ``lines`` is not used
    and not counted as dropped."""
    proposed = generation.value if generation is not None else None
    own = dict(zip(("stopped", "next_step"), extractor, strict=True))
    said = dict(own)
    sources = {line: "extractor" if own[line] else "none" for line in own}
    dropped: list[str] = []
    if proposed is not None:
        for line, answer in (("stopped", proposed.stopped), ("next_step", proposed.next_step)):
            answer = answer.strip()
            if line not in lines or not answer:
                continue
            if grounded(answer, text):
                said[line], sources[line] = answer, "model"
            else:
                dropped.append(answer)
    return Lines(said["stopped"], said["next_step"], sources, note, dropped, generation)


def lines_for(
    layers: Mapping[str, Any],
    model: Model | None,
    *,
    timeout_s: float | None = None,
    lines: frozenset[str] = LINES,
) -> Lines:
    """The two lines of a checkpoint's ``layers``: the model's among ``lines`` where grounded
    (``model`` None or no ``lines``: the extractor's alone, no model asked). Never raises for
    model trouble."""
    own = extracted(layers)
    text = facts(layers)
    if model is None or not lines or not text:
        why = "no model asked" if model is None or not lines else "no facts to read"
        return compose(own, None, text, f"not used: {why}")
    generation = ask(model, text, timeout_s)
    name = model.name or "the local model"
    if generation.outcome == "ok":
        kept = " and ".join(line for line in ("stopped", "next_step") if line in lines)
        note = f"written by {name} in {generation.total_s:.1f} s ({kept} line)"
    else:
        note = f"not used ({generation.outcome}: {generation.detail})"
    return compose(own, generation, text, note, lines)


def rolling_of(store: Store, session_id: str) -> MemoryRecord | None:
    """The session's rolling checkpoint (the newest), or None."""
    rolling = [m for m in store.memories.of_session(session_id, type="checkpoint") if m.rolling]
    return rolling[-1] if rolling else None


def polish(
    store: Store,
    session_id: str,
    model: Model | None,
    *,
    timeout_s: float | None = None,
    lines: frozenset[str] = LINES,
) -> Lines | None:
    """Rewrite the session's rolling checkpoint's ``lines`` (the ones the profile in force
    earned) with the model's grounded ones; the other line stays the extractor's.

    None when the session has no rolling checkpoint, or when the model was asked for it
    already (``metadata.lines``, written whether or not grounding kept a line: a turn that
    changed the checkpoint since wrote its metadata afresh).
    With ``model`` None or no ``lines`` (the profile in force earned neither), nothing is
    asked and nothing written: the extractor's lines stand.
    A checkpoint that a newer turn changed while the model wrote is left as that turn wrote
    it (its own lines are newer; the row version settles it). Never raises for model trouble.
    """
    m = rolling_of(store, session_id)
    if m is None or (m.metadata or {}).get("lines"):
        return None
    told = lines_for(layers_of(m), model, timeout_s=timeout_s, lines=lines)
    if told.generation is None:  # no model asked: nothing to record
        return told
    own_stopped, own_next = extracted(layers_of(m))
    c = dict(m.continuity or {})
    if told.sources["stopped"] == "model":
        c["stopped_at"] = told.stopped
    if told.sources["next_step"] == "model":
        step = {"step": told.next_step, "priority": "HIGH", "context": "from the session's facts"}
        c["next_steps"] = unique(
            [step, *(c.get("next_steps") or [])], key=lambda n: str(n.get("step", "")).lower()
        )
    # Whose each line is, and the extractor's the model's replaced (the next turn's upsert
    # writes the metadata afresh, so this goes with the lines it describes). Recorded when
    # grounding kept none too: the model is not asked again for the same checkpoint.
    metadata = dict(m.metadata or {}) | {
        "lines": {
            "by": model.name if model is not None else "",
            "asked": sorted(lines),
            "sources": told.sources,
            "dropped": len(told.dropped),
            "note": told.note,
            "extractor": {"stopped": own_stopped, "next_step": own_next},
        }
    }
    try:
        # Its change time stays: the lines are retold, the work did not move on.
        store.memories.update(
            m.id,
            expected_version=m.version,
            updated_at=m.updated_at,
            continuity=c,
            metadata=metadata,
        )
    except ConflictError:
        log.info(
            "checkpoint lines for %s: a newer turn wrote %s first; left as it is", session_id, m.id
        )
        told.note += "; not written (a newer turn came first)"
    return told
