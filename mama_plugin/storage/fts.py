"""Build safe FTS5 queries from free text (the words come from :mod:`..text`), and read how
common a term is (:func:`term_statistics`, which prompt recall weighs terms by)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..text import PREFIX, search_terms, tokens
from .diagnosis import FULL_TEXT
from .repository import Repository


def query_words(text: str) -> list[str]:
    """The distinct terms of ``text`` worth matching (:func:`~mama_plugin.text.search_terms`):
    lower case, stopwords dropped, a Korean word as its stem marked as a prefix ("캐시*").

    A text of stopwords only ("what is it") keeps them all rather than matching nothing.
    """
    return search_terms(text) or list(dict.fromkeys(tokens(text)))


def quoted(word: str) -> str:
    """One term as an FTS5 string: operators in user text (NEAR, AND, ``:``) are inert.

    A term ending in ``PREFIX`` (only :func:`query_words` makes one: words never hold it)
    becomes a prefix query, ``"캐시"*``, matching "캐시는", "캐시를" and "캐시".
    """
    if word.endswith(PREFIX) and len(word) > 1:
        return '"' + word[:-1].replace('"', '""') + '"' + PREFIX
    return '"' + word.replace('"', '""') + '"'


def any_of(words: Iterable[str]) -> str:
    """An FTS5 MATCH expression matching any of ``words`` (each quoted)."""
    return " OR ".join(quoted(w) for w in words)


class Terms(Repository):
    """How common terms are in one store: ``Terms(store)`` (prompt recall weighs terms by it)."""

    def statistics(self, terms: Sequence[str], *, cap: int) -> tuple[int, dict[str, int]]:
        """How many memories the store holds (its highest row number: O(1)) and, for each
        term, how many contain it (matched as :func:`quoted` makes it, counted up to ``cap``)."""
        row = self.conn.execute("SELECT coalesce(max(seq), 0) FROM memories").fetchall()[0]
        if FULL_TEXT in self._store.degraded:  # damaged: no term is found until it is rebuilt
            return int(row[0] or 0), dict.fromkeys(terms, 0)
        frequency: dict[str, int] = {}
        for term in dict.fromkeys(terms):
            found = self.conn.execute(
                "SELECT count(*) FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? "
                "LIMIT ?)",
                (quoted(term), cap),
            ).fetchall()[0]
            frequency[term] = int(found[0] or 0)
        return int(row[0] or 0), frequency
