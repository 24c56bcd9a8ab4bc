"""The relationship words of the store: each word's canonical form, cluster and category.

``relationship_usage`` counts how often each word is used; this table says what the word
*means* for the graph: the canonical word it stands for (itself when it is canonical), the
cluster of words with its meaning (0: alone), and the category inferred from its meaning with
the confidence of that inference. Links keep the word their writer chose; queries and health
figures read the canonical form from here, so the original word is never lost.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import apsw

from .parameter_words import ParameterWord, parameter_words
from .records import LinkRecord
from .repository import Repository
from .sql import now_ms


def relationship_words(conn: apsw.Connection, _dim: int) -> None:
    """The schema step: ``relationship_words``, one row per word that was tidied or merged."""
    conn.execute(
        """
        CREATE TABLE relationship_words (
            relationship TEXT PRIMARY KEY,
            canonical TEXT NOT NULL,
            cluster INTEGER NOT NULL DEFAULT 0,
            category TEXT NOT NULL,
            category_confidence REAL NOT NULL DEFAULT 0.0,
            decided_by TEXT NOT NULL DEFAULT 'tidy',
            updated_at INTEGER NOT NULL
        );
        CREATE INDEX relationship_words_by_canonical ON relationship_words(canonical);
        """
    )


@dataclass(frozen=True)
class WordRow:
    """One word's row: what it stands for, its cluster and its inferred category.

    ``decided_by`` is ``tidy`` (the clustering pass) or ``user`` (a merge someone asked for,
    which a later tidy keeps).
    """

    relationship: str
    canonical: str
    cluster: int
    category: str
    category_confidence: float
    decided_by: str
    updated_at: int


@dataclass(frozen=True)
class WordUse:
    """How a word is used: links, first and last use (ms), mean link confidence."""

    relationship: str
    category: str
    uses: int
    first_used: int
    last_used: int
    mean_confidence: float


class RelationshipWords(Repository):
    """The rows of ``relationship_words`` and the usage figures the graph passes read."""

    def all(self) -> dict[str, WordRow]:
        """Every recorded word, by word."""
        rows = self.conn.execute(
            "SELECT relationship, canonical, cluster, category, category_confidence, "
            "decided_by, updated_at FROM relationship_words"
        ).fetchall()
        return {str(r[0]): WordRow(*r) for r in rows}  # type: ignore[arg-type]

    def put(self, rows: Iterable[WordRow]) -> None:
        """Record these words (replacing what was recorded for them), in one transaction."""
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO relationship_words(relationship, canonical, cluster, "
                "category, category_confidence, decided_by, updated_at) VALUES (?,?,?,?,?,?,?)",
                [
                    (
                        r.relationship,
                        r.canonical,
                        r.cluster,
                        r.category,
                        r.category_confidence,
                        r.decided_by,
                        r.updated_at or now_ms(),
                    )
                    for r in rows
                ],
            )

    def merge(self, word: str, into: str) -> int:
        """Make ``into`` the canonical form of ``word`` and of every word that stood for it.

        When ``into`` itself stands for another word, ``word`` joins that one: a word's
        canonical form is always canonical. Returns how many words now stand for it. Links
        keep their own word.
        """
        now = now_ms()
        with self.transaction():
            known = self.all()
            if into in known:
                into = known[into].canonical
            target = known.get(into)
            cluster = target.cluster if target else 0
            category = target.category if target else self._category_of(into)
            moved = [w for w, r in known.items() if r.canonical == word] + [word]
            rows = [
                WordRow(w, into, cluster, category, 1.0, "user", now) for w in dict.fromkeys(moved)
            ]
            if target is None or target.canonical != into:
                rows.append(WordRow(into, into, cluster, category, 1.0, "user", now))
            self.put(rows)
            found = self.conn.execute(
                "SELECT count(*) FROM relationship_words WHERE canonical = ?", (into,)
            ).fetchall()
        return int(found[0][0])  # type: ignore[arg-type]

    def _category_of(self, word: str) -> str:
        rows = self.conn.execute(
            "SELECT link_category FROM relationship_usage WHERE relationship = ?", (word,)
        ).fetchall()
        return str(rows[0][0]) if rows else "association"

    def usage(self, project: str | None = None) -> list[WordUse]:
        """Each word's use by the links (of ``project``'s memories when given), most used first."""
        where: str = ""
        params: tuple[str, ...] = ()
        if project is not None:
            where, params = (
                "WHERE from_id IN (SELECT id FROM memories WHERE project = ?) ",
                (project,),
            )
        rows = self.conn.execute(
            "SELECT relationship, min(link_category), count(*), min(created_at), "
            f"max(created_at), avg(confidence) FROM memory_links {where}"
            "GROUP BY relationship ORDER BY count(*) DESC, relationship",
            params,
        ).fetchall()
        return [WordUse(*r) for r in rows]  # type: ignore[arg-type]

    def parameter_words(
        self, project: str, *, taken: frozenset[str] = frozenset()
    ) -> list[ParameterWord]:
        """The words ``project``'s links promote to link tool parameters
        (:func:`.parameter_words.parameter_words`)."""
        return parameter_words(self.conn, project, taken=taken)

    def words(self) -> list[str]:
        """Every distinct relationship word ever used, most used first."""
        rows = self.conn.execute(
            "SELECT relationship FROM relationship_usage ORDER BY uses DESC, relationship"
        ).fetchall()
        return [str(r[0]) for r in rows]

    def graph_of(self, project: str) -> tuple[list[str], list[tuple[str, str, str]]]:
        """The ids of ``project``'s memories and its links among them as (from, to, word)."""
        ids = [
            str(r[0])
            for r in self.conn.execute(
                "SELECT id FROM memories WHERE project = ?", (project,)
            ).fetchall()
        ]
        edges = self.conn.execute(
            "SELECT l.from_id, l.to_id, l.relationship FROM memory_links l "
            "JOIN memories a ON a.id = l.from_id JOIN memories b ON b.id = l.to_id "
            "WHERE a.project = ? AND b.project = ?",
            (project, project),
        ).fetchall()
        return ids, [(str(a), str(b), str(w)) for a, b, w in edges]

    def recent_usage(self, since: int) -> dict[str, tuple[int, float]]:
        """Each word's links created at or after ``since``: (count, mean confidence)."""
        rows = self.conn.execute(
            "SELECT relationship, count(*), avg(confidence) FROM memory_links "
            "WHERE created_at >= ? GROUP BY relationship",
            (since,),
        ).fetchall()
        return {str(w): (int(n), float(c)) for w, n, c in rows}  # type: ignore[arg-type]

    def links_with(
        self, words: Iterable[str], *, project: str | None, limit: int
    ) -> list[LinkRecord]:
        """Links whose word is one of ``words`` (leaving ``project``'s memories), newest first."""
        chosen = list(dict.fromkeys(words))
        if not chosen:
            return []
        where = f"relationship IN ({','.join('?' * len(chosen))})"
        return self._store.links.newest(where, list(chosen), project=project, limit=limit)

    def uses(self, word: str) -> int:
        """How many links used ``word`` (0: never)."""
        rows = self.conn.execute(
            "SELECT uses FROM relationship_usage WHERE relationship = ?", (word,)
        ).fetchall()
        return int(rows[0][0]) if rows else 0  # type: ignore[arg-type]

    def recategorise(self, word: str, category: str) -> int:
        """Give ``word``'s links and usage row ``category``; returns the links changed.

        Moves ``links_version`` as a link insert does, so cached walks are thrown away.
        """
        with self.transaction():
            self.conn.execute(
                "UPDATE memory_links SET link_category = ? WHERE relationship = ? "
                "AND link_category != ?",
                (category, word, category),
            )
            changed = self.conn.changes()
            self.conn.execute(
                "UPDATE relationship_usage SET link_category = ? WHERE relationship = ?",
                (category, word),
            )
            if changed:
                self.conn.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'links_version'"
                )
        return int(changed)

    def link_count(self) -> int:
        """How many links the store holds."""
        return int(self.conn.execute("SELECT count(*) FROM memory_links").fetchall()[0][0])  # type: ignore[arg-type]
