"""Relationship words by meaning: each distinct word embedded once, synonyms by cosine.

A word is embedded as its spelling with spaces (``inspired_by`` → "inspired by") by the
store's embedding model; the vector is kept in ``text_vectors`` under that model's name, so a
word is embedded once per model and a search over the 50–100 distinct words of a store reads
them back rather than running the model (one word's vector when the word is new).

Raw cosines mean different things per model: multilingual-e5 puts every two relationship words
between 0.78 and 0.93, MiniLM unrelated English words near 0.23 and any two Korean words close.
So a score is read on the model's own scale, as recall reads prompts: the cosine above the
model's chance level (its mean cosine between the built-in words, which all mean different
things), ``(cosine − chance) / (1 − chance)``; a model that cannot read Korean scores a Korean
word 0. ``python -m benchmarks graph`` measures what each model finds (docs/architecture.md,
"Relationship words"). Read-only apart from the vector cache.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import ValidationError
from ...relationships import known_words, normalise
from ...storage import Store
from ...storage.relationship_words import RelationshipWords
from ...text import hangul

if TYPE_CHECKING:
    from ...embeddings.protocol import EmbeddingModel

SYNONYM_THRESHOLD = 0.75  # find_synonyms' default
SUGGEST_THRESHOLD = 0.85  # a new word this close to a canonical one is answered "did you mean"
EXPAND_THRESHOLD = 0.8  # a relationship query also matches words this close


@dataclass(frozen=True)
class Similar:
    """A word and its cosine similarity to the word asked about."""

    word: str
    score: float

    def as_dict(self) -> dict[str, object]:
        """Plain data for tool answers and ``--json``."""
        return {"word": self.word, "score": round(self.score, 3)}


def as_text(word: str) -> str:
    """The text a relationship word is embedded as: its words separated by spaces."""
    return word.replace("_", " ")


def checked_word(word: str) -> str:
    """The canonical spelling of ``word``; ValidationError (with the fix) when it has none."""
    try:
        return normalise(word)
    except ValueError as exc:
        raise ValidationError([str(exc)]) from None


class WordVectors:
    """Unit vectors of relationship words under one model, cached in the store, and their
    similarity on the model's own scale.

    Vectors found in ``text_vectors`` are read; missing ones are embedded in one batch and
    written back. Each instance also keeps what it read, for the passes that ask many times.
    """

    def __init__(self, store: Store, embedder: EmbeddingModel) -> None:
        from ...embeddings.cards import reads_korean

        self.store = store
        self.embedder = embedder
        self.reads_korean = reads_korean(embedder.name)
        self._kept: dict[str, list[float]] = {}
        self._chance: float | None = None

    def chance(self) -> float:
        """The model's mean cosine between the built-in words, which mean different things."""
        if self._chance is None:
            words = sorted(known_words())
            found = self.of(words)
            pairs = list(itertools.combinations(words, 2))
            mean = sum(cosine(found[a], found[b]) for a, b in pairs) / len(pairs)
            self._chance = min(mean, 0.99)
        return self._chance

    def similarity(self, a: str, b: str) -> float:
        """How close two words are in meaning, 0–1: the cosine above the model's chance level,
        ``(cosine − chance) / (1 − chance)`` (0 below it). A model that cannot read Korean
        (MiniLM, mpnet put any Korean text near any other) scores 0 for a Korean word."""
        if a == b:
            return 1.0
        if not self.reads_korean and (hangul(a) or hangul(b)):
            return 0.0
        kept = self._kept
        found = kept if a in kept and b in kept else self.of([a, b])
        base = self.chance()
        return max(0.0, (cosine(found[a], found[b]) - base) / (1.0 - base))

    def of(self, words: Iterable[str]) -> dict[str, list[float]]:
        """The vector of each word (embedding those never embedded by this model)."""
        wanted = [w for w in dict.fromkeys(words) if w not in self._kept]
        if wanted:
            model = self.embedder.name
            texts = {w: as_text(w) for w in wanted}
            stored = self.store.vectors.of_texts(model, list(texts.values()))
            missing = [w for w in wanted if texts[w] not in stored]
            if missing:
                fresh = self.embedder.embed([texts[w] for w in missing])
                made = [(texts[w], _unit(v)) for w, v in zip(missing, fresh, strict=True)]
                self.store.vectors.put_texts(model, made)
                stored.update(made)
            self._kept.update((w, _unit(stored[texts[w]])) for w in wanted)
        return {w: self._kept[w] for w in words}


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two unit vectors (of one length)."""
    return sum(map(operator.mul, a, b))


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def ranked(
    vectors: WordVectors, word: str, among: Iterable[str], threshold: float
) -> list[Similar]:
    """The words of ``among`` but ``word`` at or above ``threshold``, closest first."""
    if not 0.0 <= threshold <= 1.0:
        raise ValidationError([f"threshold must be between 0 and 1 (got {threshold!r})"])
    others = [w for w in dict.fromkeys(among) if w != word]
    vectors.of([word, *others])  # one batch for the words never embedded
    scores = [Similar(w, vectors.similarity(word, w)) for w in others]
    close = [s for s in scores if s.score >= threshold]
    return sorted(close, key=lambda s: (-s.score, s.word))


def find_synonyms(
    store: Store,
    embedder: EmbeddingModel,
    word: str,
    threshold: float = SYNONYM_THRESHOLD,
    *,
    vectors: WordVectors | None = None,
) -> list[Similar]:
    """The store's relationship words within ``threshold`` of ``word`` by meaning, closest first.

    ``word`` is normalised first and need not be used yet. Raises ValidationError for a word
    that normalises to nothing or a threshold outside 0–1.
    """
    word = checked_word(word)
    vectors = vectors or WordVectors(store, embedder)
    return ranked(vectors, word, RelationshipWords(store).words(), threshold)


def canonical_words(store: Store) -> list[str]:
    """The words that stand for themselves: recorded as canonical, or never tidied yet."""
    words = RelationshipWords(store)
    recorded = words.all()
    return [w for w in words.words() if w not in recorded or recorded[w].canonical == w]


def did_you_mean(
    store: Store,
    embedder: EmbeddingModel,
    word: str,
    threshold: float = SUGGEST_THRESHOLD,
) -> Similar | None:
    """The canonical word closest to ``word`` when it is within ``threshold``, else None."""
    word = checked_word(word)
    close = ranked(WordVectors(store, embedder), word, canonical_words(store), threshold)
    return close[0] if close else None


def expand(
    store: Store,
    embedder: EmbeddingModel | None,
    word: str,
    threshold: float = EXPAND_THRESHOLD,
) -> list[Similar]:
    """``word`` (score 1), the words recorded under the same canonical form, and — when a model
    is given — every word within ``threshold`` by meaning; the words a relationship query
    matches, closest first."""
    word = checked_word(word)
    recorded = RelationshipWords(store).all()
    head = recorded[word].canonical if word in recorded else word
    same = {w for w, r in recorded.items() if r.canonical == head} | {head}
    out = {word: 1.0} | {w: 1.0 for w in same}
    if embedder is not None:
        for s in find_synonyms(store, embedder, word, threshold):
            out.setdefault(s.word, s.score)
    return sorted((Similar(w, s) for w, s in out.items()), key=lambda s: (-s.score, s.word))


def new_word_hints(
    store: Store,
    embedder: EmbeddingModel,
    words: Iterable[str],
    threshold: float = SUGGEST_THRESHOLD,
) -> dict[str, Similar]:
    """For each word just used for the first time, the canonical word it probably means.

    Words used before, and the built-in ones, get no hint: they are part of the vocabulary.
    """
    from ...relationships import known_words

    table = RelationshipWords(store)
    fresh = [w for w in dict.fromkeys(words) if w not in known_words() and table.uses(w) <= 1]
    if not fresh:
        return {}
    vectors = WordVectors(store, embedder)
    heads = canonical_words(store)
    hints: dict[str, Similar] = {}
    for word in fresh:
        close = ranked(vectors, word, heads, threshold)
        if close:
            hints[word] = close[0]
    return hints


def hint_text(word: str, hint: Similar) -> str:
    """The "did you mean" line a tool answer carries for a new word."""
    return (
        f"New relationship `{word}`: did you mean `{hint.word}` ({hint.score:.2f})? Keep "
        f"`{word}` if it says something else; else `mama graph merge {word} {hint.word}` "
        "(the link keeps the word you wrote)."
    )
