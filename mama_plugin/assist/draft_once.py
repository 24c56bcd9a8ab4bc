"""A draft tells each fact once: the pass :func:`~.draft.compose` runs on a proposal.

The extractor reads one conversation for every layer, so a sentence that gives the reason,
names the trade-off and holds a figure comes back as the primary reason, a secondary one, a
tension item and a handful of specifics. The reviewer (Claude) reads the draft once and saves
what it shows, so a repeated sentence costs tokens twice and is stored twice. Each sentence is
kept where it says the most: a tension item over a secondary reason it tells whole (an accepted
cost is what the next session must know is open), the first of the tension lists it falls in,
and a specific only when the sentences shown do not already hold it; a failed command told as a
tension item keeps only "failed" in its evidence. The primary reason and the alternatives are
kept as they are: a trade-off may be the very reason given (on the labelled turns, dropping it
from the tension took the tension recall 0.714 → 0.686), and an alternative may have lost for
it (the draft then says "the primary reason").
"""

from __future__ import annotations

import re
from typing import Any

_SPACE = re.compile(r"\s+")
TENSION = ("concerns", "trade_offs", "risks")
_ERROR = re.compile(r"\((failed): .*\)$", re.DOTALL)
HELD_WORDS = 5  # a reason of fewer words is not told inside a concern (see _held)


def once(proposal: dict[str, Any]) -> dict[str, Any]:
    """``proposal`` with each sentence in one field only (a new dict; ``proposal`` unchanged)."""
    reasoning = dict(proposal.get("reasoning") or {})
    tension = dict(proposal.get("tension") or {})
    primary = reasoning.get("primary") or ""
    seen: set[str] = set()
    for name in TENSION:
        kept = []
        for item in tension.get(name) or []:
            if _key(item) not in seen:
                seen.add(_key(item))
                kept.append(item)
        tension[name] = kept
    told = seen | {_key(primary)}
    # A secondary reason a tension item holds whole ("X." and "X: that is a real downside for
    # conversion.", one sentence the next one pointed back at) is told there.
    reasoning["secondary"] = [
        s for s in reasoning.get("secondary") or [] if _key(s) not in told and not _held(s, seen)
    ]
    shown = [primary, *reasoning["secondary"], *(v for name in TENSION for v in tension[name])]
    shown += [
        f"{a.get('option', '')} {a.get('rejected_because') or ''}"
        for a in reasoning.get("alternatives_considered") or []
    ]
    text = _key(" ".join(shown))
    specifics = [s for s in proposal.get("specifics") or [] if _key(s) not in text]
    evidence = [_cited(e, text) for e in proposal.get("evidence") or []]
    return {
        **proposal,
        "reasoning": reasoning,
        "tension": tension,
        "specifics": specifics,
        "evidence": evidence,
    }


def _cited(item: Any, told: str) -> Any:
    """A command's evidence without its error when a tension item tells that failure already
    ("`cmd` failed (…): exit 1, why"): the evidence keeps that it failed."""
    if not isinstance(item, dict) or item.get("kind") != "command":
        return item
    command = _key(f"`{item.get('source', '')}`")
    detail = str(item.get("detail") or "")
    if command not in told:
        return item
    return {**item, "detail": _ERROR.sub(r"(\1)", detail)}


def _held(sentence: str, items: set[str]) -> bool:
    """Whether one of ``items`` (keys) opens with the whole ``sentence`` and goes on from its
    end ("x y z w." in "x y z w: that is a cost."): a short reason ("Faster.") is never held."""
    whole = _key(sentence).rstrip(".")
    if len(whole.split()) < HELD_WORDS:
        return False
    after = len(whole)
    return any(i.startswith(whole) and i[after : after + 1] in (":", ";", "—") for i in items)


def _key(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()
