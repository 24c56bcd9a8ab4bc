"""Prompt recall's judge: each candidate's tier, a full chain, a one-line pointer, or nothing.

A candidate is judged on absolute evidence (:class:`Evidence`): its cosine on the model's
scale (:mod:`.scales`) against ``relevance_bar``, and the share of the prompt's term
weight it holds (:func:`.recall.weights`). The rules (:func:`verdict`):

- meaning alone, far enough above the bar for the model and the prompt's script
  (``Scale.alone``), tells the memory's **chain**;
- with a Korean prompt, its words carry a memory only ``Scale.words`` above the bar;
- most of the weight (``STRONG_WEIGHT``) carries a memory ``STRONG_BAND`` under the bar;
- otherwise a memory must be at the bar *and* hold ``WEIGHT_BAR`` of the weight; on a prompt
  without Korean, its chain needs ``Scale.chain_latin`` more on meaning, and between the bar
  and that it is **near**: a one-line pointer, not a chain (near-topic prompts — "convert a
  date in Python?" against a decision on parsing dates — sit just over the bar), unless it
  has evolved (``Evidence.evolved``: replaced, failed, or it replaced another decision), whose
  chain tells what a pointer cannot — why the old way failed and what stands now;
- with no vectors (the model still loading, or none): the weight and ``MIN_MATCHED`` terms.

:func:`tiers` applies them to a prompt's ranked candidates: the chains of those told in full;
when there is none, pointers for the near ones, and for the first ``POINTER_DEPTH`` candidates
close on meaning alone (``Scale.pointer``) or the first one standing ``STANDOUT`` above every
other. Every figure is read off the calibration halves of ``python -m benchmarks recall``
(README, "Prompt recall"); the benchmark reads each prompt's tier through :func:`tiers` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...embeddings.cards import reads_korean, scale
from ...text import recall_terms, search_terms

WEIGHT_BAR = 0.4  # the share of the prompt's term weight a memory must hold
# Most of the weight (STRONG_WEIGHT) lets a memory pass STRONG_BAND under the bar: a decision
# embedded as its whole story sits lower in cosine than its own words say (MiniLM).
STRONG_WEIGHT = 0.75
STRONG_BAND = 0.2
MIN_MATCHED = 2  # with no vectors, at least this many of the prompt's terms
MIN_TERMS = 2  # fewer terms ("yes", "go on", "ok do it") never recall anything
# A memory's short views (topic, decision line) against a prompt of fewer terms say little:
# "run the tests" sits near the topic "testing" on one word. Nor does a pointer go to one.
VIEW_TERMS = 3
MAX_HITS = 3
MAX_POINTERS = 2  # one-line pointers when no memory is clearly related
POINTER_DEPTH = 2  # only the first candidates of the ranking get one
# A name the prompt gives (FastAPI, max_entries, JWT) that this many memories of the store hold
# at most points at the one holding it (prompt.rare_names). Chosen on the calibration halves:
# at 1, `recall --quick` reach 0.777 → 0.784 with every group's unrelated prompts at ≤ 10
# tokens (the Stack Overflow tech group 6.1 → 8.4; at 2 it reached 0.791 but tech cost 12.3),
# `adr` 0.689 → 0.703 (unrelated 0 → 1.6 tokens). Held-out: recall 0.827 → 0.831 (tech 6.8 →
# 8.7 tokens), adr 0.760 → 0.772 (first sentence 0.579 → 0.608; unrelated 0 → 2.2 tokens).
RARE_DF = 1
# The rule holds up to relevance_bar's default: a bar raised above it asks MAMA to speak only
# when meaning is sure, and a rare name is no reading of meaning.
NAMED_BAR_MAX = 0.5
# A first candidate at the bar that stands this far above every other candidate on meaning
# gets a pointer too: a paraphrase in other words sits at the bar, well apart from the rest,
# where unrelated prompts' first candidates sit among their neighbours (the tiers,
# calibration: no change in English; Korean reach 0.854 → 0.878 at the same 0.032 of
# unrelated prompts pointed at; held-out Stack Overflow reach 0.762 → 0.794).
STANDOUT = 0.2

Verdict = Literal["chain", "near"] | None


@dataclass(frozen=True)
class Evidence:
    """What one candidate is judged on."""

    relevant: float | None  # its cosine on the model's scale (None: no vectors)
    weighted: float  # the share of the prompt's term weight it holds
    matched: int  # how many of the prompt's terms it holds
    # Its decision was replaced, failed or partly failed, or replaced another: the chain tells
    # a story (what failed and why, what stands now) its one line cannot.
    evolved: bool = False
    # It holds a name the prompt gives (a library, a product, an identifier) that few memories
    # hold: evidence on its own, for a pointer (:func:`~.prompt.rare_names`).
    named: bool = False


def can_recall(prompt: str) -> bool:
    """Whether ``prompt`` has the terms recall needs (``MIN_TERMS``): "hello", "go on" or "yes"
    recall nothing, so their hook answers at once, waiting for neither the store nor the model."""
    return len(recall_terms(search_terms(prompt))) >= MIN_TERMS


def verdict(
    relevant: float | None,
    weighted: float,
    matched: int,
    *,
    bar: float,
    model: str = "",
    korean: bool = True,
    evolved: bool = False,
) -> Verdict:
    """``"chain"`` (clearly related), ``"near"`` (a pointer's worth) or None, by the rules of
    the module docstring. ``korean``: the prompt has Hangul in it; ``evolved``:
    :attr:`Evidence.evolved`."""
    if relevant is None:
        return "chain" if matched >= MIN_MATCHED and weighted >= WEIGHT_BAR else None
    read = scale(model)
    alone = read.alone if korean or read.alone_latin is None else read.alone_latin
    if alone is not None and relevant >= bar + alone:
        return "chain"
    if korean and read.words:
        return "chain" if relevant >= bar + read.words and weighted >= WEIGHT_BAR else None
    if relevant >= bar - STRONG_BAND and weighted >= STRONG_WEIGHT:
        return "chain"
    if relevant >= bar and weighted >= WEIGHT_BAR:
        told = korean or evolved or relevant >= bar + read.chain_latin
        return "chain" if told else "near"
    return None


def judge(relevant: float | None, weighted: float, matched: int, **rules: Any) -> bool:
    """Whether a memory is clearly related to a prompt: its full chain is told. ``rules``:
    :func:`verdict`'s keywords."""
    return verdict(relevant, weighted, matched, **rules) == "chain"


def close_enough(
    relevant: float | None,
    *,
    bar: float,
    model: str,
    korean: bool,
    offset: float | None = None,
) -> bool:
    """Whether a first candidate the rules did not pass is close enough for a pointer: on
    meaning alone, at the bar moved by the model's ``pointer`` (``offset`` replaces it: the
    benchmark's sweep; never without vectors, nor for a script the model cannot read)."""
    if relevant is None or (korean and not reads_korean(model)):
        return False
    read = scale(model)
    if offset is None:
        offset = read.pointer if korean or read.pointer_latin is None else read.pointer_latin
    return offset is not None and relevant >= bar + offset


def stands_out(relevances: Sequence[float | None], *, bar: float, model: str, korean: bool) -> bool:
    """Whether the first of the candidates' ``relevances`` (in ranking order) is at the bar and
    ``STANDOUT`` above every other one: close enough for a pointer (never without vectors,
    nor for a script the model cannot read)."""
    if not relevances or relevances[0] is None or (korean and not reads_korean(model)):
        return False
    others = [r for r in relevances[1:] if r is not None]
    return relevances[0] >= bar and relevances[0] - max(others, default=0.0) >= STANDOUT


@dataclass(frozen=True)
class Tiers:
    """A prompt's candidates by tier (indices, in ranking order)."""

    chains: list[int]  # told in full
    near: list[int]  # passed the rules just over the bar: a pointer each, at any rank
    close: list[int]  # close on meaning alone, or standing out: a pointer, first two only

    def pointers(self, *, told_before: bool = False) -> list[int]:
        """The pointers' candidates, in ranking order, when no chain is told: the near ones,
        and the close ones unless the session was told a chain of this prompt's before
        (``told_before``: what is clearly related is in the conversation already)."""
        return sorted(self.near if told_before else [*self.near, *self.close])


def tiers(
    candidates: Sequence[Evidence],
    *,
    terms: int,
    bar: float,
    model: str,
    korean: bool,
    offset: float | None = None,
) -> Tiers:
    """Each candidate's tier (the caller keeps ``MAX_HITS`` chains and ``MAX_POINTERS``
    pointers after leaving out what a session was shown). A near memory is a chain the rules
    passed, told in one line, so it is pointed at wherever it ranks; a pointer on meaning alone
    needs the first ``POINTER_DEPTH`` candidates. No pointer for a prompt of fewer than
    ``VIEW_TERMS`` terms (calibration: pointing at two-term prompts' near memories took the
    unrelated Stack Overflow prompts pointed at from 0.091 to 0.102, reach kept). ``terms``:
    how many terms the prompt is judged on; ``offset``: :func:`close_enough`'s."""
    if terms < MIN_TERMS:
        return Tiers([], [], [])
    verdicts = [
        verdict(
            c.relevant,
            c.weighted,
            c.matched,
            bar=bar,
            model=model,
            korean=korean,
            evolved=c.evolved,
        )
        for c in candidates
    ]
    chains = [i for i, v in enumerate(verdicts) if v == "chain"]
    if terms < VIEW_TERMS:
        return Tiers(chains, [], [])
    near = [i for i, v in enumerate(verdicts) if v == "near"]
    apart = stands_out([c.relevant for c in candidates], bar=bar, model=model, korean=korean)
    close = [
        i
        for i, (c, v) in enumerate(zip(candidates, verdicts, strict=True))
        if i < POINTER_DEPTH
        and v is None
        and (
            close_enough(c.relevant, bar=bar, model=model, korean=korean, offset=offset)
            or (i == 0 and apart)
            or (c.named and bar <= NAMED_BAR_MAX)
        )
    ]
    return Tiers(chains, near, close)
