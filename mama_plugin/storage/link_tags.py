"""Extra tags on a link: words beside its relationship, to group and filter links by.

A link says one thing with its relationship word ("inspired_by"); its tags say more about it
("perf", "security", "from-review"). They live in ``link_tags`` (one row a tag, going with
their link by cascade), so a link without tags costs nothing and the links table is unchanged.
A tag is spelled as given, trimmed, at most ``TAG_MAX`` characters, ``TAGS_MAX`` a link; a tag
that looks like a secret is refused.
"""

from __future__ import annotations

from collections.abc import Iterable

import apsw

from ..errors import ValidationError
from ..privacy import redact_text
from .records import LinkRecord
from .repository import Repository
from .sql import select_in

TAG_MAX = 64
TAGS_MAX = 20


def link_tags(conn: apsw.Connection, _dim: int) -> None:
    """The schema step: ``link_tags`` (link, tag), cascading with its link, indexed by tag."""
    conn.execute(
        """
        CREATE TABLE link_tags (
            link_id INTEGER NOT NULL REFERENCES memory_links(id) ON DELETE CASCADE,
            tag TEXT NOT NULL CHECK (trim(tag) <> ''),
            PRIMARY KEY (link_id, tag)
        ) WITHOUT ROWID;
        CREATE INDEX link_tags_by_tag ON link_tags(tag, link_id);
        """
    )


def clean_tags(tags: Iterable[str]) -> list[str]:
    """``tags`` trimmed, each once, in order. Raises ValidationError naming what to fix."""
    out: list[str] = []
    for raw in tags:
        tag = str(raw).strip()
        if not tag:
            raise ValidationError(["a link tag is empty — give a word such as 'perf'"])
        if len(tag) > TAG_MAX:
            raise ValidationError([f"link tag {tag[:20]!r}… is longer than {TAG_MAX} characters"])
        if redact_text(tag)[1]:
            raise ValidationError([f"link tag {tag[:8]!r}… looks like a secret — use a plain word"])
        if tag not in out:
            out.append(tag)
    if len(out) > TAGS_MAX:
        raise ValidationError([f"a link carries at most {TAGS_MAX} tags (got {len(out)})"])
    return out


class LinkTags(Repository):
    """The tags of the store's links."""

    def add(self, link_id: int, tags: Iterable[str]) -> tuple[str, ...]:
        """Tag a link (tags it has already stay once); return all its tags. Raises
        ValidationError for a bad tag or an unknown link."""
        chosen = clean_tags(tags)
        with self.transaction():
            if not self.conn.execute(
                "SELECT 1 FROM memory_links WHERE id = ?", (link_id,)
            ).fetchall():
                raise ValidationError([f"no link #{link_id}"])
            self.conn.executemany(
                "INSERT OR IGNORE INTO link_tags(link_id, tag) VALUES (?, ?)",
                [(link_id, tag) for tag in chosen],
            )
            mine = self.of([link_id]).get(link_id, ())
        if len(mine) > TAGS_MAX:
            raise ValidationError([f"a link carries at most {TAGS_MAX} tags (got {len(mine)})"])
        return mine

    def of(self, link_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
        """The tags of each of ``link_ids`` that has any, sorted."""
        rows = select_in(
            self.conn,
            "SELECT link_id, tag FROM link_tags WHERE link_id IN ({}) ORDER BY link_id, tag",
            list(dict.fromkeys(link_ids)),
        )
        out: dict[int, list[str]] = {}
        for link_id, tag in rows:
            out.setdefault(int(link_id), []).append(str(tag))
        return {k: tuple(sorted(v)) for k, v in out.items()}

    def tagged(self, tag: str, *, project: str | None, limit: int) -> list[LinkRecord]:
        """Links carrying ``tag`` (leaving ``project``'s memories when given), newest first."""
        where = "id IN (SELECT link_id FROM link_tags WHERE tag = ?)"
        return self._store.links.newest(where, [tag.strip()], project=project, limit=limit)
