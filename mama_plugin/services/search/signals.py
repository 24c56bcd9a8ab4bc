"""Ranking signals read around the ranked list: later versions of a fact, links to the top.

Both adjust the scores of the best candidates in place (the window near the cut at k), after
:mod:`ranking`. Read-only.

- **Later versions** (``later_versions``). Two memories of one project and type state the same
  fact when both hold every content word of the question (at least ``ASKED_MIN`` of them) and
  are near-duplicates (at least ``SHARED_MIN`` content words in common, covering
  ``OVERLAP_MIN`` of the shorter one): the same subject and attribute, possibly with a changed
  value. Matching the question on fewer words was too loose: on LoCoMo's conversation turns
  it reordered turns that merely shared a speaker and a word (turn R@10 0.764 → 0.689 on the
  first conversation). (A decision that replaces
  another says so with ``supersedes``; that stays the stronger, explicit signal.) Within such
  a group the newest (by event time) takes the group's best score, the next newest the next,
  and so on: the group keeps its places in the ranking, newest first, and each older member
  is marked as updated by the newest. Figures: docs/architecture.md, "Retrieval".
- **Links** (``boost_linked``). Memories linked to the top result within ``LINK_DEPTH`` hops,
  along links whose decayed confidence is at least ``LINK_MIN_CONFIDENCE``, gain
  ``LINK_BOOST`` and/or the type-pair boost; none passes the top result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...groups import Groups
from ...storage import RankFields, Store
from ...text import content_words
from ..graph.traverse import traverse
from .ranking import LINK_BOOST, LINK_DEPTH, LINK_MIN_CONFIDENCE, type_pair

ASKED_MIN = 2
SHARED_MIN = 2
OVERLAP_MIN = 0.5


def later_versions(
    store: Store,
    asked: Iterable[str],
    window: Sequence[int],
    scores: dict[int, float],
    fields: dict[int, RankFields],
) -> dict[int, int]:
    """Reorder each group of versions of one fact newest first; return {older: newest}.

    ``asked``: the question's content words (read once by the caller); ``window`` is the
    candidates near the cut, best first; ``scores`` is changed in place.
    """
    texts = store.search.texts(window)
    asked = set(asked)
    words = {seq: set(content_words(f"{topic} {text}")) for seq, (topic, text) in texts.items()}
    versions = Groups(texts)
    seqs = list(texts)
    # Only memories of one project and type that hold every content word of the question can
    # be versions of the fact it asks about: compare within those buckets.
    buckets: dict[tuple[str, str], list[int]] = {}
    for seq in seqs:
        if len(asked) >= ASKED_MIN and asked <= words[seq]:
            buckets.setdefault((fields[seq].project, fields[seq].type), []).append(seq)
    for members in buckets.values():
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                if _near_duplicates(words[a], words[b]):
                    versions.join(b, a)
    groups = versions.members()
    updated: dict[int, int] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        newest_first = sorted(members, key=lambda s: (-fields[s].created_at, -s))
        best_first = sorted((scores[s] for s in members), reverse=True)
        for seq, score in zip(newest_first, best_first, strict=True):
            scores[seq] = score
        for older in newest_first[1:]:
            if fields[older].created_at < fields[newest_first[0]].created_at:
                updated[older] = newest_first[0]
    return updated


def _near_duplicates(a: set[str], b: set[str]) -> bool:
    """At least ``SHARED_MIN`` words in common, covering ``OVERLAP_MIN`` of the shorter."""
    shared = len(a & b)
    return shared >= SHARED_MIN and shared >= OVERLAP_MIN * min(len(a), len(b))


def boost_linked(
    store: Store,
    window: Sequence[int],
    scores: dict[int, float],
    fields: dict[int, RankFields],
    now: int,
    links: bool,
    type_pairs: bool,
) -> None:
    """Boost the candidates linked to the top result; none passes it. ``scores`` changes."""
    if not window:
        return
    top = window[0]
    ids = store.search.ids_of(window)
    by_id = {memory_id: seq for seq, memory_id in ids.items()}
    if top not in ids:
        return
    steps = traverse(
        store, ids[top], max_depth=LINK_DEPTH, min_confidence=LINK_MIN_CONFIDENCE, now=now
    )
    ceiling = scores[top]
    for step in steps:
        seq = by_id.get(step.memory_id)
        if seq is None or seq == top:
            continue
        factor = LINK_BOOST if links else 1.0
        if type_pairs:
            factor *= type_pair(fields[top].type, fields[seq].type)
        scores[seq] = min(scores[seq] * factor, max(scores[seq], ceiling * (1 - 1e-9)))
