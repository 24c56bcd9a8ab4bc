"""Prompt-time recall: Korean-aware terms, one path with search, nothing twice, its views.

The recall benchmark's own tests are in benchmarks/tests/test_recall.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Counting

from mama_plugin.config import Config
from mama_plugin.embeddings import Embedder
from mama_plugin.embeddings.cards import scale
from mama_plugin.services.recall import judge as recall_judge
from mama_plugin.services.recall import prompt as recall
from mama_plugin.services.recall.context import prompt_context
from mama_plugin.services.saving.memories import (
    record_outcome,
    save_checkpoint,
    save_context,
    save_decision,
)
from mama_plugin.services.search import indexing
from mama_plugin.services.search import views as recall_views
from mama_plugin.services.story import brief_cache, briefing
from mama_plugin.services.story import shown as seen
from mama_plugin.services.view_cache import ViewCache
from mama_plugin.storage import Store
from mama_plugin.storage.fts import query_words, quoted
from mama_plugin.text import matched_terms, search_terms, text_keys

PRICE = {
    "topic": "price_cache",
    "decision": "가격 캐시를 write-through에서 60초 TTL로 바꿨다",
    "reasoning": "write-through 때 재고 불일치가 잦았다",
}


# -- one tokenizer, Korean-aware -----------------------------------------------------------


def test_korean_words_are_stems_matched_as_prefixes() -> None:
    assert search_terms("가격 캐시는 왜 TTL로 바꿨지?", min_length=3) == [
        "가격*", "캐시*", "ttl*", "바꿨지*",
    ]  # fmt: skip
    # "어제 … 하자": the time word and the ending say nothing about a subject.
    assert search_terms("어제 작업 이어서 하자") == ["작업*", "이어서*"]
    assert search_terms("run the db tests", min_length=3) == ["run", "tests"]
    assert quoted("캐시*") == '"캐시"*' and quoted('a"b') == '"a""b"'
    # User text never makes a prefix query: "*" is not part of any word.
    assert query_words("cache* OR drop") == ["cache", "drop"]


def test_korean_terms_match_other_forms_and_compounds() -> None:
    keys = text_keys("price cache: 가격캐시를 write-through에서 60초 TTL로 바꿨다")
    terms = search_terms("가격 캐시는 왜 TTL로 바꿨지?", min_length=3)
    assert matched_terms(terms, keys) == ["가격*", "캐시*", "ttl*", "바꿨지*"]
    assert matched_terms(search_terms("파이썬 리스트 뒤집기"), keys) == []


def test_search_finds_a_korean_memory_by_another_form(store: Store, project: str) -> None:
    saved = save_decision(store, project, PRICE).memory
    found = store.search.text("가격 캐시는 왜 TTL로 바꿨지?", project=project)
    assert [m.id for m, _ in found] == [saved.id]
    assert store.search.text("파이썬에서 리스트를 뒤집는 방법", project=project) == []


# -- the recall path -------------------------------------------------------------------------


def test_a_korean_paraphrase_recalls_and_an_unrelated_korean_prompt_does_not(
    store: Store, project: str
) -> None:
    saved = save_decision(store, project, PRICE).memory
    hits = recall.recall(store, "가격 캐시는 왜 TTL로 바꿨지?", project=project).hits
    assert [h.memory.id for h in hits] == [saved.id]
    assert (
        recall.recall(store, "파이썬에서 리스트를 뒤집는 방법 알려줘", project=project).hits == []
    )


def test_what_can_recall_is_what_recall_judges(store: Store, project: str) -> None:
    """``can_recall`` (the front answers at once where it is False) says what ``recall`` does:
    a prompt it refuses never recalls, even the memory its one word names."""
    save_decision(store, project, JWT)
    for prompt in ("hello", "go on", "yes ok do it", "jwt", "인증"):
        assert not recall_judge.can_recall(prompt), prompt
        assert recall.recall(store, prompt, project=project, judged=False).hits == [], prompt
    for prompt in ("Should the API keep JWT auth tokens?", "JWT auth", "인증 토큰 방식"):
        assert recall_judge.can_recall(prompt), prompt
    assert recall.recall(store, "JWT auth", project=project, judged=False).hits


def test_relevance_reads_each_model_on_its_own_scale() -> None:
    assert recall.relevance(0.5, "all-MiniLM-L6-v2") == 0.5
    e5 = "multilingual-e5-small-q4"
    assert recall.relevance(scale(e5).floor, e5) == 0.0
    # Meaning needs the prompt's words too, unless the model's scale lets it stand alone.
    assert recall_judge.judge(0.55, 0.5, 2, bar=0.5) and not recall_judge.judge(
        0.55, 0.2, 1, bar=0.5
    )
    assert not recall_judge.judge(0.95, 0.0, 0, bar=0.5)
    assert recall_judge.judge(0.95, 0.0, 0, bar=0.5, model=e5)
    # No vectors: the weight and two terms.
    assert recall_judge.judge(None, 0.6, 2, bar=0.5) and not recall_judge.judge(
        None, 0.6, 1, bar=0.5
    )


def test_a_term_no_memory_holds_weighs_most(store: Store, project: str) -> None:
    save_decision(store, project, PRICE)
    save_decision(store, project, {"topic": "cache", "decision": "Cache product pages",
                                   "reasoning": "cache hits cut latency"})  # fmt: skip
    weight = recall.weights(store, ["cache", "jonathan"])
    assert weight["jonathan"] > weight["cache"] > 0


def test_in_a_small_store_an_unknown_word_does_not_outweigh_the_held_ones(
    store: Store, project: str
) -> None:
    save_decision(store, project, JWT)
    weight = recall.weights(store, ["new", "jwt"])
    # One memory: log(21/0.5) against log(21/1.5), where it was log(2/0.5) against log(2/1.5).
    assert 1.3 < weight["new"] / weight["jwt"] < 1.5


JWT = {
    "topic": "authentication",
    "decision": "JWT with short-lived access tokens and refresh tokens",
    "reasoning": "stateless auth scales across nodes without a shared session store",
}


def test_a_one_memory_store_recalls_a_prompt_with_one_unknown_word(
    store: Store, project: str, embedder: Embedder
) -> None:
    # The prompt's "new", "api" and "use" are in no memory; before the prior they held 82% of
    # its weight, and the memory (cosine 0.53) was left out. Now it holds enough of the weight;
    # at 0.53, under the chain's 0.6 on an English prompt, it is pointed at.
    saved = save_decision(store, project, JWT).memory
    indexing.drain(store, embedder)
    found = recall.recall(
        store, "Should the new API use JWT tokens for auth?", project=project, embedder=embedder
    )
    assert found.hits == [] and [h.memory.id for h in found.pointers] == [saved.id]
    assert found.pointers[0].coverage > recall_judge.WEIGHT_BAR
    quiet = recall.recall(
        store, "write a haiku about autumn leaves", project=project, embedder=embedder
    )
    assert quiet.hits == [] and quiet.pointers == []


def _chain(store: Store, project: str) -> tuple[str, str]:
    jwt = save_decision(store, project, {
        "topic": "auth", "decision": "Use stateless JWT access tokens for the API",
        "reasoning": "no session store to run"}).memory  # fmt: skip
    record_outcome(store, {"memory_id": jwt.id, "outcome": "FAILED",
                           "details": "token refresh hit the database under heavy traffic"})  # fmt: skip
    redis = save_decision(store, project, {
        "topic": "auth", "decision": "Server-side sessions in Redis", "supersedes": jwt.id,
        "reasoning": "one Redis lookup per request, no refresh storms"}).memory  # fmt: skip
    return jwt.id, redis.id


def test_a_decision_is_embedded_as_its_narrative(store: Store, project: str) -> None:
    jwt, redis = _chain(store, project)
    text = indexing.narrative_text(store, store.memories.require(redis))
    assert text.startswith("auth. Server-side sessions in Redis. one Redis lookup")
    assert "replaces: Use stateless JWT access tokens for the API (FAILED: token refresh" in text
    old = indexing.narrative_text(store, store.memories.require(jwt))
    assert "FAILED: token refresh" in old and "replaced by: Server-side sessions in Redis" in old


# -- nothing twice -----------------------------------------------------------------------------


def test_a_memory_injected_once_is_not_injected_again_unless_it_changed(
    store: Store, project: str
) -> None:
    jwt, redis = _chain(store, project)
    shown = seen.Shown()
    ask = "Should we switch the API back to JWT access tokens?"
    first = prompt_context(store, ask, project=project, budget=300, shown=shown)
    assert redis in first.text and jwt in first.text
    again = prompt_context(store, "JWT access tokens for the API?", project=project,
                                  budget=300, shown=shown)  # fmt: skip
    assert again.text == "" and again.skipped == (jwt,)
    store.memories.update(redis, content="Server-side sessions in Redis, 30 min idle timeout")
    changed = prompt_context(store, ask, project=project, budget=300, shown=shown)
    assert "30 min idle timeout" in changed.text
    # Another session has its own record.
    other = prompt_context(store, ask, project=project, budget=300, shown=seen.Shown())
    assert redis in other.text


def test_what_the_session_start_showed_is_not_injected_at_a_prompt(
    store: Store, project: str
) -> None:
    _jwt, redis = _chain(store, project)
    save_checkpoint(store, project, {"summary": "Moved auth to Redis sessions",
                                     "next_steps": "load-test the login path"})  # fmt: skip
    config = Config()
    started = briefing.brief(store, project, config, "startup")
    assert redis in started
    sessions = seen.Sessions()
    shown = seen.session_shown(sessions, store, project, "session-a", config)
    assert shown is not None and shown is seen.session_shown(
        sessions, store, project, "session-a", config
    )
    ask = "Should we switch the API back to JWT access tokens?"
    injected = prompt_context(store, ask, project=project, budget=300, shown=shown)
    assert redis not in injected.text
    assert seen.session_shown(sessions, store, project, "", config) is None


def test_the_session_start_records_the_ids_of_what_it_told(store: Store, project: str) -> None:
    """What the session start showed is recorded as ids beside its cached text, never read
    back out of the text: the checkpoint, the decision and what it replaced; a later change
    of the project's memory makes the record stale with the text."""
    jwt, redis = _chain(store, project)
    checkpoint = save_checkpoint(store, project, {"summary": "Moved auth to Redis sessions",
                                                  "next_steps": "load-test the login path"})  # fmt: skip
    config = Config()
    text = briefing.brief(store, project, config, "startup")
    told = brief_cache.shown_at_start(store, project, config, "startup")
    assert told is not None and set(told) == {checkpoint.memory.id, redis, jwt}
    assert all(memory_id in text for memory_id in told)
    save_decision(store, project, {"topic": "cache", "decision": "A TTL cache",
                                   "reasoning": "reads dominate"})  # fmt: skip
    assert brief_cache.shown_at_start(store, project, config, "startup") is None


