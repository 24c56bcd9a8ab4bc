"""Embeddings in the store: the queue of memories awaiting one, the vectors, KNN, the model.

The model that produced the vectors is recorded in ``meta`` (``embedding_model``,
``embedding_dim``). Vectors from another model are meaningless next to these, so a mismatch
is an error that says to run ``mama reindex`` (a server of the new model re-embeds by itself:
:func:`..server.background.index_in_background`).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence

from ..errors import MamaError
from .repository import Repository
from .search_tables import create_vector_table
from .text import embedding_text

TEXTS_PER_QUERY = 400  # bound parameters per lookup (SQLite allows 32766 since 3.32)


class EmbeddingMismatchError(MamaError):
    """Raised when the configured embedding model differs from the one the store was built with."""


def to_blob(vector: Sequence[float]) -> bytes:
    """A vector as sqlite-vec reads it: little-endian float32."""
    return struct.pack(f"<{len(vector)}f", *vector)


def from_blob(blob: bytes) -> list[float]:
    """Unpack little-endian float32 bytes (see :func:`to_blob`) into a list of floats."""
    if len(blob) % 4:
        raise ValueError(f"a float32 vector blob has a multiple of 4 bytes, got {len(blob)}")
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


class Vectors(Repository):
    """The embeddings of one store: ``store.vectors``."""

    def recorded_model(self) -> tuple[str | None, int]:
        """(model name, dimension) of the stored vectors; the name is None before the first."""
        return self._store.meta("embedding_model"), int(self._store.meta("embedding_dim") or 0)

    def check_model(self, name: str, dim: int) -> None:
        """Raise EmbeddingMismatchError unless ``name``/``dim`` match the stored vectors.

        A store with no vectors yet adopts the model (and its dimension) on first use.
        """
        recorded, recorded_dim = self.recorded_model()
        if recorded is None and self.count() == 0:
            if dim != recorded_dim:
                self.reset(name, dim)
            else:
                self._store.set_meta("embedding_model", name)
            return
        if recorded != name or recorded_dim != dim:
            raise EmbeddingMismatchError(
                f"the store's vectors come from {recorded or 'another model'} ({recorded_dim} "
                f"dimensions) but the configured model is {name} ({dim} dimensions); "
                "run `mama reindex` to re-embed every memory with the new model (a session's "
                "server started since the change does it by itself)"
            )

    def reset(self, name: str, dim: int) -> None:
        """Drop every vector, size the index for ``dim`` and queue every memory again."""
        with self.transaction():
            self.conn.execute("DROP TABLE IF EXISTS memory_vectors")
            self.conn.execute("DELETE FROM text_vectors")  # another model's: never read again
            create_vector_table(self.conn, dim)
            self.bump_epoch()
            self.queue_all()
            self._store.set_meta("embedding_dim", str(dim))
            self._store.set_meta("embedding_model", name)

    def queue_all(self) -> None:
        """Queue every memory for (re-)embedding; one queued already stays queued once."""
        self.conn.execute("INSERT OR IGNORE INTO embedding_queue(seq) SELECT seq FROM memories")

    def bump_epoch(self) -> None:
        """Record that stored vectors were replaced or removed (in-memory copies must reload)."""
        with self.transaction():
            self.conn.execute("DELETE FROM vector_log")
            self.conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors_epoch'"
            )

    def state(self) -> tuple[int, int]:
        """(epoch, last vector_log id): cheap to read; changes whenever vectors change."""
        epoch = self._store.meta("vectors_epoch") or "0"
        row = self.conn.execute("SELECT coalesce(max(id), 0) FROM vector_log").fetchall()[0]
        return int(epoch), int(row[0] or 0)

    def load(self, after: int = 0) -> list[tuple[int, str, bytes]]:
        """(seq, project, float32 blob) of the vectors logged after log id ``after`` (0: all)."""
        if after <= 0:
            rows = self.conn.execute("SELECT rowid, project, embedding FROM memory_vectors")
        else:
            rows = self.conn.execute(
                "SELECT v.rowid, v.project, v.embedding FROM memory_vectors v WHERE v.rowid IN "
                "(SELECT DISTINCT seq FROM vector_log WHERE id > ?)",
                (after,),
            )
        return [(int(seq), str(project), bytes(blob)) for seq, project, blob in rows.fetchall()]  # type: ignore[arg-type]

    def count(self) -> int:
        """How many memories have a vector."""
        value = self.conn.execute("SELECT count(*) FROM memory_vectors").fetchall()[0][0]
        return int(value or 0)

    def count_pending(self, *, project: str | None = None) -> int:
        """How many memories (of ``project``, or of any) wait for an embedding."""
        if project is None:
            value = self.conn.execute("SELECT count(*) FROM embedding_queue").fetchall()[0][0]
        else:
            value = self.conn.execute(
                "SELECT count(*) FROM embedding_queue q JOIN memories m ON m.seq = q.seq "
                "WHERE m.project = ?",
                (project,),
            ).fetchall()[0][0]
        return int(value or 0)

    def queued(self) -> list[int]:
        """Row numbers of every memory waiting for an embedding, in order (no text read)."""
        rows = self.conn.execute("SELECT seq FROM embedding_queue ORDER BY seq").fetchall()
        return [int(seq) for (seq,) in rows]  # type: ignore[arg-type]

    def pending(self, limit: int, *, project: str | None = None) -> list[tuple[int, str]]:
        """Up to ``limit`` queued memories (of ``project``, or any) as (seq, text), oldest first."""
        sql = (
            "SELECT m.seq, m.topic, m.content, m.reasoning FROM embedding_queue q "
            "JOIN memories m ON m.seq = q.seq "
        )
        if project is None:
            found = self.conn.execute(sql + "ORDER BY q.seq LIMIT ?", (limit,))
        else:
            found = self.conn.execute(
                sql + "WHERE m.project = ? ORDER BY q.seq LIMIT ?", (project, limit)
            )
        rows = found.fetchall()
        return [
            (int(seq), embedding_text(str(topic), str(content), json.loads(str(reasoning))))  # type: ignore[arg-type]
            for seq, topic, content, reasoning in rows
        ]

    def put(self, items: Sequence[tuple[int, Sequence[float]]]) -> None:
        """Store vectors for queued memories (by seq) and take them off the queue, atomically.

        A memory no longer queued was embedded by another process meanwhile (or deleted): its
        vector is skipped, so two embedders never write one memory twice.
        """
        with self.transaction():
            for seq, vector in items:
                self.conn.execute("DELETE FROM embedding_queue WHERE seq = ?", (seq,))
                if not self.conn.changes():
                    continue
                rows = self.conn.execute("SELECT project FROM memories WHERE seq = ?", (seq,))
                found = rows.fetchall()
                if not found:
                    continue
                replaced = self.conn.execute(
                    "SELECT 1 FROM memory_vectors WHERE rowid = ?", (seq,)
                ).fetchall()
                self.conn.execute("DELETE FROM memory_vectors WHERE rowid = ?", (seq,))
                self.conn.execute(
                    "INSERT INTO memory_vectors(rowid, project, embedding) VALUES (?, ?, ?)",
                    (seq, found[0][0], to_blob(vector)),
                )
                if replaced:
                    self.bump_epoch()  # an in-memory copy holds the old vector
                self.conn.execute("INSERT INTO vector_log(seq) VALUES (?)", (seq,))

    def any(self) -> bool:
        """Whether any memory has a vector (one row read, not a count)."""
        found = self.conn.execute("SELECT EXISTS (SELECT 1 FROM memory_vectors)").fetchall()
        return bool(found[0][0])

    def few(self, n: int, *, project: str | None = None) -> bool:
        """Whether ``project`` (or the store) holds at most ``n`` memories, hence vectors: an
        index probe of at most ``n + 1`` rows (sqlite-vec's own count reads its chunks)."""
        where, params = ("WHERE project = ? ", (project,)) if project is not None else ("", ())
        found = self.conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM memories {where}LIMIT ?)", (*params, n + 1)
        ).fetchall()
        return int(found[0][0]) <= n  # type: ignore[arg-type]

    def of_texts(self, model: str, texts: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors ``model`` gave ``texts`` (those it gave one), by text."""
        found: dict[str, list[float]] = {}
        unique = list(dict.fromkeys(texts))
        for start in range(0, len(unique), TEXTS_PER_QUERY):
            chunk = unique[start : start + TEXTS_PER_QUERY]
            rows = self.conn.execute(
                f"SELECT text, vector FROM text_vectors WHERE model = ? AND text IN "
                f"({', '.join('?' * len(chunk))})",
                (model, *chunk),
            ).fetchall()
            found.update((str(text), from_blob(bytes(blob))) for text, blob in rows)  # type: ignore[arg-type]
        return found

    def put_texts(self, model: str, items: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Store the vectors ``model`` gave these texts (replacing any it gave before)."""
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO text_vectors(model, text, vector) VALUES (?, ?, ?)",
                [(model, text, to_blob(vector)) for text, vector in items],
            )

    def knn(
        self, vector: Sequence[float], k: int, *, project: str | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest memories as (seq, cosine distance), nearest first."""
        if k <= 0:
            return []
        sql = "SELECT rowid, distance FROM memory_vectors WHERE embedding MATCH ? AND k = ?"
        params: tuple[object, ...] = (to_blob(vector), k)
        if project is not None:
            sql += " AND project = ?"
            params += (project,)
        rows = self.conn.execute(sql + " ORDER BY distance", params).fetchall()
        # A zero vector has no direction: sqlite-vec's cosine distance is NULL, the most
        # distant there is (1.0, as a product with it gives).
        return [(int(seq), 1.0 if dist is None else float(dist)) for seq, dist in rows]  # type: ignore[arg-type]
