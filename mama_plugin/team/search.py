"""``mama team search``: the team's memories found by PostgreSQL full text and pgvector.

Runs on the team database, as the developer's role: row-level security keeps it to the
projects that role was given. Words are matched with ``websearch_to_tsquery`` over topic,
content and the primary reasoning; meaning with cosine distance between the query's embedding
and the memories' (only those embedded by the same model), both lists fused by reciprocal
rank. Every hit says whether it is current, what replaced it when it is not, and who changed
it last as the database's audit recorded it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..relationships import REPLACING
from .connection import connect
from .remote import vector_text

RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al.): rank 1 ≈ 1/61
DEPTH = 4  # each retriever reads this many times the results asked for


@dataclass(frozen=True)
class TeamHit:
    """One memory of the team found by a search."""

    project: str
    id: str
    type: str
    topic: str
    content: str
    status: str
    outcome_status: str
    changed_by: str
    matched: str  # words, meaning, or both
    replaced_by: str | None

    def as_dict(self) -> dict[str, Any]:
        """The hit as JSON-ready values."""
        return asdict(self)


def search(
    url: str,
    text: str,
    *,
    limit: int = 10,
    vector: list[float] | None = None,
    model: str | None = None,
) -> list[TeamHit]:
    """The best ``limit`` team memories for ``text`` (and its embedding, when given)."""
    depth = max(limit * DEPTH, 20)
    with connect(url) as conn:
        ranked: dict[str, list[str]] = {
            "words": [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM mama.memories, websearch_to_tsquery('english', %s) q "
                    "WHERE NOT deleted AND tsv @@ q ORDER BY ts_rank_cd(tsv, q) DESC, seq DESC "
                    "LIMIT %s",
                    (text, depth),
                )
            ]
        }
        if vector is not None and model:
            ranked["meaning"] = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM mama.memories WHERE NOT deleted AND embedding_model = %s "
                    "AND vector_dims(embedding) = %s ORDER BY embedding <=> %s::vector LIMIT %s",
                    (model, len(vector), vector_text(vector), depth),
                )
            ]
        score: dict[str, float] = {}
        how: dict[str, set[str]] = {}
        for name, ids in ranked.items():
            for rank, memory_id in enumerate(ids, start=1):
                score[memory_id] = score.get(memory_id, 0.0) + 1.0 / (RRF_K + rank)
                how.setdefault(memory_id, set()).add(name)
        best = sorted(score, key=lambda i: -score[i])[:limit]
        if not best:
            return []
        rows = {
            r[0]: r
            for r in conn.execute(
                "SELECT id, project, type, topic, content, status, outcome_status, changed_by "
                "FROM mama.memories WHERE id = ANY(%s)",
                (best,),
            )
        }
        # The author as the database audited it (its triggers stamp the login role), never
        # a column a client could have written: the newest change that was not a vector.
        authors = dict(
            conn.execute(
                "SELECT DISTINCT ON (key) key, actor FROM mama.audit WHERE kind = 'memory' "
                "AND key = ANY(%s) AND op <> 'embed' AND op NOT LIKE 'conflict%%' "
                "ORDER BY key, id DESC",
                (best,),
            ).fetchall()
        )
        successors = dict(
            conn.execute(
                "SELECT to_id, max(from_id) FROM mama.links WHERE to_id = ANY(%s) "
                "AND relationship = ANY(%s) AND NOT deleted GROUP BY to_id",
                (best, sorted(REPLACING)),
            ).fetchall()
        )
    hits = []
    for memory_id in best:
        _, project, kind, topic, content, status, outcome, by = rows[memory_id]
        matched = "both" if len(how[memory_id]) > 1 else next(iter(how[memory_id]))
        hits.append(
            TeamHit(
                project,
                memory_id,
                kind,
                topic,
                content,
                status,
                outcome,
                str(authors.get(memory_id, by)),
                matched,
                successors.get(memory_id) if status == "superseded" else None,
            )
        )
    return hits
