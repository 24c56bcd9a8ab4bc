"""The session-start cliffhanger: where I stopped, as it was left, and what comes next.

Built from the store alone (no model): the checkpoint to resume from (the newest that carries
work, :mod:`.cliffhanger`) told as a cliffhanger, the decisions that work depends on — each
with the failed or superseded decision it replaced — decisions still waiting for an outcome,
links the local model or a rule proposed that still wait for a verdict, and the user's own
memories every project inherits (the global scope). Rendered by
``templates/session_start.md.j2`` (its body, ``story.md.j2``, is load_checkpoint's too)
within a token budget, inside the memory fence (``fence.fenced``), and nothing at all for a
project with no memory.

Rendering needs Jinja (~40 ms to import), which a cold hook process should not pay: every
process that already has Jinja loaded (the MCP server after each turn's checkpoint and at its
exit, the CLI) renders the cliffhanger ahead and caches it in the store's ``meta`` table, keyed
by a fingerprint of the project's memories, the budget and the templates (:mod:`.brief_cache`,
which the hook reads it with). The hook serves the cached text when the fingerprint matches and
renders only when it does not. The text holds dates, never "3 weeks ago": it is byte-identical
between sessions while nothing changed, so the client's prompt cache holds
(:func:`.brief_cache.finish` still fills the markers a user's own template may hold).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from ...config import Config
from ...fence import fenced
from ...project import GLOBAL
from ...storage import Store, now_ms
from ...text import estimate_tokens, strip_cue
from ..evolution import current_of, predecessors
from ..saving.scopes import told_everywhere
from . import brief_cache, checked, cliffhanger
from .brief_cache import HEADER, TEMPLATE, budget, entry_key, variant_of
from .done import doubts
from .fitting import SPARED, fit
from .freshness import building_on, lifted, open_steps, unsettled
from .records import DecisionView, Proposed, Story
from .resume import ResumePoint, resume_point
from .trust import mark_decisions
from .worklog import WorkLog

DAY_MS = 86_400_000
POINTER = "/mama-resume tells the whole checkpoint and its decisions; search_by_context asks more."


def gather(
    store: Store, project: str, *, followup_days: int, now: int, git: bool = False
) -> Story | None:
    """The cliffhanger's facts for ``project``, or None when it has no memory at all; the
    memories it tells checked against the files they cite (``git``: ask git how each change
    came, :func:`.checked.flag`)."""
    point = resume_point(store, project)
    checkpoint = point.checkpoint
    told_from = resumed(store, point, latest=project)
    decisions = told_from.decisions
    waiting, waiting_total = store.memories.awaiting_outcome(
        project, before=now - followup_days * DAY_MS, limit=3
    )
    proposed, proposed_total = pending_links(store, project, limit=3)
    everywhere = told_everywhere(store) if project != GLOBAL else []
    if checkpoint is None and not decisions and not waiting and not proposed and not everywhere:
        return None
    facts = replace(
        told_from,
        waiting=waiting,
        waiting_total=waiting_total,
        followup_days=followup_days,
        proposed=proposed,
        proposed_total=proposed_total,
        topics=store.memories.decision_topics(project),
        everywhere=everywhere,
    )
    return checked.flag(store, facts, git=git)


def resumed(store: Store, point: ResumePoint, *, latest: str = "") -> Story:
    """The story told from ``point``, as the session start and ``load_checkpoint`` tell it:
    the decisions its checkpoints implement or their sessions saved (and those later sessions
    without work saved; ``latest``: else the project's latest three), and the next steps
    earlier sessions left open."""
    ids: list[str] = []
    for cp in (point.checkpoint, point.then):
        if cp is not None:
            links = store.links.of(cp.id, direction="out", categories=("implementation",))
            ids += [ln.to_id for ln in links]
    for cp in (point.checkpoint, point.then, *point.later):
        log = WorkLog.of(cp) if cp is not None else None
        ids += list(log.decisions) if log is not None else []
    if not ids and latest:
        ids = [m.id for m in store.memories.latest(project=latest, type="decision", limit=3)]
    # The steps later light sessions said (the newest first), then earlier sessions' steps.
    holders = [*point.later[::-1], *point.earlier]
    carried = open_steps(store, holders) if holders else []
    return cliffhanger.story(point, current_decisions(store, ids), carried)


def current_decisions(store: Store, ids: list[str]) -> list[DecisionView]:
    """The decisions now current for ``ids`` (once each), each with what it replaced and what
    later work left open of it (:func:`_still_open`): the session start and
    ``load_checkpoint`` tell them alike."""
    decisions: list[DecisionView] = []
    for memory_id in dict.fromkeys(ids):
        found = store.memories.get(memory_id)
        if found is None or found.type != "decision":
            continue
        head = current_of(store, found.id)
        if head.id not in {d.m.id for d in decisions}:
            decisions.append(DecisionView(head, predecessors(store, head)))
    _still_open(store, decisions)
    mark_decisions(store, decisions)
    return decisions


def _still_open(store: Store, decisions: list[DecisionView]) -> None:
    """Give each decision what later work left open of it, as search answers tell it: its HIGH
    next steps (``high``: the parts no later memory shows done) and its concerns and risks
    (``doubts``: those no later decision building on it settles)."""
    held = [d.m for d in decisions]
    built = building_on(store, held)
    steps = open_steps(store, held)
    left = lifted(
        store, [(d.m, unsettled(doubts(d.m.tension), built.get(d.m.id, []))) for d in decisions]
    )
    for d, concerns in zip(decisions, left, strict=True):
        mine = [s for s in steps if s.holder == d.m.id and s.priority == "HIGH"]
        d.high = [strip_cue(s.told) for s in mine]
        d.doubts = concerns


def pending_links(store: Store, project: str, *, limit: int) -> tuple[list[Proposed], int]:
    """Link suggestions of ``project`` still waiting for a verdict (best first), and how many;
    a suggestion whose memory is gone is left out."""
    found = store.suggestions.of_project(project, status="pending", limit=limit)
    total = store.suggestions.counts(project)["pending"]
    memories = store.memories.get_many([i for s in found for i in (s.from_id, s.to_id)])
    shown = [
        Proposed(s, memories[s.from_id], memories[s.to_id])
        for s in found
        if s.from_id in memories and s.to_id in memories
    ]
    return shown, total


class Told(NamedTuple):
    """A rendered story and the ids of the memories it tells (:func:`told`)."""

    text: str
    ids: list[str]


def render_brief(
    facts: Story,
    home: Path,
    *,
    budget: int,
    short: bool,
    template: str = TEMPLATE,
    limits: tuple[int, ...] = (5, 4, 3, 2, 1),
) -> Told:
    """Render the facts within ``budget`` tokens, fenced: fewer items per list until it fits
    (``home``: the MAMA home whose ``templates`` may override the shipped ones), with the ids
    of the memories the text tells. The ``short`` start tells each decision with why it was
    chosen when the whole of it fits so; otherwise without (the reasons go first)."""
    from ..render import render

    pointer = ""
    if template == TEMPLATE:
        pointer = "More: /mama-resume." if short else POINTER
    key = "resume_tokens" if short else "session_start_tokens"
    note = f"[cut to the {budget}-token budget: {key}]"

    def fits(kept: str) -> bool:
        return estimate_tokens(_fenced(f"{kept}\n{note}", pointer)) <= budget

    if short:  # each decision with why it was chosen, when the whole of it fits as it is
        body = render(template, home, **facts.context(), limit=limits[0], short=True, reasons=True)
        text = _fenced(body, pointer)
        if estimate_tokens(text) <= budget:
            return Told(text, told(facts, limit=limits[0], short=True) if text else [])
    text = ""
    for limit in limits:
        body = render(template, home, **facts.context(), limit=limit, short=short)
        text = _fenced(body, pointer)
        if estimate_tokens(text) <= budget:
            return Told(text, told(facts, limit=limit, short=short) if text else [])
        kept = fit(body, fits, SPARED)  # before fewer items a list: what helps least to go on
        if fits(kept):
            text = _fenced(f"{kept}\n{note}", pointer)
            return Told(text, [i for i in told(facts, limit=limit, short=short) if i in text])
    body = render(template, home, **facts.context(), limit=limits[-1], short=short)
    kept = fit(body, fits)
    if not fits(kept):  # one block alone is too long: cut at a line
        over = estimate_tokens(_fenced(f"{kept}\n{note}", pointer)) - budget
        kept = kept[: max(0, len(kept) - over * 4 - 80)].rsplit("\n", 1)[0]
    text = _fenced(f"{kept}\n{note}", pointer)
    # Of what the smallest limit tells, only what survived the cut.
    return Told(text, [i for i in told(facts, limit=limits[-1], short=short) if i in text])


def told(facts: Story, *, limit: int, short: bool) -> list[str]:
    """The ids of the memories the session start tells with ``limit`` items a list: the
    checkpoint, the decisions and what each replaced, the decisions waiting for an outcome,
    the two ends of each proposed link and the global memories (as ``session_start.md.j2``
    lists them)."""
    ids = [facts.cp.id] if facts.cp is not None else []
    for d in facts.decisions[: max(limit, 3)]:  # as story.md.j2: three at least
        ids += [d.m.id, *(old.id for old in d.replaced[:1])]
    ids += [w.id for w in facts.waiting[: 1 if short else limit]]
    if not short:
        ids += [i for p in facts.proposed[: min(limit, 2)] for i in (p.a.id, p.b.id)]
    ids += [m.id for m in facts.everywhere[: 1 if short else limit]]
    return list(dict.fromkeys(ids))


def _fenced(body: str, pointer: str) -> str:
    """The memory inside the fence, MAMA's own pointer to the rest after it."""
    if not body.strip():
        return ""
    return fenced(body, HEADER) + (f"\n{pointer}" if pointer else "")


def _key(store: Store, project: str, config: Config, variant: str) -> list[str]:
    """What the text depends on (:func:`.brief_cache.key`), read from the store."""
    return brief_cache.key(store.fingerprint(project), config, variant)


def cached_brief(store: Store, project: str, config: Config, source: str) -> str | None:
    """The cached cliffhanger for ``source`` if it is still true ("" means: say nothing)."""
    variant = variant_of(source)
    return brief_cache.cached(
        store.meta(entry_key(variant, project)), _key(store, project, config, variant)
    )


def brief(store: Store, project: str, config: Config, source: str, *, git: bool = False) -> str:
    """The cliffhanger for ``source`` ("" for a project without memory).

    The cached text while it is still true; otherwise rendered now and cached. ``git``: ask
    git how a cited file changed (off a hook's path: the server's refresh); without it, a
    text that could say more once git is asked is not cached, so the next refresh says it.
    """
    variant = variant_of(source)
    key = _key(store, project, config, variant)
    text = brief_cache.cached(store.meta(entry_key(variant, project)), key)
    if text is not None:
        return text
    facts = gather(
        store, project, followup_days=config.settings.outcome_followup_days, now=now_ms(), git=git
    )
    text, ids = (
        ("", [])
        if facts is None
        else render_brief(
            facts, config.home, budget=budget(config, variant), short=variant == "short"
        )
    )
    if facts is not None and facts.checked_later:
        return text
    # The cache is an optimisation: a busy or read-only store still answers.
    with contextlib.suppress(Exception):
        store.set_meta(entry_key(variant, project), brief_cache.entry(text, key, ids))
    return text


def refresh(store: Store, project: str, config: Config) -> None:
    """Render both variants ahead of the next session start (after a write), asking git how
    each cited file that changed came to (off any hook's path)."""
    for source in ("startup", "resume"):
        brief(store, project, config, source, git=True)