def test_sessions_keep_only_the_newest() -> None:
    sessions = seen.Sessions(limit=2)
    a = sessions.get("a", lambda: ["dec_000001abcde"])
    assert a.holds({"dec_000001abcde": 7})
    sessions.get("b", lambda: None)
    sessions.get("c", lambda: None)
    assert sessions.get("a", lambda: None) is not a


@pytest.mark.parametrize("prompt", ["yes", "ok do it", "네", "좋아"])
def test_short_prompts_recall_nothing(store: Store, project: str, prompt: str) -> None:
    save_decision(store, project, PRICE)
    assert recall.recall(store, prompt, project=project).hits == []


def test_the_prompt_hook_does_not_repeat_itself_within_a_session(
    store: Store, project: str
) -> None:
    from mama_plugin.server.base import Env
    from mama_plugin.server.hook_table import PromptArgs
    from mama_plugin.server.hook_tools import do_observe_prompt

    _jwt, redis = _chain(store, project)
    env = Env(store, project, None)

    def ask(prompt: str, session: str) -> str:
        answer = do_observe_prompt(env, PromptArgs(prompt=prompt, session_id=session))
        return answer.text

    assert redis in ask("Should we switch the API back to JWT access tokens?", "one")
    assert ask("JWT access tokens for the API again?", "one") == "{}"
    assert redis in ask("JWT access tokens for the API again?", "two")


