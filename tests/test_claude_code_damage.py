"""Real Claude Code, fake model, damaged database: the model is told what is wrong and what to do.

The store is built, checkpointed and then damaged (pages zeroed in the middle of the file, as
a disk or an interrupted copy leaves it). Claude Code starts the plugin's server, runs the
SessionStart hook and sends the model's ``save_decision`` call: the tool result must be an
error that names the damage and ``sh …/bin/mama doctor``, and the file must not change.
Damaged where reads do without (the vectors), the story and the search still come back.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import CHECKPOINT, MAMA, btree_pages, file_fingerprint, tell_story
from fake_anthropic import text, tool_use
from test_claude_code import JWT, SAVE, SEARCH, needs_claude, result_of, run_claude
from test_claude_code_hooks import injected
from test_damage import build, zero_middle
from test_repair import garbage

from mama_plugin.config import Config
from mama_plugin.embeddings import Embedder
from mama_plugin.project import project_key
from mama_plugin.services.search.indexing import drain
from mama_plugin.storage import Store


@needs_claude
def test_a_save_into_a_damaged_store_is_refused_with_the_fix(
    tmp_path: Path, mama_home: Path
) -> None:
    db = build(mama_home)
    zero_middle(db)
    before = file_fingerprint(db)
    fake = run_claude(
        [tool_use(SAVE, JWT), text("Told the user.")],
        "Record our API auth decision",
        tmp_path,
        "damaged",
    )
    answer = result_of(fake.main_requests[1], SAVE)
    assert answer["is_error"], answer["text"]
    assert f"the memory store {db} is damaged (" in answer["text"], answer["text"]
    assert "MAMA writes nothing into it" in answer["text"]
    assert f"`{MAMA} doctor`" in answer["text"] and "server.log" not in answer["text"]
    assert "Saved decision" not in answer["text"]
    assert file_fingerprint(db) == before


@needs_claude
def test_a_store_damaged_in_its_vectors_alone_still_tells_the_story_and_finds_by_keyword(
    tmp_path: Path, mama_home: Path, built_model: Path, embedder: Embedder
) -> None:
    mama_home.mkdir(parents=True)
    (mama_home / "config.json").write_text(json.dumps({"embedding_model_path": str(built_model)}))
    project = project_key(str(tmp_path / "project"))
    with Store.open(config=Config(mama_home)) as store:
        story = tell_story(store, project, checkpoint=CHECKPOINT)
        drain(store, embedder)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    db = mama_home / "mama.db"
    garbage(db, btree_pages(db, "memory_vectors_vector_chunks00", kinds=("leaf", "overflow"))[:3])
    before = file_fingerprint(db)
    fake = run_claude(
        [
            tool_use(SEARCH, {"query": "Redis sessions"}),
            tool_use(SAVE, JWT),
            text("Told the user."),
        ],
        "Where did we leave the auth work?",
        tmp_path,
        "vectors damaged",
    )
    first, repair = fake.main_requests[0], f"`{MAMA} doctor --repair`"
    start = injected(first, "SessionStart")
    assert "Remains: Redis HA with Sentinel" in start, start  # the story, as read
    assert "damaged in the vectors (sqlite-vec) only: the memories are intact and read" in start
    assert repair in start
    searched = result_of(fake.main_requests[1], SEARCH)
    assert not searched["is_error"] and story.sessions in searched["text"], searched["text"]
    assert searched["text"].startswith(f"[MAMA's memory store ({db}) is damaged in the vectors")
    saved = result_of(fake.main_requests[2], SAVE)
    assert saved["is_error"] and repair in saved["text"], saved["text"]
    assert "Saved decision" not in saved["text"]
    assert file_fingerprint(db) == before
