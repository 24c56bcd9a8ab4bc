"""The uncased BERT WordPiece tokenizer in Python, for models llama.cpp cannot run (MPNet).

The steps of the reference ``BertTokenizer`` (``do_lower_case``, ``tokenize_chinese_chars``):
drop control characters, put spaces around CJK ideographs, lower-case and strip accents (NFD,
combining marks removed), split on whitespace and punctuation, then greedy longest-match
WordPiece with ``##`` continuations; a word of more than 100 characters, or one that has no
split, is ``[UNK]``. Standard library only.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from .errors import EmbeddingError

MAX_WORD_CHARS = 100
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _is_punctuation(char: str) -> bool:
    # ASCII symbols count as punctuation too ("$", "^", "`"), as in the reference tokenizer.
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_dropped(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return ord(char) in (0, 0xFFFD) or unicodedata.category(char).startswith("C")


def basic_words(text: str) -> list[str]:
    """Lower-cased, accent-free words and punctuation marks, in order."""
    spaced = "".join(
        f" {char} " if _is_cjk(char) else char for char in text if not _is_dropped(char)
    )
    folded = unicodedata.normalize("NFD", spaced.lower())
    plain = "".join(char for char in folded if unicodedata.category(char) != "Mn")
    words: list[str] = []
    for chunk in plain.split():
        start = 0
        for i, char in enumerate(chunk):
            if _is_punctuation(char):
                if i > start:
                    words.append(chunk[start:i])
                words.append(char)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


class WordPiece:
    """A vocabulary (token → id) and the tokenizer over it."""

    def __init__(self, tokens: Iterable[str], *, unknown: str = "[UNK]") -> None:
        self.vocab: dict[str, int] = {}
        for i, token in enumerate(tokens):
            self.vocab.setdefault(token, i)
        if unknown not in self.vocab:
            raise EmbeddingError(f"the vocabulary has no {unknown} token")
        self.unknown = self.vocab[unknown]

    def pieces(self, word: str) -> list[int]:
        """The ids of one word's pieces (``[UNK]`` alone when it cannot be split)."""
        if len(word) > MAX_WORD_CHARS:
            return [self.unknown]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    ids.append(found)
                    break
                end -= 1
            else:
                return [self.unknown]
            start = end
        return ids

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``'s pieces, without special tokens."""
        return [i for word in basic_words(text) for i in self.pieces(word)]
