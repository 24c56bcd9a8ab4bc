"""MAMA's own JSON dump: every memory, link (with its tags) and link suggestion with every
column, the files each memory cites as they were recorded, how each confidence moved, the
dated notes memories gained and what was recorded of the links' relationship words,
re-importable as it is."""

from __future__ import annotations

from typing import Any

from ..errors import LegacyImportError, ValidationError
from ..storage import NewMemory, Store, now_ms
from ..storage.confidence import change_from_dict
from ..storage.file_states import CitedFile
from ..storage.link_tags import LinkTags
from ..storage.notes import note_from_dict
from .result import LegacyResult
from .words import export_words, restore_words

FORMAT = "mama-export"
FORMAT_VERSION = 1
# The dump leaves out what the store assigns itself: row numbers and link ids.
_MEMORY_SKIP = frozenset({"seq"})
_LINK_SKIP = frozenset({"id"})
_SUGGESTION_SKIP = frozenset({"id", "link_id"})  # link_id is found again on import


def export_data(store: Store, *, project: str | None = None) -> dict[str, Any]:
    """Return the dump of one project (or all): memories oldest first, then their links and
    link suggestions (pending or judged, so a judged pair is not proposed again)."""
    memories = [
        {k: v for k, v in m.as_dict().items() if k not in _MEMORY_SKIP}
        for m in store.memories.iter(project=project)
    ]
    ids = {m["id"] for m in memories}
    kept = [ln for ln in store.links.iter() if ln.from_id in ids and ln.to_id in ids]
    tags = LinkTags(store).of(ln.id for ln in kept)
    links = [
        {k: v for k, v in ln.as_dict().items() if k not in _LINK_SKIP}
        | {"tags": list(tags.get(ln.id, ()))}
        for ln in kept
    ]
    suggestions = [
        {k: v for k, v in s.as_dict().items() if k not in _SUGGESTION_SKIP}
        for s in store.suggestions.iter(project=project)
        if s.from_id in ids and s.to_id in ids
    ]
    # The files as recorded when each memory was saved, judged or verified: restored as they
    # are, so a memory whose file changed since is still flagged after a restore (recording
    # them again at import would take today's files as verified).
    cited = [c.as_dict() for c in store.file_states.of_project(project) if c.memory_id in ids]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "schema_version": store.schema_version,
        "exported_at": now_ms(),
        "project": project,
        "memories": memories,
        "links": links,
        "link_suggestions": suggestions,
        "memory_files": cited,
        # How each confidence moved: restored with it, so `mama learn` does not apply again
        # an outcome the exported confidence already holds.
        "confidence_history": [c.as_dict() for c in store.confidence.of_many(ids)],
        # The notes memories gained (both ends in the dump): restored as they were dated.
        "memory_notes": [n.as_dict() for n in store.notes.all_of(ids)],
        # What tidy and merges recorded of the links' words (canonical form, cluster, category).
        "relationship_words": export_words(store, {ln.relationship for ln in kept}),
    }


def import_dump(store: Store, data: dict[str, Any]) -> LegacyResult:
    """Write a dump's memories, links, link suggestions and the files its memories cite into
    ``store`` (inside the caller's transaction).

    Memories whose id is already stored, and suggestions for a pair already judged, are
    counted as present and left alone; so are the recorded files of a memory already stored
    (what it records stands).
    """
    if data.get("format") != FORMAT:
        raise LegacyImportError("not a MAMA export: its 'format' field is not 'mama-export'")
    if int(data.get("format_version", 0)) > FORMAT_VERSION:
        raise LegacyImportError(
            f"this export uses format version {data['format_version']}; upgrade MAMA to read it"
        )
    result = LegacyResult()
    memories = data.get("memories") or []
    present = store.memories.existing_ids(str(m.get("id")) for m in memories)
    for index, memory in enumerate(memories):
        result.tally("memories", "source")
        if memory.get("id") in present:
            result.tally("memories", "already_present")
            continue
        fields = {k: v for k, v in memory.items() if k not in _MEMORY_SKIP}
        outcome = dict(fields.pop("outcome", None) or {})
        outcome["status"] = fields.pop("outcome_status", "PENDING")
        try:
            store.memories.insert(NewMemory(**fields, outcome=outcome))
        except (TypeError, ValidationError) as exc:
            raise LegacyImportError(f"memories[{index}] ({memory.get('id')}): {exc}") from exc
        result.tally("memories", "imported")
    _restore_files(store, data.get("memory_files") or [], present, result)
    _restore_history(store, data.get("confidence_history") or [], present, result)
    _restore_notes(store, data.get("memory_notes") or [], result)
    # Before the links: the category recorded for a word is the one its new links take.
    restore_words(store, data.get("relationship_words") or [], result)

    def add_link(link: dict[str, Any]) -> None:
        fields = {k: v for k, v in link.items() if k not in _LINK_SKIP | {"link_category"}}
        tags = fields.pop("tags", None) or []
        record, _ = store.links.add(
            fields.pop("from_id"),
            fields.pop("to_id"),
            fields.pop("relationship"),
            fields.pop("reason"),
            mark_target=False,
            **fields,
        )
        if tags:
            LinkTags(store).add(record.id, tags)

    for _ in result.parsed("links", data.get("links") or [], add_link):
        result.tally("links", "imported")
    suggestions = data.get("link_suggestions") or []
    for restored in result.parsed("link_suggestions", suggestions, store.suggestions.restore):
        result.tally("link_suggestions", "imported" if restored else "already_present")
    return result


def _restore_files(store: Store, rows: list[Any], present: set[str], result: LegacyResult) -> None:
    """Write back the recorded files of the memories this import wrote; those of a memory
    already stored count as present, those of a memory the store does not hold as
    ``no_memory``."""
    cited = list(result.parsed("memory_files", rows, CitedFile.from_dict))
    held = store.memories.existing_ids(c.memory_id for c in cited)
    for c in cited:
        if c.memory_id not in held:
            result.tally("memory_files", "no_memory")
        elif c.memory_id in present or not store.file_states.restore(c):
            result.tally("memory_files", "already_present")
        else:
            result.tally("memory_files", "imported")


def _restore_history(
    store: Store, rows: list[Any], present: set[str], result: LegacyResult
) -> None:
    """Write back the confidence history of the memories this import wrote."""
    for change in result.parsed("confidence_history", rows, change_from_dict):
        if change.memory_id in present or not store.confidence.restore(change):
            result.tally("confidence_history", "already_present")
        else:
            result.tally("confidence_history", "imported")


def _restore_notes(store: Store, rows: list[Any], result: LegacyResult) -> None:
    """Write back the dump's notes (a note already stored counts as present, one whose
    memory or trigger the store does not hold as ``no_memory``)."""
    for note in result.parsed("memory_notes", rows, note_from_dict):
        if len(store.memories.existing_ids([note.memory_id, note.trigger_id])) < 2:
            result.tally("memory_notes", "no_memory")
        elif store.notes.add([note]):
            result.tally("memory_notes", "imported")
        else:
            result.tally("memory_notes", "already_present")
