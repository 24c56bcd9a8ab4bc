"""Issue 16's ranking: as_of, later versions of a fact, tags, links and type pairs, last use."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from mama_plugin.cli import main
from mama_plugin.errors import ValidationError
from mama_plugin.schema import parse
from mama_plugin.schema.queries import SearchByContextInput, instant_ms
from mama_plugin.services.saving.memories import save_checkpoint, save_context, save_decision
from mama_plugin.services.search import ranking
from mama_plugin.services.search.options import DEFAULT, TODAY, Options
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.storage import Store

DAY = 86_400_000
T0 = instant_ms("2024-01-01")


def said(store: Store, project: str, text: str, when: int, **extra: object) -> str:
    return save_context(store, project, {"content": text, **extra}, created_at=when).memory.id


def test_instant_ms_reads_dates_and_explains_bad_ones() -> None:
    assert instant_ms("2024-01-01") == T0
    assert instant_ms("2024-01-01T00:00:00Z") == T0
    assert instant_ms("2024-01-01T01:00:00+01:00") == T0
    with pytest.raises(ValueError, match="ISO 8601"):
        instant_ms("last tuesday")
    with pytest.raises(ValidationError, match="ISO 8601"):
        parse(SearchByContextInput, {"query": "q", "as_of": "yesterday-ish"})
    args = parse(SearchByContextInput, {"query": "q", "as_of": "2024-01-01", "tags": "infra"})
    assert args.as_of_ms() == T0 and args.tags == ["infra"] and args.min_confidence == 0.5


def test_as_of_leaves_out_what_was_not_said_yet(store: Store, project: str) -> None:
    old = said(store, project, "the team lead is Ana Lopez", T0)
    new = said(store, project, "the team lead is Ben Osei", T0 + 100 * DAY)
    before = search_by_context(store, "team lead", project=project, as_of=T0 + DAY)
    assert before.ids() == [old]
    after = search_by_context(store, "team lead", project=project, as_of=T0 + 101 * DAY)
    assert after.ids()[:2] == [new, old]
    assert after.primary_results[1].updated_by == new
    assert "updated_by" not in after.primary_results[0].as_dict()


def test_a_later_version_ranks_first_even_when_it_matches_less(store: Store, project: str) -> None:
    # The older statement repeats the query's words, so the ranking without the version
    # signal prefers it (years later, recency no longer tells them apart).
    old = said(store, project, "office printer model: the office printer model is HP 4000", T0)
    new = said(store, project, "office printer model: Brother HL-L2350", T0 + 30 * DAY)
    query = "office printer model"
    later = T0 + 3000 * DAY
    bare = retrieve(store, query, project=project, as_of=later, options=TODAY)
    assert [h.memory.id for h in bare] == [old, new]
    hits = retrieve(store, query, project=project, as_of=later)
    assert [h.memory.id for h in hits] == [new, old]
    assert hits[1].updated_by == new and hits[0].updated_by is None
    # A different fact that merely shares a word is not a version of it.
    other = said(store, project, "office coffee machine: Jura E8", T0 + 60 * DAY)
    hits = retrieve(store, query, project=project, as_of=later)
    assert [h.memory.id for h in hits][:2] == [new, old]
    assert all(h.updated_by != other for h in hits)


def test_recency_is_measured_at_as_of_from_the_event_time(store: Store, project: str) -> None:
    a = said(store, project, "deploy window friday evening", T0)
    b = said(store, project, "deploy window notes monday", T0 + 60 * DAY)
    # As of a day after the first: only the first exists.
    assert search_by_context(store, "deploy window", project=project, as_of=T0 + DAY).ids() == [a]
    hits = retrieve(store, "deploy window", project=project, as_of=T0 + 61 * DAY)
    fresh = {h.memory.id: h.score / h.relevance for h in hits}
    assert fresh[b] > fresh[a]  # b is a day old at as_of, a is 61 days old


def test_tags_filter_and_are_searchable(store: Store, project: str) -> None:
    infra = said(
        store, project, "rotate the signing keys quarterly", T0, tags=["infra", "security"]
    )
    said(store, project, "rotate the on-call schedule weekly", T0, tags=["team"])
    rotate = search_by_context(store, "rotate", project=project, tags=["Security"])
    assert rotate.ids() == [infra]
    both = search_by_context(store, "rotate", project=project, tags=["infra", "team"])
    assert both.ids() == []
    # A tag is indexed with the topic: a search for the tag's word finds the memory.
    assert search_by_context(store, "security", project=project).ids() == [infra]
    store.memories.update(infra, tags=["platform"])
    assert search_by_context(store, "platform", project=project).ids() == [infra]
    assert search_by_context(store, "security", project=project).ids() == []


def test_links_to_the_top_result_are_boosted_but_never_pass_it(store: Store, project: str) -> None:
    top = save_decision(store, project, {"topic": "cache", "decision": "Redis cache for sessions",
                                         "reasoning": "sessions must survive restarts"})  # fmt: skip
    top_id = top.memory.id
    near = save_checkpoint(store, project, {"summary": "cache rollout half done",
                                            "links": [{"to_id": top_id, "relationship":
                                                       "implements", "reason": "rolls it out"}]})  # fmt: skip
    near_id = near.memory.id
    query = "redis cache sessions rollout"
    base = {h.memory.id: h.score for h in retrieve(store, query, project=project)}
    linked = {
        h.memory.id: h.score
        for h in retrieve(store, query, project=project, options=Options(links=True))
    }
    paired = {
        h.memory.id: h.score
        for h in retrieve(store, query, project=project, options=Options(type_pairs=True))
    }
    assert max(base, key=lambda i: base[i]) == top_id
    assert linked[near_id] == pytest.approx(min(base[near_id] * 1.5, base[top_id]), rel=1e-6)
    assert linked[near_id] <= linked[top_id]
    # decision → checkpoint: 1.2
    assert paired[near_id] == pytest.approx(min(base[near_id] * 1.2, base[top_id]), rel=1e-6)


def test_type_pairs_and_last_use_follow_the_design() -> None:
    assert ranking.type_pair("decision", "checkpoint") == 1.2
    assert ranking.type_pair("insight", "decision") == 1.1
    assert ranking.type_pair("decision", "insight") == 0.9
    assert ranking.type_pair("checkpoint", "checkpoint") == 0.8
    assert ranking.type_pair("context", "insight") == 1.0

    class Row:
        confidence, outcome_status, status, times_used = 1.0, "PENDING", "current", 0
        created_at, last_used = T0, T0 + 30 * DAY

    assert ranking.last_use_factor(Row(), T0 + 60 * DAY) == pytest.approx(0.5)
    Row.last_used = None
    assert ranking.last_use_factor(Row(), T0 + 60 * DAY) == pytest.approx(1 / 3)
    assert DEFAULT.updates and not TODAY.updates and not DEFAULT.links


def test_cli_search_takes_tags_and_as_of(
    store: Store, project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    said(store, project, "the build server is jenkins-1", T0, tags=["ci"])
    newer = said(store, project, "the build server is buildkite-2", T0 + 10 * DAY)
    db = str(store.path)
    common = ["--db", db, "search", "build server", "--project", project, "--keyword-only"]
    assert main([*common, "--tag", "ci", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["primary_results"]
    assert [h["content"] for h in hits] == ["the build server is jenkins-1"]
    assert main([*common, "--as-of", "2024-01-20"]) == 0
    out = capsys.readouterr().out
    assert f"updated → {newer}" in out and out.index("buildkite") < out.index("jenkins")
    assert main([*common, "--as-of", "soon"]) == 1
    assert "ISO 8601" in capsys.readouterr().err


def test_dates_a_question_names_become_spans() -> None:
    from mama_plugin.services.search import dates

    march_13 = instant_ms("2023-03-13")
    for text in (
        "What did Jolene ask Deb on 13 March, 2023?",
        "what happened on March 13th 2023",
        "the call of 2023-03-13",
    ):
        (start, end), *rest = dates.spans(text)
        assert not rest and start == march_13 - DAY and end == march_13 + 2 * DAY, text
    assert dates.spans("What did Maria start in December 2023?") == [
        (instant_ms("2023-12-01"), instant_ms("2024-01-01"))
    ]
    # A day's month is not read twice; a verb, a bare year, a relative date, an impossible
    # day are not dates of anything.
    assert len(dates.spans("on 3 May 2023")) == 1
    for text in ("it may 2023 be", "in 2023", "last week", "on 31 February 2023", ""):
        assert dates.spans(text) == [], text
    assert dates.within(march_13, dates.spans("13 March 2023"))
    assert not dates.within(march_13 + 3 * DAY, dates.spans("13 March 2023"))


def test_a_memory_dated_on_the_day_a_question_names_ranks_first(store: Store, project: str) -> None:
    # Two sessions talk about the same thing; the question names the day of the first.
    first = said(
        store, project, "garden plans, the fence, the shed and the pond", T0, session_id="a"
    )
    second = said(store, project, "the garden plans", T0 + 40 * DAY,
                  session_id="b")  # fmt: skip
    asked = "What did we say about the garden plans on 1 January 2024?"
    later = T0 + 50 * DAY
    assert [h.memory.id for h in retrieve(store, asked, project=project, as_of=later)] == [
        first, second
    ]  # fmt: skip
    undated = replace(DEFAULT, date_boost=0.0)
    bare = retrieve(store, asked, project=project, as_of=later, options=undated)
    assert bare[0].memory.id == second


def test_a_memory_at_v1_0s_default_confidence_is_not_hidden(store: Store, project: str) -> None:
    # v1.0 stored 0.5 for every decision saved without a confidence; the import keeps it.
    imported = save_decision(
        store,
        project,
        {
            "topic": "queue",
            "decision": "use a job queue",
            "reasoning": "retries",
            "confidence": 0.5,
        },
    )
    guess = save_decision(
        store,
        project,
        {
            "topic": "queue",
            "decision": "maybe a job queue",
            "reasoning": "unsure",
            "confidence": 0.4,
        },
    )
    found = search_by_context(store, "job queue", project=project).ids()
    assert imported.memory.id in found and guess.memory.id not in found
