"""The ADR set and its benchmark: records others wrote, asked of their own project's store."""

from __future__ import annotations

import json

from benchmarks.adr_markdown import Index, parse
from benchmarks.recall_adr import ADR, CALIBRATION, projects


def test_every_repository_is_one_project_and_the_halves_split_by_repository() -> None:
    found, _ = projects()
    assert len(found) == 8 and all(len(p.memories) >= 15 for p in found)
    assert {p.repo for p in found if p.split == "calibration"} == set(CALIBRATION)
    for p in found:
        assert {c.split for c in p.cases} == {p.split}
        assert {k for c in p.cases for k in c.meant} <= {k for k, _ in p.memories}


def test_a_records_context_is_asked_never_stored() -> None:
    found, _ = projects()
    for p in found:
        stored = " ".join(f"{f['decision']} {f['reasoning']}" for _, f in p.memories)
        related = [c for c in p.cases if c.related and len(c.prompt) > 80]
        assert related and sum(c.prompt in stored for c in related) <= len(related) // 20


def test_records_of_one_context_are_one_group() -> None:
    data = json.loads(ADR.read_text(encoding="utf-8"))
    found, _ = projects()
    for repo, p in zip(data["repositories"], found, strict=True):
        contexts = [" ".join(r["context"].split()) for r in repo["records"]]
        shared = {c for c in contexts if contexts.count(c) > 1}
        groups = [c.meant for c in p.cases if c.related and c.source == "adr"]
        assert len(groups) == len(set(contexts))
        assert sum(len(g) > 1 for g in groups) == len(shared)


def test_a_record_is_its_sections_and_a_record_without_a_decision_is_skipped() -> None:
    index = Index.of(["doc/adr/0001-use-postgres.md", "doc/adr/0002-use-redis.md"])
    record = parse(
        "doc/adr/0002-use-redis.md",
        "# 2. Use Redis for sessions\n\n## Status\n\nSuperseded by ADR-1\n\n## Context\n\n"
        "Sessions are lost on every deploy because they live in process memory.\n\n"
        "## Decision\n\nWe will keep sessions in Redis with a 24 h expiry.\n",
        index,
        set(),
    )
    assert not isinstance(record, str)
    assert (record.id, record.title, record.status) == ("adr-002", "Use Redis for sessions",
                                                        "superseded")  # fmt: skip
    assert record.superseded_by == ["adr-001"]
    assert record.context.startswith("Sessions are lost") and "24 h expiry" in record.decision
    skipped = parse("doc/adr/0001-use-postgres.md", "# 1. Use Postgres\n\n## Context\n\nWe need "
                    "a database for the orders service.\n", index, set())  # fmt: skip
    assert isinstance(skipped, str)
