"""Keeping the links honest: the periodic prune, a person's down-vote or delete, restoring.

:func:`prune` is the links' part of the periodic pass (``mama graph tidy``, ``mama graph
prune``, and in the server's background once a day, :func:`prune_if_due`): every link
:func:`.decay.prune_reason` names is moved to ``archived_links`` — listed by ``mama
graph archived``, put back by ``mama graph restore`` — never deleted. A dry run lists the
same links and changes nothing. :func:`judge_link` applies a person's (or Claude's, asked by
one) verdict on a link: ``down`` halves its stored confidence, ``delete`` removes it for good.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...errors import StoreDamaged, StoreUnwritable, ValidationError
from ...storage import LinkRecord, Store, now_ms
from ...storage.link_state import ArchivedLink, LinkState
from .decay import DAY_MS, DOWN_VOTE, PRUNE_BELOW, decayed, prune_reason

VERDICTS = ("down", "delete")


@dataclass(frozen=True)
class Shown:
    """A link with its strength now (its stored confidence decayed), as it is told."""

    link: LinkRecord
    strength: float

    def line(self, tags: tuple[str, ...] = ()) -> str:
        """``#12 a --relates_to--> b (strength 0.41 of 0.90) [tags: perf]: the reason``."""
        ln = self.link
        return (
            f"#{ln.id} {ln.from_id} --{ln.relationship}--> {ln.to_id} "
            f"(strength {self.strength:.2f} of {ln.confidence:.2f}){tags_said(tags)}: {ln.reason}"
        )

    def as_dict(self) -> dict[str, Any]:
        """The link's columns and its strength (rounded)."""
        return {**self.link.as_dict(), "strength": round(self.strength, 4)}


def tags_said(tags: tuple[str, ...]) -> str:
    """A link's tags as a line shows them after the link (" [tags: perf, review]"; "" none)."""
    return f" [tags: {', '.join(tags)}]" if tags else ""


def shown(link: LinkRecord, now: int | None = None) -> Shown:
    """``link`` with its strength at ``now`` (the wall clock when not given)."""
    return Shown(link, decayed(link, now if now is not None else now_ms()))


@dataclass
class PruneResult:
    """The links one pass pruned (or, in a dry run, would prune), each with why."""

    dry_run: bool
    pruned: list[tuple[Shown, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One line a link, then a summary line."""
        verb = "would archive" if self.dry_run else "archived"
        out = [f"{s.line()} — {why}" for s, why in self.pruned]
        n = len(self.pruned)
        tail = " (`mama graph archived` lists them; `mama graph restore ID` puts one back)"
        out.append(f"{verb} {n} link{'s' * (n != 1)}" + (tail if n and not self.dry_run else ""))
        return out

    def as_dict(self) -> dict[str, Any]:
        """Plain data (``--json``)."""
        return {
            "dry_run": self.dry_run,
            "pruned": [{**s.as_dict(), "why": why} for s, why in self.pruned],
        }


def prunable(store: Store, now: int) -> list[tuple[Shown, str]]:
    """Every link the pass would prune at ``now``, with why; oldest first."""
    out = []
    for link in store.links.iter():
        why = prune_reason(link, now)
        if why is not None:
            out.append((Shown(link, decayed(link, now)), why))
    return out


def prune(store: Store, *, dry_run: bool = False, now: int | None = None) -> PruneResult:
    """Archive every link too weak to keep (see the module's docstring); a dry run lists them."""
    now = now if now is not None else now_ms()
    result = PruneResult(dry_run, prunable(store, now))
    if not dry_run and result.pruned:
        LinkState(store).archive(((s.link, why) for s, why in result.pruned), now)
    return result


@dataclass(frozen=True)
class Judged:
    """What a verdict did to a link: the link after (before, for a delete) and what followed."""

    verdict: str
    link: Shown
    current_again: bool = False

    def summary(self) -> str:
        """One line for the person or the model."""
        ln = self.link.link
        if self.verdict == "delete":
            text = f"Deleted link #{ln.id} {ln.from_id} --{ln.relationship}--> {ln.to_id}."
            if self.current_again:
                text += f" {ln.to_id} is current again (nothing else replaces it)."
            return text
        return (
            f"Down-voted link #{ln.id}: confidence now {ln.confidence:.2f}, strength "
            f"{self.link.strength:.2f} (the periodic pass archives it below "
            f"{PRUNE_BELOW:g})."
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain data (``--json``, the tool's structured answer)."""
        return {
            "verdict": self.verdict,
            "link": self.link.as_dict(),
            "current_again": self.current_again,
        }


def judge_link(store: Store, link_id: int, verdict: str, *, now: int | None = None) -> Judged:
    """Apply ``verdict`` (``down`` or ``delete``) to link ``link_id``.

    Raises ValidationError for another verdict, NotFoundError for an unknown link.
    """
    now = now if now is not None else now_ms()
    state = LinkState(store)
    if verdict == "down":
        link = state.down_vote(link_id, DOWN_VOTE)
        return Judged(verdict, shown(link, now))
    if verdict == "delete":
        link, again = state.delete(link_id)
        return Judged(verdict, shown(link, now), again)
    raise ValidationError([f"verdict must be one of {', '.join(VERDICTS)} (got {verdict!r})"])


def archived(store: Store, project: str | None) -> list[ArchivedLink]:
    """The archived links of ``project`` (every project when None), newest archived first."""
    return LinkState(store).archived(project)


def restore(store: Store, link_id: int, *, now: int | None = None) -> tuple[Shown, bool]:
    """Put archived link ``link_id`` back, counted as used now; (the live link, restored?)."""
    now = now if now is not None else now_ms()
    link, restored = LinkState(store).restore(link_id, now)
    return shown(link, now), restored


PRUNED_KEY = "links_pruned_at"  # meta: when the background pass last pruned (ms)
PRUNE_EVERY_DAYS = 1.0


def prune_if_due(
    store: Store, *, every_days: float = PRUNE_EVERY_DAYS, now: int | None = None
) -> PruneResult | None:
    """:func:`prune` when the last background prune is ``every_days`` old (or never ran)."""
    now = now if now is not None else now_ms()
    last = int(store.meta(PRUNED_KEY) or 0)
    if now - last < every_days * DAY_MS:
        return None
    result = prune(store, now=now)
    store.set_meta(PRUNED_KEY, str(now))
    return result


def used_together(store: Store, memory_ids: Iterable[str]) -> int:
    """Count a use of every link between two of ``memory_ids``, told in one answer; how many.

    Bookkeeping: never fails the answer on a busy, read-only, full or damaged store (0 then).
    """
    try:
        return LinkState(store).reinforce(memory_ids)
    except (StoreUnwritable, StoreDamaged):
        return 0