def test_a_projects_checkpoints_never_crowd_its_decision_out_of_prompt_recall(
    store: Store, project: str
) -> None:
    """Every session leaves a checkpoint that repeats what it was about: prompt recall leaves
    checkpoints out before taking its candidates, not after (ten of them once silenced it)."""
    saved = save_decision(store, project, PRICE).memory
    prompt = "Why is the price cache on a TTL instead of invalidation?"
    for i in range(14):
        save_checkpoint(
            store, project, {"summary": f"Session {i}: {prompt} Looked at the price cache TTL."}
        )
    found = recall.recall(store, prompt, project=project)
    assert [hit.memory.id for hit in found.hits] == [saved.id]


# -- several views of a memory -----------------------------------------------------------


def test_a_memory_is_also_compared_as_its_topic_and_line(store: Store, project: str) -> None:
    saved = save_decision(store, project, PRICE).memory
    narrative = indexing.narrative_text(store, saved)
    assert recall_views.views(saved, narrative) == ["price cache", PRICE["decision"]]
    model, cache = Counting(), ViewCache(size=8)
    prompt = model.embed(["price cache"])[0]
    best = recall_views.best_cosines(model, prompt, [(saved, narrative, 0.1)], cache)
    assert best[saved.id] == pytest.approx(1.0)  # the topic view, not the narrative's 0.1
    model.texts.clear()
    recall_views.best_cosines(model, prompt, [(saved, narrative, 0.1)], cache)
    assert model.texts == []  # embedded once per memory version
    # A memory whose narrative is its content has no other view: nothing is embedded.
    bare = save_context(store, project, {"topic": "", "content": "가격 캐시 TTL"}).memory
    assert recall_views.views(bare, indexing.narrative_text(store, bare)) == []


