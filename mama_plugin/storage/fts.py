"""Build safe FTS5 queries from free text. Pure functions; the words come from :mod:`..text`."""

from __future__ import annotations

from collections.abc import Iterable

from ..text import PREFIX, search_terms, tokens


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
