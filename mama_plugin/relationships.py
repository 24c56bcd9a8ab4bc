"""Link relationships: free words, normalised spelling, and the category each belongs to.

A relationship is any word or phrase ("supersedes", "addresses failure of"); its spelling is
normalised (case, ``_``/``-``/spaces) so usage can be counted and frequent words promoted. The
category is derived, never stored by the caller. Standard library only.
"""

from __future__ import annotations

import re
from typing import Literal

Category = Literal["evolution", "implementation", "association", "temporal"]
CATEGORIES: tuple[Category, ...] = ("evolution", "implementation", "association", "temporal")

_KNOWN: dict[str, Category] = {
    "supersedes": "evolution",
    "refines": "evolution",
    "improves": "evolution",
    "implements": "implementation",
    "outcome_of": "implementation",
    "executes": "implementation",
    "relates_to": "association",
    "motivated_by": "association",
    "inspired_by": "association",
    "challenges": "association",
    "depends_on": "association",
    "precedes": "temporal",
    "follows": "temporal",
    "same_session": "temporal",
}

# Relationships whose target is replaced: the target stops being current.
REPLACING = frozenset({"supersedes"})

MAX_LENGTH = 64
_SEPARATORS = re.compile(r"[\s_\-]+")
_VALID = re.compile(r"^\w+$")


def normalise(relationship: str) -> str:
    """Return the canonical spelling: lower case, words joined by single underscores.

    Raises ValueError with a fix-it message when nothing usable remains.
    """
    word = _SEPARATORS.sub("_", relationship.strip().casefold()).strip("_")
    if not word:
        raise ValueError(
            "relationship is empty — use a word such as 'supersedes' or 'motivated_by'"
        )
    if len(word) > MAX_LENGTH:
        raise ValueError(f"relationship is longer than {MAX_LENGTH} characters — use a short verb")
    if not _VALID.match(word):
        raise ValueError(
            f"relationship {relationship!r} may only hold letters, digits, spaces, '_' or '-'"
        )
    return word


def category_of(relationship: str) -> Category:
    """Return the category of a normalised relationship; unknown words are associations."""
    return _KNOWN.get(relationship, "association")


def known_words() -> frozenset[str]:
    """The built-in relationship words, canonical by definition."""
    return frozenset(_KNOWN)