def test_the_views_are_stored_when_indexed_and_read_not_embedded_at_prompt_time(
    store: Store, project: str
) -> None:
    """A short session's first prompt has a cold process cache: the views come from the
    store's text_vectors, which the indexer filled with the memory's narrative."""
    saved = save_decision(store, project, PRICE).memory
    model = Counting()
    assert indexing.drain(store, model) == 1
    narrative = indexing.narrative_text(store, saved)
    views = recall_views.views(saved, narrative)
    assert set(model.texts) == {narrative, *views}  # the narrative and both views, once
    stored = store.vectors.of_texts(model.name, views)
    assert stored == {t: v for t, v in zip(views, model.embed(views), strict=True)}
    model.texts.clear()
    prompt = model.embed(["price cache"])[0]
    model.texts.clear()
    cold = ViewCache(size=8)  # a new process
    best = recall_views.best_cosines(model, prompt, [(saved, narrative, 0.1)], cold, store=store)
    assert model.texts == [] and best[saved.id] == pytest.approx(1.0)
    # Another model's vectors are never read; a new model's index forgets them.
    assert store.vectors.of_texts("other-model", views) == {}
    store.vectors.reset("other-model", 26)
    assert store.vectors.of_texts(model.name, views) == {}


def test_views_embedded_at_prompt_time_are_stored_by_the_next_drain(
    store: Store, project: str
) -> None:
    """Memories indexed before the views were stored get theirs from the first prompt that
    needed them; the indexer writes them later, off the prompt's path."""
    saved = save_decision(store, project, PRICE).memory
    narrative = indexing.narrative_text(store, saved)
    model, cache = Counting(), ViewCache(size=8)
    prompt = model.embed(["price cache"])[0]
    recall_views.best_cosines(model, prompt, [(saved, narrative, None)], cache, store=store)
    views = recall_views.views(saved, narrative)
    assert store.vectors.of_texts(model.name, views) == {}  # the prompt path wrote nothing
    assert recall_views.save_fresh(store, model.name, cache=cache) == len(views)
    assert set(store.vectors.of_texts(model.name, views)) == set(views)
    assert cache.take_fresh(model.name) == []  # handed over once


