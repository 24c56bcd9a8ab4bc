"""The store's search reads: full-text ranks, and the light columns ranking needs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from sys import intern
from typing import TYPE_CHECKING, Any, cast

from .diagnosis import FULL_TEXT
from .fts import any_of, query_words, quoted
from .rank_cache import SELECT_MEMBER, Member, RankCache
from .records import MemoryRecord, RankFields
from .repository import Repository
from .sql import Scope, projects_in, scope, select_in

if TYPE_CHECKING:
    from .store import Store

COMMON_WORD_MIN = 2_000  # see Search.text_ranks
COUNTS_KEPT = 10_000  # words whose counts are kept for one state of the text


class Search(Repository):
    """Full-text and ranking reads of one store: ``store.search``."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        # (text_version, memories, {word: memories containing it}): see _counts.
        self._cached: tuple[Any, int, dict[str, int]] | None = None
        self._ranks = RankCache()

    def text(
        self, query: str, *, project: str | None = None, limit: int = 10
    ) -> list[tuple[MemoryRecord, float]]:
        """Full-text (BM25) matches for the words of ``query`` as records, best first."""
        ranks = self.text_ranks(query, project=project, limit=limit)
        records = self._store.memories.get_by_seq(seq for seq, _ in ranks)
        return [(records[seq], score) for seq, score in ranks if seq in records]

    def text_ranks(
        self, query: str | Sequence[str], *, project: Scope = None, limit: int = 50
    ) -> list[tuple[int, float]]:
        """Full-text (BM25) matches as (seq, score), best first, without loading the rows.

        ``query`` is free text, or its words already read (:func:`~mama_plugin.text.tokens`),
        matched as given. A word found in more than half of all memories carries almost no
        BM25 weight (IDF ≤ log 2) yet costs the most to score; once its list is long
        (``COMMON_WORD_MIN`` memories) it is left out, unless every word is that common.
        """
        words = query_words(query) if isinstance(query, str) else list(query)
        if not words or FULL_TEXT in self._store.degraded:  # damaged: searched without it
            return []
        total, frequency = self._counts(words)
        common = {w for w, n in frequency.items() if n >= COMMON_WORD_MIN and n > total / 2}
        kept = [w for w in words if w not in common and frequency[w]] or words
        expression = any_of(kept)
        if project is None or self._only_project() in projects_in(project):
            rows = self.conn.execute(
                "SELECT rowid, -bm25(memories_fts) AS score FROM memories_fts "
                "WHERE memories_fts MATCH ? ORDER BY score DESC LIMIT ?",
                (expression, limit),
            )
        else:
            where, params = scope(project, None, alias="m")
            rows = self.conn.execute(
                "SELECT f.rowid, -bm25(memories_fts) AS score FROM memories_fts f "
                f"JOIN memories m ON m.seq = f.rowid {where} "
                "AND memories_fts MATCH ? ORDER BY score DESC LIMIT ?",
                (*params, expression, limit),
            )
        return [(int(seq), float(score or 0.0)) for seq, score in rows.fetchall()]  # type: ignore[arg-type]

    def _counts(self, words: Sequence[str]) -> tuple[int, dict[str, int]]:
        """How many memories there are, and how many contain each word: counted once per
        state of the searchable text (``meta.text_version``, renewed by every insert, delete
        and text edit of a memory), so a save is counted by the next search."""
        with self._store.snapshot():  # the token and the counts from one state
            token = self.conn.execute(
                "SELECT value FROM meta WHERE key = 'text_version'"
            ).fetchall()
            state = token[0][0] if token else None
            cached = self._cached
            if state is None or cached is None or cached[0] != state:
                cached = (state, self._memory_count(), {})
                if state is not None:
                    self._cached = cached
            frequency = cached[2]
            if len(frequency) > COUNTS_KEPT:
                frequency.clear()
            for word in words:
                if word not in frequency:
                    frequency[word] = self._document_frequency(word)
            return cached[1], {w: frequency[w] for w in words}

    def _document_frequency(self, word: str) -> int:
        """How many memories contain ``word`` (as the index tokenizes it)."""
        row = self.conn.execute(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (quoted(word),)
        ).fetchall()[0]
        return int(row[0] or 0)

    def _only_project(self) -> str | None:
        """The project every memory belongs to, or None when there are several (or none).

        Two index probes: a filter that keeps every row is skipped instead of joined.
        """
        # One aggregate per query: SQLite answers a lone min() or max() from the index.
        low = self.conn.execute("SELECT min(project) FROM memories").fetchall()[0][0]
        high = self.conn.execute("SELECT max(project) FROM memories").fetchall()[0][0]
        return str(low) if low is not None and low == high else None

    def _memory_count(self) -> int:
        row = self.conn.execute("SELECT count(*) FROM memories").fetchall()[0]
        return int(row[0] or 0)

    def changed(self, *, project: str, type: str, limit: int) -> list[tuple[int, str, int, int]]:
        """(seq, id, updated_at, version) of the memories ``Memories.latest`` returns, in its
        order, without reading their narrative (every edit of what a memory says bumps
        ``version``)."""
        where, params = scope(project, type)
        rows = self.conn.execute(
            f"SELECT seq, id, updated_at, version FROM memories{where} "
            "ORDER BY updated_at DESC, seq DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [(int(a), str(b), int(c), int(d)) for a, b, c, d in rows]  # type: ignore[arg-type]

    def rank_fields(
        self, seqs: Iterable[int], *, tags: Sequence[str] = ()
    ) -> dict[int, RankFields]:
        """The few columns ranking needs, without decoding any narrative JSON (kept in memory
        between searches: :mod:`.rank_cache`).

        With ``tags``, only the memories that carry every one of them (exact, case-insensitive).
        """
        wanted = list(dict.fromkeys(seqs))
        if any(t.strip() for t in tags):
            return self._rank_rows(wanted, tags)
        return self._ranks.fields(self.conn, wanted, self._rank_rows)

    def _rank_rows(self, wanted: list[int], tags: Sequence[str] = ()) -> dict[int, RankFields]:
        """The ranking columns of each of ``wanted`` that exists and carries every one of
        ``tags``, read from SQLite."""
        wanted_tags = sorted({t.strip().lower() for t in tags if t.strip()})
        having = "".join(
            " AND EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE lower(value) = ?)"
            for _ in wanted_tags
        )
        rows = select_in(
            self.conn,
            "SELECT seq, confidence, outcome_status, status, created_at, times_used, type, "
            "last_used, project, session_id FROM memories WHERE seq IN ({})" + having,
            wanted,
            *wanted_tags,
        )
        out: dict[int, RankFields] = {}
        for row in rows:
            seq, confidence, outcome, status, at, used, kind, last, project, session = cast(
                tuple[int, float, str, str, int, int, str, int | None, str, str], row
            )
            # The names repeat across rows: one string each, however many rows hold it.
            names = intern(outcome), intern(status), intern(kind), intern(project)
            out[seq] = RankFields(
                seq,
                confidence,
                names[0],
                names[1],
                at,
                used,
                names[2],
                last,
                names[3],
                intern(session),
            )
        return out

    def ids_of(self, seqs: Iterable[int]) -> dict[int, str]:
        """The text id of each memory."""
        wanted = list(dict.fromkeys(seqs))
        out: dict[int, str] = {}
        for start in range(0, len(wanted), 900):  # stay under SQLite's variable limit
            chunk = wanted[start : start + 900]
            rows = self.conn.execute(
                f"SELECT seq, id FROM memories WHERE seq IN ({','.join('?' * len(chunk))})", chunk
            ).fetchall()
            out.update((int(seq), str(memory_id)) for seq, memory_id in rows)  # type: ignore[arg-type]
        return out

    def texts(self, seqs: Iterable[int]) -> dict[int, tuple[str, str]]:
        """(topic, content) of each memory, without decoding any narrative JSON."""
        wanted = list(dict.fromkeys(seqs))
        out: dict[int, tuple[str, str]] = {}
        for start in range(0, len(wanted), 900):  # stay under SQLite's variable limit
            chunk = wanted[start : start + 900]
            rows = self.conn.execute(
                "SELECT seq, topic, content FROM memories "
                f"WHERE seq IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            for seq, topic, content in rows:
                out[int(seq)] = (str(topic or ""), str(content or ""))  # type: ignore[arg-type]
        return out

    def sessions(self, names: Iterable[str], *, project: Scope = None) -> dict[str, list[int]]:
        """Every memory of each named session (of ``project`` when given), in time order
        (kept in memory between searches: :mod:`.rank_cache`)."""
        wanted = sorted({name for name in names if name})
        if not wanted:
            return {}
        keys = None if project is None else projects_in(project)
        order = {
            name: [seq for seq, where in members if keys is None or where in keys]
            for name, members in self._ranks.sessions(self.conn, wanted, self._members).items()
        }
        return {name: seqs for name, seqs in order.items() if seqs}

    def _members(self, names: list[str]) -> dict[str, list[tuple[int, Member]]]:
        """Every memory of each session in ``names``, in time order, read from SQLite."""
        rows = select_in(
            self.conn,
            SELECT_MEMBER + " WHERE session_id IN ({}) ORDER BY session_id, created_at, seq",
            names,
        )
        order: dict[str, list[tuple[int, Member]]] = {}
        for seq, session, project, created in rows:
            order.setdefault(str(session), []).append(
                (int(seq), (str(session), str(project), int(created)))
            )
        return order
