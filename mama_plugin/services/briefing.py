"""The session-start cliffhanger: where we stopped, what is unresolved, what comes next.

Built from the store alone (no model): the project's newest checkpoint (Claude's or the
rolling automatic one), the decisions that work depends on — each with the failed or
superseded decision it replaced — decisions still waiting for an outcome, and links the
local model or a rule proposed that still wait for a verdict. Rendered by
``templates/session_start.md.j2`` within a token budget, and nothing at all for a project
with no memory.

Rendering needs Jinja (~40 ms to import), which a cold hook process should not pay: every
process that already has Jinja loaded (the MCP server after each turn's checkpoint, the CLI)
renders the cliffhanger ahead and caches it in the store's ``meta`` table, keyed by a
fingerprint of the project's memories, the budget and the templates. The hook serves the
cached text when the fingerprint matches and renders only when it does not. Phrases that
depend on the current time ("3 weeks ago") are left as markers in the cached text and filled
in when it is served (:func:`finish`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from typing import Any

from ..config import Config, mama_home
from ..storage import MemoryRecord, Store, now_ms
from ..text import estimate_tokens, strip_cue
from .evolution import current_of

VARIANTS = {"startup": "full", "clear": "full", "resume": "short", "compact": "short"}
TEMPLATE = "session_start.md.j2"
_AGO = re.compile(r"\{ago:(\d+)\}")
DAY_MS = 86_400_000


def ago(ms: int, now: int) -> str:
    """How long ago ``ms`` was, in the largest sensible unit ("3 weeks ago")."""
    seconds = max(0, (now - ms) // 1000)
    for unit, size in (
        ("year", 31_536_000),
        ("month", 2_592_000),
        ("week", 604_800),
        ("day", 86_400),
        ("hour", 3_600),
        ("minute", 60),
    ):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n > 1 else ''} ago"
    return "just now"


def finish(text: str, now: int | None = None) -> str:
    """Fill in the time-relative markers of a rendered (or cached) cliffhanger."""
    now = now if now is not None else now_ms()
    return _AGO.sub(lambda m: ago(int(m.group(1)), now), text)


def gather(store: Store, project: str, *, followup_days: int, now: int) -> dict[str, Any] | None:
    """The cliffhanger's facts for ``project``, or None when it has no memory at all."""
    checkpoint, since = resume_point(store, project)
    ids: list[str] = []
    if checkpoint is not None:
        ids += [
            ln.to_id
            for ln in store.links.of(checkpoint.id, direction="out")
            if ln.relationship == "implements"
        ]
        ids += [str(i) for i in checkpoint.metadata.get("decisions") or []]
    if not ids:
        ids = [m.id for m in store.memories.latest(project=project, type="decision", limit=3)]
    decisions: list[dict[str, Any]] = []
    for memory_id in dict.fromkeys(ids):
        found = store.memories.get(memory_id)
        if found is None or found.type != "decision":
            continue
        head = current_of(store, found.id)
        if head.id not in {d["m"].id for d in decisions}:
            decisions.append({"m": head, "replaced": predecessors(store, head)})
    waiting, waiting_total = store.memories.awaiting_outcome(
        project, before=now - followup_days * DAY_MS, limit=3
    )
    proposed, proposed_total = pending_links(store, project, limit=3)
    if checkpoint is None and not decisions and not waiting and not proposed:
        return None
    step, unresolved = _open_ends(checkpoint, decisions)
    return {
        "cp": checkpoint,
        "next": step,
        "unresolved": unresolved,
        "since": since,
        "decisions": decisions,
        "waiting": waiting,
        "waiting_total": waiting_total,
        "followup_days": followup_days,
        "proposed": proposed,
        "proposed_total": proposed_total,
    }


def _open_ends(
    checkpoint: MemoryRecord | None, decisions: list[dict[str, Any]]
) -> tuple[dict[str, Any] | None, list[str]]:
    """The next step to show and what is unresolved; each decision gets its own open ends.

    The next step is the checkpoint's first (its cue, "Next:", left out: the line says it),
    else the first HIGH next step of a current decision. Unresolved is the checkpoint's
    tension. Each decision entry gains ``open`` (its concerns and risks the checkpoint does not
    already list) and ``high`` (its HIGH next steps other than the one shown).
    """
    unresolved: list[str] = []
    step: dict[str, Any] | None = None
    if checkpoint is not None:
        tension = checkpoint.tension or {}
        for key in ("concerns", "risks", "trade_offs"):
            unresolved += [str(x) for x in tension.get(key) or []]
        steps = [s for s in (checkpoint.continuity or {}).get("next_steps") or [] if s]
        if steps:
            step = {**steps[0], "step": strip_cue(str(steps[0].get("step", "")))}
    shown = " ".join(unresolved).lower()
    for d in decisions:
        m = d["m"]
        tension = m.tension or {}
        d["open"] = [
            str(x)
            for key in ("concerns", "risks")
            for x in tension.get(key) or []
            if str(x).lower() not in shown
        ]
        high = [
            strip_cue(str(n.get("step", "")))
            for n in (m.continuity or {}).get("next_steps") or []
            if isinstance(n, dict) and n.get("priority") == "HIGH" and n.get("step")
        ]
        if step is None and high:
            step = {"step": high[0], "priority": "HIGH", "context": f"next step of {m.id}"}
        d["high"] = [h for h in high if step is None or h != step["step"]]
    return step, unresolved


