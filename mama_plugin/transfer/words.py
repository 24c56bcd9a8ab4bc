"""The relationship words a dump carries: what ``mama graph tidy`` and merges recorded of the
words its links use (canonical form, cluster, category by meaning, who decided).

Exported with the links that use them (and the canonical words those stand for); imported
where the store has no row for the word yet — a word the store already records keeps what
it records, as a memory already present does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from ..relationships import CATEGORIES, normalise
from ..storage import Store
from ..storage.relationship_words import RelationshipWords, WordRow
from .result import LegacyResult


def export_words(store: Store, used: Iterable[str]) -> list[dict[str, Any]]:
    """The recorded rows of the words ``used`` and of the canonical words they stand for,
    by word."""
    known = RelationshipWords(store).all()
    wanted = {w for w in used if w in known}
    wanted |= {known[w].canonical for w in wanted}
    return [asdict(known[w]) for w in sorted(wanted) if w in known]


def restore_words(store: Store, rows: list[Any], result: LegacyResult) -> None:
    """Record the dump's words the store does not record yet. Raises LegacyImportError
    naming the row for a malformed one."""
    words = RelationshipWords(store)
    known = words.all()
    fresh: list[WordRow] = []
    for word in result.parsed("relationship_words", rows, _word_row):
        if word.relationship in known:
            result.tally("relationship_words", "already_present")
            continue
        fresh.append(word)
        result.tally("relationship_words", "imported")
    words.put(fresh)


def _word_row(row: dict[str, Any]) -> WordRow:
    word = WordRow(**row)
    if normalise(word.relationship) != word.relationship:
        raise ValueError(f"{word.relationship!r} is not a normalised relationship word")
    if word.category not in CATEGORIES:
        raise ValueError(f"unknown category {word.category!r}")
    return word
