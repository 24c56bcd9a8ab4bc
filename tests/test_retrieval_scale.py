"""Retrieval's score scales: BM25 over its best plus weighted cosine, or each list min-max."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mama_plugin.services.search.indexing import drain
from mama_plugin.services.search.options import DEFAULT
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.storage import Store
from tests.test_retrieval import BagOfWords, decide


def test_minmax_puts_each_list_between_0_and_1(store: Store, project: str) -> None:
    both = decide(store, project, "redis session store latency")
    decide(store, project, "redis")
    decide(store, project, "postgres orders table")
    embedder = BagOfWords(dim=8)
    drain(store, embedder)
    query = "redis session store latency"
    convex = replace(DEFAULT, scale="minmax", keyword_weight=0.3, vector_weight=0.7)
    hits = retrieve(store, query, embedder=embedder, project=project, options=convex)
    # First in both lists: 1 in each, so its relevance is the weights' sum.
    assert hits[0].memory.id == both and hits[0].relevance == pytest.approx(1.0)
    # The last of a list scales to 0: no relevance is below 0 or above the weights' sum.
    assert all(0.0 <= h.relevance <= 1.0 for h in hits)
    assert min(h.relevance for h in hits) < 0.7


def test_an_unknown_scale_is_refused(store: Store, project: str) -> None:
    with pytest.raises(ValueError, match="unknown scale 'zscore'"):
        retrieve(store, "anything", project=project, options=replace(DEFAULT, scale="zscore"))
