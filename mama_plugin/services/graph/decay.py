"""How strong a link still is: exponential decay by category, and when a link is pruned.

The design's rule, the one formula every fading thing in the graph uses (:func:`fade`):
``strength = confidence × exp(−rate × days)``. By category, per day: temporal 0.1 (half
after 6.9 days), association 0.05 (13.9 days), implementation 0.02 (34.7 days); evolution
never fades (a supersession stays true). The figures behind these rates, against the
half-lives of 30, 365 and 3,650 days kept before: docs/architecture.md, "Link decay".

Days count from the link's last use, else its creation: a link whose two ends were told in
one answer (:meth:`~mama_plugin.storage.link_state.LinkState.reinforce`) regains its stored
confidence and starts fading again from then. A person's down-vote halves the stored
confidence. Computed when read, never written back.

Pruned by the periodic pass (:func:`prune_reason`): a link whose strength fell below
``PRUNE_BELOW``, and a temporal link unused for more than ``TEMPORAL_MAX_DAYS`` days. Two
kinds are records rather than claims and are never pruned (``KEPT``): a link that replaces
another (``supersedes``: a superseded decision is always told with the decision that replaced
it) and an outcome event's link to its memory (``outcome_of``: forgetting the memory forgets
its events by that link).
"""

from __future__ import annotations

import math

from ...relationships import REPLACING
from ...storage import LinkRecord

DAY_MS = 86_400_000
# Per-day decay rate of a link's confidence by category (None: never decays).
DECAY_RATES: dict[str, float | None] = {
    "temporal": 0.1,
    "association": 0.05,
    "implementation": 0.02,
    "evolution": None,
}
PRUNE_BELOW = 0.2
TEMPORAL_MAX_DAYS = 30.0
DOWN_VOTE = 0.5  # a down-vote multiplies the stored confidence by this
KEPT = REPLACING | {"outcome_of"}  # records, not claims: never pruned


def fade(days: float, rate: float) -> float:
    """``exp(−rate × days)``: what is left of 1 after ``days`` at ``rate`` per day."""
    return math.exp(-rate * max(0.0, days))


def idle_days(link: LinkRecord, now: int) -> float:
    """Days since the link was last used (both ends told together), else since created."""
    since = max(link.created_at, link.used_at or 0)
    return max(0.0, (now - since) / DAY_MS)


def decayed(link: LinkRecord, now: int) -> float:
    """The link's strength at ``now``: ``confidence × exp(−rate × idle days)``."""
    rate = DECAY_RATES.get(link.link_category)
    if rate is None:
        return link.confidence
    return link.confidence * fade(idle_days(link, now), rate)


def prune_reason(link: LinkRecord, now: int) -> str | None:
    """Why the periodic pass prunes ``link`` at ``now`` (one short phrase), or None to keep it."""
    if link.relationship in KEPT:
        return None
    days = idle_days(link, now)
    if link.link_category == "temporal" and days > TEMPORAL_MAX_DAYS:
        return f"temporal, unused for {days:.0f} days (> {TEMPORAL_MAX_DAYS:g})"
    strength = decayed(link, now)
    if strength < PRUNE_BELOW:
        return f"strength {strength:.2f} < {PRUNE_BELOW:g} after {days:.0f} days unused"
    return None
