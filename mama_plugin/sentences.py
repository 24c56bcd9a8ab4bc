"""Sentence-level reading of conversation text, shared by the checkpoint and the drafter.

Standard library only. These are cues, not understanding: they pick sentences that state a
reason, an alternative, a risk or a next step, and the numbers that make a claim specific.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(*])|\n+")
NEXT = re.compile(
    r"^(next( step)?s?\b|then\b|todo\b|still (need|to)\b|remaining\b|follow[- ]up\b)", re.I
)
TENSION = re.compile(
    r"\b(but|however|risk|concern|not yet|unresolved|trade-?off|fails?|failing|blocked|"
    r"downside|caveat|spof|single point of failure)\b",
    re.I,
)
CAUSAL = re.compile(
    r"\b(because|since|due to|so that|therefore|thus|as a result|in order to|which means|"
    r"caused|causes|led to|leads to|fails?|failed|failing|breaks|broke|avoids?|prevents?|"
    r"fixes|addresses|replac(?:es|ed|ing)|too (?:slow|fast|big|small|costly|expensive)|"
    r"so\b(?= \w+ \w+))",
    re.I,
)
# "Postgres instead of Redis", "write-through rather than a 60 s TTL", "over a TTL"
ALTERNATIVE = re.compile(
    r"\b(?:instead of|rather than|in favou?r of|over)\s+(?P<option>[^,.;:()]{2,60})", re.I
)
CONSIDERED = re.compile(
    r"\b(?:considered|weighed|looked at|tried|evaluated)\s+(?P<option>[^,.;:()]{2,60})", re.I
)
NUMBER_WITH_UNIT = re.compile(
    r"(?<![\w.])(?:~|≈)?\d[\d,]*(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds?|minutes?|min|"
    r"hours?|h|days?|req/s|rps|qps|ops/s|jobs/s|tps|%|x|×|kb|mb|gb|tb|k|m|b|tokens?|"
    r"requests?|jobs?|users?|rows?|nodes?|cores?|threads?|lines?)(?![\w])",
    re.I,
)
_MARKUP = re.compile(r"\*\*|__|^#+\s*|^[-*]\s+|^\d+\.\s+", re.M)
_WORD = re.compile(r"[a-z0-9][a-z0-9_./-]*", re.I)
_STOPWORDS_TEXT = (
    "a an the and or of to in on for with at by from as is are was were be been it its this "
    "that these those we our you your i they them he she not no yes do does did so if then "
    "than but into over under up down out about after before use used using will would can "
    "could should may might must have has had just also only more most less very all any each "
    "which what when where who why how there here"
)
STOPWORDS = frozenset(_STOPWORDS_TEXT.split(" "))


def split(text: str) -> list[str]:
    """The sentences of ``text``, markdown emphasis and list markers removed, blanks dropped."""
    plain = _MARKUP.sub("", text or "")
    return [s.strip(" \t-*") for s in SENTENCE.split(plain) if len(s.strip(" \t-*")) > 1]


def words(text: str) -> set[str]:
    """The content words of ``text``, lower-cased (stopwords and one-letter words left out)."""
    return {
        w.lower().strip("./-")
        for w in _WORD.findall(text or "")
        if len(w) > 1 and w.lower() not in STOPWORDS
    }


def numbers(text: str) -> list[str]:
    """Numbers with their units, as written (``"2,140 jobs/s"``, ``"60 s"``, ``"38 ms"``)."""
    return [m.group(0).strip() for m in NUMBER_WITH_UNIT.finditer(text or "")]


def unique(items: Iterable[T], key: Callable[[T], str] | None = None, *, drop: str = "") -> list[T]:
    """``items`` without repeats (compared by ``key``, case-insensitive by default), first kept.

    ``drop`` names one more value to leave out (e.g. the text already used elsewhere).
    """
    seen = {drop.lower()} if drop else set()
    kept: list[T] = []
    for item in items:
        mark = key(item) if key is not None else str(item).lower()
        if mark not in seen:
            seen.add(mark)
            kept.append(item)
    return kept
