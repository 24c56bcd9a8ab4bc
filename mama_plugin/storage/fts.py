"""Build safe FTS5 queries from free text. Pure functions."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)

# Function words that match nearly every memory and only add noise to BM25.
STOPWORDS = frozenset(
    (
        "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at",
        "be", "because", "been", "before", "being", "between", "both", "but", "by", "can",
        "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
        "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers",
        "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just",
        "me", "more", "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once",
        "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she", "should",
        "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then",
        "there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
        "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who",
        "whom", "why", "will", "with", "would", "you", "your", "yours",
    )
)  # fmt: skip


def query_words(text: str) -> list[str]:
    """The distinct words of ``text`` worth matching: lower case, stopwords dropped."""
    words = [w.casefold() for w in _WORD.findall(text)]
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(kept))


def quoted(word: str) -> str:
    """One word as an FTS5 string: operators in user text (NEAR, AND, ``*``, ``:``) are inert."""
    return '"' + word.replace('"', '""') + '"'


def match_query(text: str) -> str | None:
    """Return an FTS5 MATCH expression OR-ing the words of ``text``, or None if none remain."""
    words = query_words(text)
    return " OR ".join(quoted(w) for w in words) if words else None
