"""Memory above the project: a promoted memory is read by every project, and only on purpose.

A preference saved in one project and promoted with ``mama promote`` (or the
``promote_memory`` tool) is found by another project's search and topic listing, marked
global, and named by that project's session start (even a project with no memory of its
own); the session start stays byte-identical while nothing changes; the vector moves with the
memory; a checkpoint cannot be promoted; ``--back`` returns it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.errors import ValidationError
from mama_plugin.project import GLOBAL
from mama_plugin.services.saving.memories import save_checkpoint, save_decision, save_insight
from mama_plugin.services.saving.scopes import demote, inherited, promote, seen_across
from mama_plugin.services.search import vector_index
from mama_plugin.services.search.indexing import drain
from mama_plugin.services.story import brief_cache, briefing
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.services.story.browsing import search_by_topic
from mama_plugin.storage import Store

HERE, THERE = "/work/shop", "/work/blog"
PREFERENCE = {
    "topic": "migrations",
    "content": "I prefer explicit, hand-written database migrations over auto-generated ones",
}


def _preference(store: Store) -> str:
    return save_insight(store, HERE, PREFERENCE).memory.id


def test_a_promoted_memory_is_found_by_another_project_s_search_marked_global(
    store: Store,
) -> None:
    pref = _preference(store)
    save_decision(store, THERE, {"topic": "blog_engine", "decision": "Hugo for the blog",
                                 "reasoning": "static pages, no server"})  # fmt: skip
    before = search_by_context(store, "database migrations", project=THERE)
    assert pref not in before.text
    moved = promote(store, pref)
    assert moved.memory.project == GLOBAL and moved.came_from == HERE
    assert "is global now" in moved.summary()
    after = search_by_context(store, "database migrations", project=THERE)
    assert f"{pref} (insight, global: from every project)" in after.text, after.text
    assert [r.id for r in search_by_topic(store, "migrations", project=THERE)] == [pref]
    # Its own project inherits it like any other; a search of every project finds it too.
    assert pref in search_by_context(store, "database migrations", project=HERE).text
    assert pref in search_by_context(store, "database migrations").text


def test_the_vector_moves_with_the_memory(store: Store, embedder: Any) -> None:
    pref = _preference(store)
    seq = store.memories.require(pref).seq
    drain(store, embedder)
    vector = embedder.embed([PREFERENCE["content"]])[0]
    assert [s for s, _ in vector_index.knn(store, vector, 3, project=HERE)] == [seq]
    promote(store, pref)
    assert vector_index.knn(store, vector, 3, project=HERE) == []
    assert [s for s, _ in vector_index.knn(store, vector, 3, project=GLOBAL)] == [seq]
    assert [s for s, _ in vector_index.knn(store, vector, 3, project=(THERE, GLOBAL))] == [seq]
    found = search_by_context(store, "hand-written migrations", embedder=embedder, project=THERE)
    assert found.primary_results[0].id == pref


def test_a_new_project_s_session_start_names_it_and_stays_byte_identical(
    store: Store, mama_home: Path
) -> None:
    config = Config(mama_home)
    assert briefing.brief(store, THERE, config, "startup") == ""
    pref = _preference(store)
    promote(store, pref)
    told = briefing.brief(store, THERE, config, "startup")
    assert "Yours in every project (global):" in told
    assert f"- {PREFERENCE['content']} ({pref})" in told
    assert briefing.brief(store, THERE, config, "startup") == told  # nothing changed
    assert brief_cache.shown_at_start(store, THERE, config, "startup") == [pref]
    demote(store, pref, HERE)
    assert briefing.brief(store, THERE, config, "startup") == ""


def test_only_what_is_asked_moves(store: Store) -> None:
    checkpoint = save_checkpoint(store, HERE, {"summary": "halfway through the migration"})
    with pytest.raises(ValidationError, match="one session's work in one project"):
        promote(store, checkpoint.memory.id)
    pref = _preference(store)
    with pytest.raises(ValidationError, match="is not global"):
        demote(store, pref, THERE)
    promote(store, pref)
    with pytest.raises(ValidationError, match="global already"):
        promote(store, pref)
    assert inherited(store, HERE) == (HERE, GLOBAL) and inherited(store, None) is None
    assert inherited(store, GLOBAL) == GLOBAL


def test_mama_promote_and_back(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pref = _preference(store)
    db = str(store.path)
    assert main(["--db", db, "promote", pref]) == 0
    assert "is global now" in capsys.readouterr().out
    assert main(["--db", db, "promote", pref]) == 1
    assert "global already" in capsys.readouterr().err
    assert main(["--db", db, "promote", pref, "--back", "--project", str(tmp_path), "--json"]) == 0
    assert f'"scope": "{tmp_path}"' in capsys.readouterr().out
    assert store.memories.require(pref).project == str(tmp_path)


@pytest.mark.anyio
async def test_the_promote_memory_tool(state: Any) -> None:
    from conftest import DESKTOP, connect, text_result

    async with connect(state, DESKTOP) as c:
        saved = await c.call_tool("save_insight", PREFERENCE)
        memory_id = saved.structured_content["id"]  # type: ignore[index]
        moved = await c.call_tool("promote_memory", {"memory_id": memory_id})
        assert not moved.is_error and "is global now" in text_result(moved)
        again = await c.call_tool("promote_memory", {"memory_id": memory_id})
        assert again.is_error and "global already" in text_result(again)
        back = await c.call_tool("promote_memory", {"memory_id": memory_id, "back": True})
        assert not back.is_error and "not to every project" in text_result(back)


def test_what_two_projects_say_alike_is_offered_for_promotion(
    store: Store, embedder: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    here = _preference(store)
    there = save_insight(store, THERE, {**PREFERENCE, "content": PREFERENCE["content"] + "."})
    save_insight(store, THERE, {"topic": "css", "content": "Tailwind for the dashboard styles"})
    save_insight(store, HERE, {**PREFERENCE, "topic": "migrations_again"})  # same project
    drain(store, embedder)
    [pattern] = seen_across(store)
    assert pattern.projects == sorted([HERE, THERE])
    assert {m.id for m in pattern.memories} >= {here, there.memory.id}
    assert f"mama promote {pattern.memories[0].id}" in pattern.summary()
    assert main(["--db", str(store.path), "promote", "--suggest"]) == 0
    assert "Seen in 2 projects" in capsys.readouterr().out
    promote(store, here)  # once global, a copy left in a project is still said alike elsewhere
    assert all(GLOBAL not in p.projects for p in seen_across(store))
    assert main(["--db", str(store.path), "promote"]) == 1
    assert "or --suggest" in capsys.readouterr().err
