"""How prompt recall reads each embedding model's cosines: its scale, calibrated per model.

A cosine means something different for each model: where its unrelated texts sit (the
floor), whether meaning alone may carry a memory and how far above the bar, where a one-line
pointer starts, how far a Korean prompt's words must be above the bar, and the cosine's weight
in the candidates' ranking. :data:`SCALES` holds the figures read off the calibration half
of ``python -m benchmarks recall`` (the held-out half reports them); an unknown model is
read as plain cosines, its words always needed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..search.options import DEFAULT, Options


@dataclass(frozen=True)
class Scale:
    """How to read one embedding model's cosines.

    ``floor``: the cosine its unrelated texts sit at (relevance = (cosine - floor) / (1 -
    floor)); ``alone``: how far above the bar meaning alone suffices, without the prompt's
    words (None: never — MiniLM puts any Korean text near any other); ``alone_latin``: the
    same for a prompt with no Hangul (None: as ``alone``).
    """

    floor: float = 0.0
    alone: float | None = None
    alone_latin: float | None = None  # the same for a prompt with no Korean in it
    # Where a first candidate the rules did not pass gets a one-line pointer, from the bar
    # (-0.1: 0.1 under it; None: never, as for a script the model cannot read), for Korean
    # prompts and the others.
    pointer: float | None = None
    pointer_latin: float | None = None
    # How far above the bar a memory must be for a Korean prompt's words to carry it (the
    # strong and both rules): hard negatives share a review's or a mail's words.
    words: float = 0.0
    # How far above the bar a memory the prompt's words and meaning both carry must be for its
    # full chain, on a prompt without Korean; between the bar and that it gets a pointer
    # (:func:`.recall_judge.verdict`).
    chain_latin: float = 0.0
    # The cosine's weight in the candidates' ranking (None: search's, retrieval.VECTOR_WEIGHT).
    ranking_weight: float | None = None
    # BM25's weight in it (None: search's, 1); 0 ranks by meaning alone while there are vectors.
    keyword_weight: float | None = None


# Read off the calibration half of `python -m benchmarks recall` (the held-out half reports).
SCALES = {
    # Korean prompts alone 0.3 above the bar, English ones 0.1 (calibration: recall 0.682 →
    # 0.667, silence 0.963 → 0.977, the half's silence target met); Korean ones 0.35 since the
    # tiers (between 0.3 and 0.35 a pointer: calibration chains on unrelated prompts 0.032 →
    # 0.011, pointers 0.032 → 0.053, reach 0.878 → 0.866).
    # Pointers on Korean prompts 0.25 above the bar (the tiers, reading Korean prompts for
    # MiniLM; calibration: reach 0.79 → 0.85, unrelated prompts pointed at 0 → 0.032; 0.15
    # above it pointed at 0.22 of them); on English ones not measured yet.
    # Words carry a Korean prompt's memory only 0.2 above the bar (calibration: chains on
    # unrelated prompts 0.074 → 0.032, reach 0.878 kept; 0.25 and 0.3 no fewer, reach lower).
    "multilingual-e5-small-q4": Scale(
        floor=0.712, alone=0.35, alone_latin=0.1, pointer=0.25, words=0.2
    ),
    # English prompts only: on Korean, MiniLM's cosines say little (calibration: 0.566 → 0.641
    # recall, silence 0.983 kept; 0.1 above the bar drops silence to 0.963).
    # Pointers 0.05 above the bar on English prompts (`benchmarks recall`'s offset sweep,
    # calibration: unrelated prompts pointed at 0.059 LoCoMo, 0.080 Stack Overflow; at the bar
    # 0.138 / 0.114, 0.15 under it 0.577 / 0.420).
    # A full chain on the words-and-meaning rule 0.1 above the bar, a pointer under that
    # (calibration: chains on unrelated prompts 0.008 → 0.004 LoCoMo, 0.045 → 0.023 Stack
    # Overflow; pointers 0.059 → 0.063, 0.080 → 0.091; reach kept).
    "all-MiniLM-L6-v2": Scale(alone_latin=0.15, pointer_latin=0.05, chain_latin=0.1),
    # The same for all-mpnet-base-v2 (calibration: recall 0.561 → 0.641, silence 0.983 →
    # 0.974; 0.1 above the bar drops silence to 0.960). Held-out 0.614 → 0.650, silence 0.978.
    # Pointers 0.05 above the bar on English prompts, as MiniLM's (the offset sweep,
    # calibration: unrelated prompts pointed at 0.067 LoCoMo, 0.057 Stack Overflow; at the bar
    # 0.138 / 0.091; held-out reach 0.684 → 0.746 / 0.762 → 0.825).
    # Its candidates ranked with 3 × cosine (`benchmarks recall`'s rankings compared,
    # calibration reach 0.733 → 0.741 LoCoMo, 0.720 → 0.733 Stack Overflow; held-out 0.746 →
    # 0.763, 0.825 → 0.841; unrelated chains and held-out pointers unchanged). Not MiniLM's:
    # its calibration reach did not move, its held-out Stack Overflow reach fell.
    "all-mpnet-base-v2": Scale(alone_latin=0.15, pointer_latin=0.05, ranking_weight=3.0),
    # EmbeddingGemma-300M reads Korean and English; its cosines as they are (the bar at 0.5).
    # Chosen on the calibration halves of `python -m benchmarks recall` (offline, over every
    # labelled prompt's candidates, through `recall_judge.tiers`): candidates ranked by meaning
    # alone (BM25 beside it put the meant LoCoMo observation among the first two for 0.716
    # of calibration questions, meaning alone 0.810; Stack Overflow 0.867 → 0.960, KLUE 0.951
    # → 1.0). English: a chain on meaning alone 0.1 above the bar, with the prompt's words
    # 0.05 above it (a near pointer under that), a pointer from the bar (calibration: reach
    # 0.819 LoCoMo, 0.773 Stack Overflow; unrelated chains 0 / 0, pointers 0.004 / 0.068; a
    # pointer 0.02 under the bar pointed at 0.125 of unrelated Stack Overflow prompts).
    # Korean: meaning alone 0.15 above the bar, words 0.1 above it, a pointer 0.04 above it
    # (calibration: reach 0.976, unrelated chains 0.011, pointers 0.084; at the bar 0.126).
    "embeddinggemma-300m": Scale(
        alone=0.15,
        alone_latin=0.1,
        pointer=0.04,
        pointer_latin=0.0,
        words=0.1,
        chain_latin=0.05,
        keyword_weight=0.0,
    ),
}


def reads_korean(model: str) -> bool:
    """Whether ``model``'s cosines say anything about a Korean prompt (its scale judges one
    on meaning alone or points at one); MiniLM and mpnet put any Korean text near any other."""
    read = scale(model)
    return read.alone is not None or read.pointer is not None


def scale(model: str) -> Scale:
    """How ``model``'s cosines are read (an unknown model: as cosines, words always needed)."""
    return SCALES.get(model, Scale())


def ranking_of(model: str, base: Options = DEFAULT) -> Options:
    """How prompt recall ranks its candidates with ``model``'s vectors: as ``base`` (search's
    ranking) does, with the model's own cosine and BM25 weights when its scale sets them
    (``Scale.ranking_weight``, ``Scale.keyword_weight``)."""
    read = scale(model)
    if read.ranking_weight is not None:
        base = replace(base, vector_weight=read.ranking_weight)
    if read.keyword_weight is not None:
        base = replace(base, keyword_weight=read.keyword_weight)
    return base


def relevance(cosine: float, model: str) -> float:
    """A cosine on the 0–1 scale ``relevance_bar`` is set on, for ``model``."""
    floor = scale(model).floor
    return (cosine - floor) / (1.0 - floor)