def pending_links(store: Store, project: str, *, limit: int) -> tuple[list[dict[str, Any]], int]:
    """Link suggestions of ``project`` still waiting for a verdict (best first), and how many.

    Each as ``{"s": suggestion, "a": from memory, "b": to memory}``; a suggestion whose memory
    is gone is left out.
    """
    found = store.suggestions.of_project(project, status="pending", limit=limit)
    total = store.suggestions.counts(project)["pending"]
    memories = store.memories.get_many([i for s in found for i in (s.from_id, s.to_id)])
    shown = [
        {"s": s, "a": memories[s.from_id], "b": memories[s.to_id]}
        for s in found
        if s.from_id in memories and s.to_id in memories
    ]
    return shown, total


def resume_point(store: Store, project: str) -> tuple[MemoryRecord | None, MemoryRecord | None]:
    """The checkpoint to resume from, and the automatic one that is newer than it, if any.

    A checkpoint Claude wrote tells the story best, so it leads unless the automatic one
    comes from a later session (then the written one is stale and the automatic one leads).
    """
    recent = store.memories.latest(project=project, type="checkpoint", limit=20)
    written = next((m for m in recent if not m.metadata.get("auto")), None)
    auto = next((m for m in recent if m.metadata.get("auto")), None)
    if written is None or (auto is not None and written.updated_at < auto.created_at):
        return auto, None
    newer = auto if auto is not None and auto.updated_at > written.updated_at else None
    return written, newer


def predecessors(store: Store, memory: MemoryRecord) -> list[MemoryRecord]:
    """The decisions ``memory`` superseded, most recent first (the story behind it)."""
    ids = [
        ln.to_id
        for ln in store.links.of(memory.id, direction="out")
        if ln.relationship == "supersedes"
    ]
    return sorted(store.memories.get_many(ids).values(), key=lambda m: -m.created_at)[:2]


def render_brief(facts: dict[str, Any], *, budget: int, short: bool) -> str:
    """Render the facts within ``budget`` tokens: fewer items per list until it fits."""
    from .render import render

    text = ""
    for limit in (5, 4, 3, 2, 1):
        text = render(TEMPLATE, **facts, limit=limit, short=short).strip()
        if estimate_tokens(text) <= budget:
            return text
    key = "resume_tokens" if short else "session_start_tokens"
    cut = text[: budget * 4 - 60].rsplit("\n", 1)[0]
    return cut + f"\n[cut to the {budget}-token budget: {key}]"


def _budget(config: Config, variant: str) -> int:
    settings = config.settings
    return settings.resume_tokens if variant == "short" else settings.session_start_tokens


def _key(store: Store, project: str, config: Config, variant: str) -> list[str]:
    """What the text depends on: the memories, budget, follow-up age, templates and the day.

    The day counts because "waiting for an outcome" depends on it.
    """
    from .render import shipped_templates

    stamps = []
    for folder in (mama_home() / "templates", shipped_templates()):
        try:
            stamps.append(os.stat(folder / TEMPLATE).st_mtime_ns)
        except OSError:
            stamps.append(0)
    settings = f"{variant}:{_budget(config, variant)}:{config.settings.outcome_followup_days}"
    return [store.fingerprint(project), f"{settings}:{stamps}", _today()]


def _cached(store: Store, project: str, variant: str, key: list[str]) -> str | None:
    raw = store.meta(f"brief:{variant}:{project}")
    try:
        entry = json.loads(raw) if raw is not None else {}
    except ValueError:
        return None
    return str(entry["text"]) if entry.get("key") == key else None


def cached_brief(store: Store, project: str, config: Config, source: str) -> str | None:
    """The cached cliffhanger for ``source`` if it is still true ("" means: say nothing)."""
    variant = VARIANTS.get(source, "full")
    return _cached(store, project, variant, _key(store, project, config, variant))


def brief(store: Store, project: str, config: Config, source: str) -> str:
    """The cliffhanger for ``source`` ("" for a project without memory).

    The cached text while it is still true; otherwise rendered now and cached.
    """
    variant = VARIANTS.get(source, "full")
    key = _key(store, project, config, variant)
    text = _cached(store, project, variant, key)
    if text is not None:
        return text
    facts = gather(
        store, project, followup_days=config.settings.outcome_followup_days, now=now_ms()
    )
    text = (
        ""
        if facts is None
        else render_brief(facts, budget=_budget(config, variant), short=variant == "short")
    )
    # The cache is an optimisation: a busy or read-only store still answers.
    with contextlib.suppress(Exception):
        store.set_meta(f"brief:{variant}:{project}", json.dumps({"key": key, "text": text}))
    return text


def refresh(store: Store, project: str, config: Config) -> None:
    """Render both variants ahead of the next session start (after a write)."""
    for source in ("startup", "resume"):
        brief(store, project, config, source)


def _today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())
