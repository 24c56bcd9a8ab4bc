"""Removing text for good: what a forget, an edit or a redaction would leave behind, cleared.

SQLite keeps removed text where no query reads it: FTS5 keeps a deleted row's tokens in its
index segments until they are merged, freed pages and the free space of pages keep old
cells, and the write-ahead log keeps old page images until a checkpoint resets it. MAMA's
own derived rows quote text too: ``text_vectors`` is keyed by the text it embedded, the
session-start cache in ``meta`` (``brief:…``) is rendered text, and a decision's vector is
its narrative, which quotes the decisions of its chain (``services/indexing.narrative_text``).
:meth:`Erasure.compact` merges the full-text index, rebuilds the file (``VACUUM``, with
``secure_delete`` on) and truncates the log; the other methods drop or mask the derived rows.
Imports: standard library, apsw, leaves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ValidationError
from ..relationships import REPLACING
from .repository import Repository
from .sql import now_ms, select_in
from .text import fulltext_row
from .word_erasure import mask_words

MASK = "[REDACTED]"  # what a redacted string becomes: privacy.py's token
NEEDLE_MIN = 3  # a shorter pattern would mask parts of ordinary words everywhere
# meta.text_erased: a random token renewed whenever text leaves the store (a forget, an edit,
# a redaction); a process's cache of vectors keyed by text drops them when it moves, so
# another process's cache never writes a forgotten text back (services/search/views.py).
ERASED = "text_erased"
# The columns that hold free text, by table: plain text, then JSON (masked value by value).
_PLAIN = {
    "memories": ("topic", "content"),
    "memory_links": ("reason", "evidence", "context"),
    "archived_links": ("reason", "evidence", "context"),
    "link_suggestions": ("reason",),
    "share_conflicts": ("theirs", "mine"),
}
_JSON = {
    "memories": (
        "specifics",
        "evidence",
        "reasoning",
        "tension",
        "continuity",
        "outcome",
        "tags",
        "metadata",
    ),
    "link_suggestions": ("sources",),
    "legacy_rows": ("row",),
    "team_conflicts": ("theirs",),
}
_KEY = {
    "memories": "seq",
    "memory_links": "id",
    "archived_links": "id",
    "link_suggestions": "id",
    "legacy_rows": "id",
    "share_conflicts": "id",
    "team_conflicts": "id",
}


@dataclass
class Masked:
    """What a redaction changed: rows by table, the memories among them (seq) and cache rows."""

    rows: dict[str, int] = field(default_factory=dict)
    memories: list[int] = field(default_factory=list)
    cached: int = 0  # derived rows dropped: view vectors, session-start texts

    @property
    def total(self) -> int:
        return sum(self.rows.values())


class Erasure(Repository):
    """The clean-up behind a forget, an edit or a redaction: ``store.erasure``."""

    def chain(self, memory_ids: Iterable[str]) -> list[int]:
        """Row numbers of the memories whose narrative may quote any of ``memory_ids``: those
        chained to them by a replacing link, in either direction and any number of hops (a
        superseded decision is told with its chain's head). The memories themselves included."""
        seen = set(memory_ids)
        frontier = list(seen)
        while frontier:
            rows = self._neighbours(frontier)
            frontier = [n for n in rows if n not in seen]
            seen.update(frontier)
        found = select_in(self.conn, "SELECT seq FROM memories WHERE id IN ({})", seen)
        return sorted(int(r[0]) for r in found)

    def _neighbours(self, memory_ids: list[str]) -> set[str]:
        kinds = tuple(REPLACING)
        marks = ", ".join("?" * len(kinds))
        out: set[str] = set()
        for column, other in (("from_id", "to_id"), ("to_id", "from_id")):
            rows = select_in(
                self.conn,
                f"SELECT {other} FROM memory_links WHERE {column} IN ({{}}) "
                f"AND relationship IN ({marks})",
                memory_ids,
                *kinds,
            )
            out.update(str(r[0]) for r in rows)
        return out

    def existing(self, seqs: Iterable[int]) -> list[int]:
        """The row numbers among ``seqs`` that still name a memory."""
        found = select_in(self.conn, "SELECT seq FROM memories WHERE seq IN ({})", seqs)
        return sorted(int(r[0]) for r in found)

    def suggestions_of(self, memory_ids: Iterable[str]) -> int:
        """How many link suggestions name any of ``memory_ids`` (from or to)."""
        wanted = list(memory_ids)
        rows = select_in(
            self.conn, "SELECT id FROM link_suggestions WHERE from_id IN ({})", wanted
        ) + select_in(self.conn, "SELECT id FROM link_suggestions WHERE to_id IN ({})", wanted)
        return len({r[0] for r in rows})

    def drop_vectors(self, seqs: Iterable[int]) -> None:
        """Delete the vectors of ``seqs`` (made from text that is gone) and queue them to be
        embedded again; in-memory copies of the vectors reload."""
        wanted = list(dict.fromkeys(seqs))
        if not wanted:
            return
        with self.transaction():
            for seq in wanted:
                self.conn.execute("DELETE FROM memory_vectors WHERE rowid = ?", (seq,))
            self.conn.executemany(
                "INSERT OR IGNORE INTO embedding_queue(seq) SELECT seq FROM memories WHERE seq = ?",
                [(seq,) for seq in wanted],
            )
            self._store.vectors.bump_epoch()

    def token(self) -> str:
        """The state of erased text (``meta.text_erased``; "" before anything was erased)."""
        return self._store.meta(ERASED) or ""

    def drop_texts(self, needles: Iterable[str]) -> int:
        """Delete every cached row quoting one of ``needles`` (any case): the view vectors
        keyed by such a text, and every cached session-start text (re-rendered when next
        asked for); renew :data:`ERASED`. Returns how many rows went."""
        words = [n for n in dict.fromkeys(n.strip() for n in needles) if n]
        dropped = 0
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, lower(hex(randomblob(8))))",
                (ERASED,),
            )
            for needle in words:
                self.conn.execute(
                    "DELETE FROM text_vectors WHERE instr(lower(text), lower(?)) > 0", (needle,)
                )
                dropped += self.conn.changes()
            self.conn.execute("DELETE FROM meta WHERE key LIKE 'brief:%'")
            dropped += self.conn.changes()
        return dropped

    def mask(self, pattern: str) -> Masked:
        """Replace ``pattern`` (a literal string, any case) by :data:`MASK` in every column
        that holds free text, and drop the cached rows quoting it.

        A memory changed is given a new version, its full-text row is rewritten and its
        vector, with those of its chain, is dropped and queued again. Relationship words
        and link tags are masked as :mod:`.word_erasure` says; ids are left as they are.
        Raises ValidationError for a pattern shorter than :data:`NEEDLE_MIN` characters.
        """
        if len(pattern.strip()) < NEEDLE_MIN:
            raise ValidationError(
                [f"a pattern to redact has at least {NEEDLE_MIN} characters (got {pattern!r})"]
            )
        finder = re.compile(re.escape(pattern), re.IGNORECASE)
        done = Masked()
        with self.transaction():
            for table in dict.fromkeys([*_PLAIN, *_JSON]):
                changed = self._mask_table(table, finder, pattern)
                if changed:
                    done.rows[table] = len(changed)
                if table == "memories":
                    done.memories = changed
            if done.memories:
                self._renew(done.memories)
            done.rows |= mask_words(self.conn, pattern)
            # Relationship words are embedded with spaces ("acme integration").
            done.cached = self.drop_texts([pattern, pattern.replace("_", " ")])
        return done

    def _mask_table(self, table: str, finder: re.Pattern[str], pattern: str) -> list[int]:
        key = _KEY[table]
        plain, nested = _PLAIN.get(table, ()), _JSON.get(table, ())
        columns = [*plain, *nested]
        escaped = json.dumps(pattern, ensure_ascii=False)[1:-1]
        needles = list(dict.fromkeys([pattern.lower(), escaped.lower()]))
        where = " OR ".join(f"instr(lower({c}), ?) > 0" for c in columns for _ in needles)
        rows = self.conn.execute(
            f"SELECT {key}, {', '.join(columns)} FROM {table} WHERE {where}",
            tuple(n for _ in columns for n in needles),
        ).fetchall()
        changed: list[int] = []
        for row in rows:
            values = dict(zip(columns, row[1:], strict=True))
            new = {c: finder.sub(MASK, str(values[c])) for c in plain}
            new |= {c: _mask_json(str(values[c]), finder) for c in nested}
            new = {c: v for c, v in new.items() if v != values[c]}
            if not new:
                continue
            sets = ", ".join(f"{c} = :{c}" for c in new)
            self.conn.execute(
                f"UPDATE {table} SET {sets} WHERE {key} = :key", {**new, "key": row[0]}
            )
            changed.append(int(row[0]))  # type: ignore[arg-type]
        return changed

    def _renew(self, seqs: list[int]) -> None:
        """Masked memories: a new version, their full-text rows rewritten, vectors redone."""
        self.conn.executemany(
            "UPDATE memories SET version = version + 1, updated_at = ? WHERE seq = ?",
            [(now_ms(), seq) for seq in seqs],
        )
        rows = select_in(
            self.conn,
            "SELECT seq, id, topic, content, reasoning, tags FROM memories WHERE seq IN ({})",
            seqs,
        )
        for seq, _, topic, content, reasoning, tags in rows:
            self.conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
            text = fulltext_row(
                str(topic), str(content), json.loads(str(reasoning)), json.loads(str(tags))
            )
            self.conn.execute(
                "INSERT INTO memories_fts(rowid, topic, content, reasoning) VALUES (?, ?, ?, ?)",
                (seq, *text),
            )
        self.drop_vectors(self.chain(str(r[1]) for r in rows))

    def compact(self) -> bool:
        """Leave nothing removed in the file: merge the full-text index (FTS5 keeps deleted
        tokens in its segments until then), rebuild the file with ``secure_delete`` on (freed
        pages and the free space of pages keep old cells) and truncate the write-ahead log.

        Runs outside any transaction; takes the write lock for the rebuild. Returns whether
        the log was emptied: not while another connection still reads an older state (its
        old pages stay in the log until a later checkpoint).
        """
        self.conn.execute("PRAGMA secure_delete = ON")
        with self.transaction():
            self.conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
        self.conn.execute("VACUUM")
        busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
        return not busy


def _mask_json(text: str, finder: re.Pattern[str]) -> str:
    """A JSON text with ``finder`` masked in every string of it, keys included."""

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return finder.sub(MASK, value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {walk(k): walk(v) for k, v in value.items()}
        return value

    try:
        tree = json.loads(text)
    except ValueError:
        return finder.sub(MASK, text)
    masked = walk(tree)
    return text if masked == tree else json.dumps(masked, ensure_ascii=False)