def test_meaning_alone_passes_an_english_prompt_with_minilm_only() -> None:
    minilm = "all-MiniLM-L6-v2"
    assert recall_judge.judge(0.66, 0.0, 0, bar=0.5, model=minilm, korean=False)
    assert not recall_judge.judge(0.66, 0.0, 0, bar=0.5, model=minilm, korean=True)
    assert not recall_judge.judge(0.6, 0.0, 0, bar=0.5, model=minilm, korean=False)


def test_a_memory_just_over_the_bar_on_an_english_prompt_is_pointed_at_not_told() -> None:
    """MiniLM: words and meaning at the bar make a pointer; a chain needs 0.1 more."""
    minilm, near = "all-MiniLM-L6-v2", recall_judge.Evidence(0.55, 0.5, 2)
    assert recall_judge.verdict(0.55, 0.5, 2, bar=0.5, model=minilm, korean=False) == "near"
    assert recall_judge.verdict(0.62, 0.5, 2, bar=0.5, model=minilm, korean=False) == "chain"
    clear = recall_judge.Evidence(0.62, 0.5, 2)

    def told(
        found: list[recall_judge.Evidence], terms: int = 4, korean: bool = False
    ) -> tuple[list[int], list[int]]:
        tiered = recall_judge.tiers(found, terms=terms, bar=0.5, model=minilm, korean=korean)
        return tiered.chains, tiered.pointers()

    assert told([near]) == ([], [0])
    assert told([clear, near]) == ([0], [1])  # pointers are for prompts with no chain
    # A near memory is a chain the rules passed, told in one line: at any rank (a pointer on
    # meaning alone needs the first two); no pointer for a prompt of two terms.
    far = [recall_judge.Evidence(0.1, 0.0, 0)] * 2
    assert told([*far, near]) == ([], [2])
    assert told([near], terms=2) == ([], [])
    assert told([*far, recall_judge.Evidence(0.57, 0.1, 1)]) == ([], [])
    # With a chain of this prompt's told before, only the near ones are pointed at.
    both = recall_judge.tiers(
        [recall_judge.Evidence(0.57, 0.1, 1), near], terms=4, bar=0.5, model=minilm, korean=False
    )
    assert both.pointers() == [0, 1] and both.pointers(told_before=True) == [1]
    # A memory that evolved (replaced, failed, or it replaced another) keeps its chain there:
    # what failed and why is what a pointer's one line cannot tell.
    assert told([recall_judge.Evidence(0.55, 0.5, 2, evolved=True)]) == ([0], [])
    # The chain's extra 0.1 is for prompts without Korean (a Korean one's words carry a memory
    # on their own bar, Scale.words).
    assert told([near], korean=True) == ([0], [])


def test_a_pointer_is_one_line_with_its_status_and_what_it_replaced(tmp_path: Path) -> None:
    from mama_plugin.services.render import render

    pointer = {"id": "dec_b", "topic": "auth_strategy", "content": "Server-side sessions in Redis",
               "current": None, "outcome": "PENDING",
               "replaced": {"id": "dec_a", "outcome": "FAILED"}}  # fmt: skip
    old = pointer | {"id": "dec_a", "content": "Stateless JWT", "outcome": "FAILED",
                     "current": {"id": "dec_b", "content": "Server-side sessions in Redis"},
                     "replaced": None}  # fmt: skip
    text = render("prompt_context.md.j2", tmp_path, hits=[], pointers=[pointer, old], fence="m")
    lines = [x for x in text.splitlines() if x.startswith("- ")]
    assert lines == [
        "- dec_b: Server-side sessions in Redis (it replaced dec_a, FAILED)",
        "- dec_a: Stateless JWT (superseded by dec_b: Server-side sessions in Redis)",
    ]
    assert text.startswith("MAMA memories that may not apply (unchecked):")


