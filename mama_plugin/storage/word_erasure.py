"""Masking a secret in relationship words: the links' words, their usage counts, what tidy
recorded of them, proposed links' words and link tags.

A relationship word is a key, not free text: ``acme_integration`` with ``acme`` redacted
becomes ``redacted_integration`` (still a word; ``[REDACTED]`` is not one), and a word that
becomes one already used merges into it — usage counts add up, a link already stated with
the masked word keeps that one. A tag is text: the secret becomes ``[REDACTED]``. The graph's
``links_version`` moves when a link's word changes, so cached walks do not tell the old word.
Runs inside the caller's transaction (:meth:`.erasure.Erasure.mask`). Imports: apsw, leaves.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable

import apsw

from ..relationships import MAX_LENGTH, normalise

WORD_MASK = "redacted"  # what a secret inside a relationship word becomes
TAG_MASK = "[REDACTED]"


def finders(pattern: str) -> list[re.Pattern[str]]:
    """The pattern as typed and as a relationship word spells it (``Acme Corp`` →
    ``acme_corp``), each any case."""
    spelled = [pattern]
    with contextlib.suppress(ValueError):  # a pattern no word can spell
        spelled.append(normalise(pattern))
    return [re.compile(re.escape(p), re.IGNORECASE) for p in dict.fromkeys(spelled)]


def masked_word(word: str, found: list[re.Pattern[str]]) -> str:
    """``word`` with every match replaced by :data:`WORD_MASK`, spelled as a word."""
    for finder in found:
        word = finder.sub(f"_{WORD_MASK}_", word)
    return normalise(normalise(word[: 3 * MAX_LENGTH])[:MAX_LENGTH])


def mask_words(conn: apsw.Connection, pattern: str) -> dict[str, int]:
    """Mask ``pattern`` in every relationship word and link tag; rows changed by table."""
    found = finders(pattern)
    changed: dict[str, int] = {}

    def matching(sql: str) -> list[str]:
        words = [str(r[0]) for r in conn.execute(sql).fetchall()]
        return [w for w in words if any(f.search(w) for f in found)]

    def word_of(word: str) -> str:
        return masked_word(word, found)

    def tag_of(tag: str) -> str:
        for finder in found:
            tag = finder.sub(TAG_MASK, tag)
        return tag

    def rename(table: str, column: str, new_of: Callable[[str], str], *, merge: bool) -> int:
        """Each matching value of ``table.column`` renamed; rows changed. With ``merge`` a
        row whose new value already stands (a UNIQUE key) goes instead."""
        rows = 0
        for old in matching(f"SELECT DISTINCT {column} FROM {table}"):
            update = "UPDATE OR IGNORE" if merge else "UPDATE"
            conn.execute(
                f"{update} {table} SET {column} = ? WHERE {column} = ?", (new_of(old), old)
            )
            rows += conn.changes()
            if merge:
                conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (old,))
                rows += conn.changes()
        return rows

    # memory_links: UNIQUE (from_id, to_id, relationship) — the same link already stated with
    # the masked word stays, this one goes.
    links = rename("memory_links", "relationship", word_of, merge=True)
    if links:
        changed["memory_links.relationship"] = links
        conn.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'links_version'"
        )
    usage = 0
    for word in matching("SELECT relationship FROM relationship_usage"):
        conn.execute(
            "INSERT INTO relationship_usage(relationship, link_category, uses, first_used, "
            "last_used) SELECT ?, link_category, uses, first_used, last_used "
            "FROM relationship_usage WHERE relationship = ? "
            "ON CONFLICT(relationship) DO UPDATE SET uses = uses + excluded.uses, "
            "first_used = min(first_used, excluded.first_used), "
            "last_used = max(last_used, excluded.last_used)",
            (masked_word(word, found), word),
        )
        conn.execute("DELETE FROM relationship_usage WHERE relationship = ?", (word,))
        usage += 1
    if usage:
        changed["relationship_usage"] = usage
    recorded = rename("relationship_words", "relationship", word_of, merge=True)
    recorded += rename("relationship_words", "canonical", word_of, merge=False)
    if recorded:
        changed["relationship_words"] = recorded
    proposed = rename("link_suggestions", "relationship", word_of, merge=False)
    if proposed:
        changed["link_suggestions.relationship"] = proposed
    tags = rename("link_tags", "tag", tag_of, merge=True)
    if tags:
        changed["link_tags"] = tags
    return changed
