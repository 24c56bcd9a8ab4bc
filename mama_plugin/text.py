"""The one reading of text: words, stopwords, a stemmer, sentences and their cues.

Standard library only. Words are split where SQLite FTS5's ``unicode61`` tokenizer (the
memory index's) splits them — runs of letters and digits; underscores and punctuation
separate — so a word read here is a word the index holds. Every script-specific rule lives
here. The sentence cues are cues, not understanding: they pick sentences that state a reason,
an alternative, a risk or a next step, and the numbers that make a claim specific.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

# Letters and digits, as unicode61 (checked against it with apsw); unlike it, a combining mark
# (decomposed text) ends a word here, and case is folded by str.casefold ("ß" → "ss").
_WORD = re.compile(r"[^\W_]+")
# For now the sentence cues compare only the ASCII letters and digits of a word ("JWT를" reads
# as "jwt"); other scripts are not compared there yet.
_ASCII_WORD = re.compile(r"[a-z0-9]+", re.I)

# Function words that match nearly every memory and only add noise to BM25 or to a comparison.
STOPWORDS = frozenset(
    (
        "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at",
        "be", "because", "been", "before", "being", "between", "both", "but", "by", "can",
        "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from",
        "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
        "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more",
        "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or",
        "other", "our", "ours", "out", "over", "own", "same", "she", "should", "so", "some",
        "such", "than", "that", "the", "their", "theirs", "them", "then", "there", "these",
        "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was",
        "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
        "with", "would", "you", "your", "yours",
    )
)  # fmt: skip
# Sentence comparisons also skip the words a decision's phrasing adds ("Use PostgreSQL for …").
# Prompt recall and BM25 keep them: its bar is calibrated with them (python -m benchmarks hooks).
PHRASING = frozenset(("also", "less", "may", "might", "must", "use", "used", "using", "yes"))

# Korean writes particles and endings onto the word ("캐시는", "TTL로", "바꿨지"): a Korean word
# is matched by its stem (one particle or ending removed) as a prefix in the full-text index,
# and by its syllable pairs (bigrams) when compared with a memory's text, so "가격 캐시는" finds
# "가격 캐시를 TTL로 바꿨다" and a compound ("가격캐시") still shares pairs with its parts.
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")
KOREAN_SUFFIXES = tuple(
    sorted(
        {
            "은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과", "도", "만", "랑",
            "으로", "에서", "에게", "한테", "까지", "부터", "처럼", "보다", "라는", "라고",
            "이나", "이랑", "에는", "에도", "으로는", "에서는", "에서도", "이라는", "이라고",
            "하다", "했다", "했지", "했어", "했나", "했던", "하자", "해줘", "하는", "하기",
            "하고", "한다", "해서", "하면", "해야", "합니다", "했습니다", "해요", "했어요",
            "할까", "할지", "했는지", "하려면", "되다", "됐다", "됐지", "되는", "된", "할",
            "들", "들은", "들이", "들을", "들의", "들도", "들과", "들에게",
        },
        key=len,
        reverse=True,
    )
)  # fmt: skip
# Korean function words and the question words of a prompt, which say nothing about its subject.
KOREAN_STOPWORDS = frozenset(
    (
        "왜", "뭐", "뭘", "무엇", "어떻게", "어떤", "언제", "어디", "누가", "이거", "그거", "저거",
        "이것", "그것", "저것", "이제", "지금", "그냥", "좀", "더", "또", "및", "등", "수", "것",
        "때", "우리", "저희", "제가", "내가", "너무", "정말", "진짜", "그리고", "하지만", "그래서",
        "알려줘", "알려주세요", "해줘", "해주세요", "하자", "있어", "있나", "있는", "없어", "없는",
        "같은", "같이", "대해", "대한", "위해", "위한", "어제", "오늘", "내일", "방법",
        "매우", "아주", "많이", "다시", "모두", "모든", "잘", "다", "안", "못", "이런", "그런",
    )
)  # fmt: skip
MIN_TERM = 3  # an ASCII word shorter than this ("db", "ok") matches too much by accident
PREFIX = "*"  # a search term ending in it matches every indexed word it begins

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(*])|\n+")
# A sentence about what comes next or remains (the draft extractor's cue). The checkpoint
# wants only an explicit next step (NEXT_STEP) and keeps what remains apart (REMAINS).
NEXT = re.compile(
    r"^(next( step)?s?\b|then\b|todo\b|still (need|to)\b|remaining\b|follow[- ]up\b)", re.I
)
# "Next: …", "Next step: …", "Next, I'll …", "The next step is to …", "TODO: …", "Follow-up: …"
# "Up next: …", "Going forward, the first thing to do is …"; never advice in general ("The next
# step is usually to profile it").
NEXT_STEP = re.compile(
    r"^(?:(?:the |my |our |up )?next(?: steps?| up| task)?(?:\s*[:,—–-]\s*|\s+(?:is|would be"
    r"|will be)\s+(?!usually|typically|generally|often|normally|always)(?:to\s+)?"
    r"|\s+(?=(?:I|we)\b))|to-?do\s*[:—–-]\s*|follow[- ]up\s*[:—–-]\s*|then\s*:\s*"
    r"|(?:going forward|from here on|from here)\s*,?\s*(?:the first thing to do is\s+)?)"
    r"(?:(?:I|we)(?:'ll| will| should| would| can)?\s+)?",
    re.I,
)
# "Remaining: …", "Still to do: …", "Left to do: …", "Still missing: …"
REMAINS = re.compile(
    r"^(?:remaining|what remains|still (?:to do|open|missing|left|needed|need(?:s)? to)|"
    r"left to do|open (?:issues?|questions?))\b\s*(?:is\s+|are\s+)?[:,—–-]?\s*",
    re.I,
)
TENSION = re.compile(
    r"\b(but|however|risk|concern|not yet|unresolved|unsolved|trade-?off|fail(?:s|ed|ing|ures?)?|"
    r"broke|broken|breaks|did(?: not|n't) (?:work|pass|help)|does(?: not|n't) (?:work|pass)|"
    r"not working|regress(?:ed|es|ions?)?|exit(?:ed)?(?: with)?(?: code| status)? [1-9]\d*|"
    r"timed out|times out|crash(?:ed|es|ing)?|flaky|traceback|downside|caveat|"
    r"unbounded|leak(?:s|ing)?|spof|single point of failure|problem|cannot|can't|"
    r"(?:has|have|there (?:is|are)) no|unexplained|block(?:s|ed|ing|er)|"
    r"still (?:needs?|fails?|failing|broken|missing|open|red))\b",
    re.I,
)
# A failure reported as dealt with ("the failing test now passes") is not unresolved, unless
# the sentence also says something still is ("fixed the crash, but the cache still leaks").
RESOLVED = re.compile(
    r"\b(now pass(?:es)?|pass(?:es)? (?:now|again)|fixed|resolved|solved|no longer \w+|"
    r"is green|are green|(?:is|are) gone|works? now|now works?|"
    r"all \d* ?(?:tests? )?pass(?:ed)?)\b",
    re.I,
)
_STILL = re.compile(r"\b(but|however|still|not yet|yet)\b", re.I)
# "We considered a 5 s TTL rather than write-through, but it would cut the hit rate": the
# downside of an alternative weighed and set aside.
_WEIGHED = re.compile(
    r"\b(?:considered|weighed|ruled out|rejected|set aside)\b.*\b(?:would|could)\b", re.I
)
# What a "remaining" sentence says is missing, which makes it a concern too.
_OPEN = re.compile(r"\b(no|not|without|missing|yet|unbounded|never)\b", re.I)
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


def tokens(text: str, *, ascii_only: bool = False) -> list[str]:
    """Every word of ``text`` in order, case-folded, split as the full-text index splits.

    ``ascii_only`` keeps only the ASCII letters and digits, each run of them a word.
    """
    pattern = _ASCII_WORD if ascii_only else _WORD
    return [w.casefold() for w in pattern.findall(text or "")]


def content_words(text: str, *, min_length: int = 1, ascii_only: bool = False) -> list[str]:
    """The distinct words of ``text`` worth matching, in order: no stopwords, none shorter
    than ``min_length`` characters."""
    kept = (w for w in tokens(text, ascii_only=ascii_only) if len(w) >= min_length)
    return list(dict.fromkeys(w for w in kept if w not in STOPWORDS))


def stem(word: str) -> str:
    """``word`` without a common English suffix (-ing, -ies, -es, -ed, -s), keeping 3 letters."""
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def estimate_tokens(text: str) -> int:
    """Tokens a model will count for ``text``, estimated as one per four characters."""
    return math.ceil(len(text) / 4)


def split(text: str) -> list[str]:
    """The sentences of ``text``, markdown emphasis and list markers removed, blanks dropped."""
    plain = _MARKUP.sub("", text or "")
    return [s.strip(" \t-*") for s in SENTENCE.split(plain) if len(s.strip(" \t-*")) > 1]


def next_step(sentence: str) -> str:
    """The step an explicit next-step sentence names, its cue removed ("" when it is not one).

    "Next: cap _entries at 1,000." → "cap _entries at 1,000"; a sentence about what remains
    ("Remaining: …") or a question is not a next step.
    """
    cue = NEXT_STEP.match(sentence.strip())
    if cue is None or sentence.rstrip().endswith("?"):
        return ""
    step = strip_cue(sentence.strip()[cue.end() :]).rstrip(".")
    return step if len(step) > 1 else ""


def strip_cue(step: str) -> str:
    """``step`` without a leading "Next:"/"Next step:"/"Remaining:" cue (older checkpoints)."""
    text = step.strip()
    for _ in range(3):  # "Next step: Next: …"
        found = NEXT_STEP.match(text) or REMAINS.match(text)
        if not found or found.end() >= len(text):
            break
        text = text[found.end() :].strip()
    return text


def remains(sentence: str) -> str:
    """What a "Remaining: …" sentence says is left, its cue removed ("" when it is not one)."""
    cue = REMAINS.match(sentence.strip())
    if cue is None:
        return ""
    rest = sentence.strip()[cue.end() :].strip().rstrip(".")
    return rest if len(rest) > 1 else ""


def tension(sentence: str) -> bool:
    """Whether a sentence states something unresolved: a failure, a risk, a catch, a gap.

    A question is not; nor is a failure reported as fixed, unless something still is open;
    nor the cost of an option considered and set aside.
    "Remaining: X has no bound yet" is (what is missing); "Remaining: write the docs" is not.
    """
    text = sentence.strip()
    if not text or text.endswith("?") or NEXT_STEP.match(text):
        return False
    if REMAINS.match(text):
        return bool(_OPEN.search(text[REMAINS.match(text).end() :]))  # type: ignore[union-attr]
    if not TENSION.search(text):
        return False
    if _WEIGHED.search(text):  # an option set aside, told with its cost: not an open problem
        return False
    return not (RESOLVED.search(text) and not _STILL.search(text))


_LINKED = re.compile(r"^(?:but|however|yet|still|though|although)\s*,?\s+(?=\w)", re.I)


def _standing(sentence: str) -> str:
    """A concern as a sentence of its own: "But the replica lags 2 s." → "The replica lags 2 s."
    (told under Unresolved, away from the sentence it answered)."""
    rest = _LINKED.sub("", sentence, count=1)
    return rest[:1].upper() + rest[1:] if rest != sentence else sentence


# "That is …", "That's …", "It blocks …": a pronoun as the subject, not "This file has …".
_OPENS_ON_PRONOUN = re.compile(
    r"^(?:that|this|it)(?:'s\b|\s+(?:is|was|will|would|means|\w+s)\b)", re.I
)


def pointed(sentences: list[str], i: int) -> str:
    """A concern that can be told alone: one whose subject is what the sentence before it
    said ("That is a real downside for conversion.", "That blocks the smoke test.") is told
    after that sentence."""
    sentence = _standing(sentences[i])
    if i == 0 or not _OPENS_ON_PRONOUN.match(sentence):
        return sentence
    return f"{sentences[i - 1].rstrip(' .')}: {sentence[:1].lower()}{sentence[1:]}"


def words(text: str) -> set[str]:
    """The content words a sentence is compared by (two letters or more, ASCII for now)."""
    return set(content_words(text, min_length=2, ascii_only=True)) - PHRASING


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


def hangul(word: str) -> bool:
    """Whether ``word`` has a Hangul syllable."""
    return bool(_HANGUL.search(word))


def korean_stem(word: str) -> str:
    """``word`` without one trailing particle or ending ("캐시는" → "캐시", "ttl로" → "ttl").

    Two syllables stay at least; a Latin or digit head ("ttl") may stand alone.
    """
    for suffix in KOREAN_SUFFIXES:
        if word.endswith(suffix):
            rest = word[: -len(suffix)]
            if len(rest) >= 2 or (rest and not hangul(rest[-1])):
                return rest
    return word


def search_terms(text: str, *, min_length: int = 1) -> list[str]:
    """The distinct terms of ``text`` a search or recall matches, in order.

    A word with no Hangul: itself, unless a stopword or shorter than ``min_length``. A Korean
    word: its stem (:func:`korean_stem`) followed by ``PREFIX``, so the index matches every
    form of it, unless the stem is a Korean stopword or a single syllable.
    """
    out: list[str] = []
    for word in tokens(text):
        if word in STOPWORDS or word in KOREAN_STOPWORDS:
            continue
        if hangul(word):
            root = korean_stem(word)
            if root in KOREAN_STOPWORDS or len(root) < 2:
                continue
            term = root + PREFIX
        elif len(word) >= min_length:
            term = word
        else:
            continue
        if term not in out:
            out.append(term)
    return out


def recall_terms(terms: list[str]) -> list[str]:
    """Of a prompt's :func:`search_terms`, those prompt-time recall judges it on: no ASCII word
    shorter than ``MIN_TERM``."""
    return [t for t in terms if t.endswith(PREFIX) or len(t) >= MIN_TERM]


def term_keys(term: str) -> set[str]:
    """What a term is compared by: its English stem, or a Korean stem's syllable pairs."""
    word = term.removesuffix(PREFIX)
    if not hangul(word):
        return {stem(word)}
    pairs = {run[i : i + 2] for run in _HANGUL_RUN.findall(word) for i in range(len(run) - 1)}
    latin = _HANGUL_RUN.sub(" ", word).split()
    return pairs | {stem(w) for w in latin if len(w) >= MIN_TERM} or {word}


def text_keys(text: str) -> set[str]:
    """Every key a memory's text offers: English stems and Korean syllable pairs."""
    keys: set[str] = set()
    for word in tokens(text):
        if hangul(word):
            keys |= {r[i : i + 2] for r in _HANGUL_RUN.findall(word) for i in range(len(r) - 1)}
            keys |= {stem(w) for w in _HANGUL_RUN.sub(" ", word).split() if len(w) >= MIN_TERM}
        elif len(word) >= MIN_TERM and word not in STOPWORDS:
            keys.add(stem(word))
    return keys


def matched_terms(terms: Iterable[str], keys: set[str]) -> list[str]:
    """The terms most of whose keys (all, for an English word) are among ``keys``."""
    found: list[str] = []
    for term in terms:
        mine = term_keys(term)
        if mine and len(mine & keys) * 2 >= len(mine) + (1 if len(mine) == 1 else 0):
            found.append(term)
    return found
