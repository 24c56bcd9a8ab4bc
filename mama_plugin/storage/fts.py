"""Build safe FTS5 queries from free text. Pure functions; the words come from :mod:`..text`."""

from __future__ import annotations

from collections.abc import Iterable

from ..text import content_words, tokens


def query_words(text: str) -> list[str]:
    """The distinct words of ``text`` worth matching: lower case, stopwords dropped.

    A text of stopwords only ("what is it") keeps them all rather than matching nothing.
    """
    return content_words(text) or list(dict.fromkeys(tokens(text)))


def quoted(word: str) -> str:
    """One word as an FTS5 string: operators in user text (NEAR, AND, ``*``, ``:``) are inert."""
    return '"' + word.replace('"', '""') + '"'


def any_of(words: Iterable[str]) -> str:
    """An FTS5 MATCH expression matching any of ``words`` (each quoted)."""
    return " OR ".join(quoted(w) for w in words)