def test_each_model_ranks_its_candidates_with_its_own_cosine_weight() -> None:
    from dataclasses import replace

    from mama_plugin.services.search.options import DEFAULT

    # mpnet's weight was read off the rankings compared; MiniLM, e5 and no model: search's.
    assert recall.ranking_of("all-mpnet-base-v2") == replace(DEFAULT, vector_weight=3.0)
    for model in ("all-MiniLM-L6-v2", "multilingual-e5-small-q4", "", "unknown"):
        assert recall.ranking_of(model) == DEFAULT


def test_the_rankings_first_is_pointed_at_beside_the_chain_of_another(tmp_path: Path) -> None:
    from benchmarks.recall_tiers import tier_of
    from mama_plugin.services.render import render

    minilm = "all-MiniLM-L6-v2"
    # (id, relevance, weight, matched, terms, korean, model): search ranks dec_a first, close on
    # meaning (at the bar); the rules chain dec_b, far above it on meaning alone.
    found = [("dec_a", 0.52, 0.1, 1, 6, False, minilm, False),
             ("dec_b", 0.7, 0.1, 1, 6, False, minilm, False)]  # fmt: skip
    assert tier_of(found, 0.5) == ("chain", ["dec_b"], ["dec_a"])
    assert tier_of(found[1:], 0.5) == ("chain", ["dec_b"], [])  # nothing beside it
    hit = {"id": "dec_b", "type": "decision", "topic": "rpc", "content": "gRPC for the node API",
           "created_at": 0, "outcome": "PENDING", "current": None, "replaced": None}  # fmt: skip
    beside = {"id": "dec_a", "content": "JSON-RPC over websockets", "current": None}
    text = render("prompt_context.md.j2", tmp_path, hits=[hit], pointers=[beside], fence="m")
    body = text.split("<m>\n", 1)[1].split("</m>", 1)[0]
    assert body.splitlines()[-1] == (
        "- maybe also dec_a: JSON-RPC over websockets (unchecked: it may not apply)"
    )
    assert text.startswith("MAMA recalled 1 past memory")


FASTAPI = {"topic": "web_framework", "decision": "Serve the HTTP API with Flask for now",
           "reasoning": "the team knows it; FastAPI's async handlers are not needed yet"}  # fmt: skip
OTHER = [
    {"topic": "ci", "decision": "Run the test suite on every pull request",
     "reasoning": "regressions reached main twice last month"},
    {"topic": "logging", "decision": "Log as JSON lines to stdout",
     "reasoning": "the platform ships stdout to the log store"},
]  # fmt: skip


def test_a_prompt_naming_a_decisions_rare_name_points_at_it(
    store: Store, project: str, embedder: Embedder
) -> None:
    # The trial's "Should we move the endpoints to FastAPI?": FastAPI is the decision's rarest
    # word, and its cosine alone was under the bar.
    saved = save_decision(store, project, FASTAPI).memory
    for other in OTHER:
        save_decision(store, project, other)
    indexing.drain(store, embedder)
    prompt = "Should we move the endpoints to FastAPI?"
    assert recall.rare_names(store, prompt, recall.recall(store, prompt, project=project).words)
    found = recall.recall(store, prompt, project=project, embedder=embedder)
    told = [h.memory.id for h in found.hits + found.pointers]
    assert told == [saved.id], told
    off = recall.recall(store, prompt, project=project, embedder=embedder, names=False)
    assert [h.memory.id for h in off.hits + off.pointers] == [], "the rule, not the bar"
    # A name no memory holds points at nothing; a word not shaped like a name is no name.
    assert not recall.rare_names(store, "Should we use Django for it?", ["use", "django"])
    assert not recall.rare_names(store, "should the handlers be async", ["handler", "async"])
