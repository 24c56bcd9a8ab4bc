"""Linking two saved memories on request: the relationship, WHY, tags, and word parameters.

``link_memories`` writes what the link tool asks for in one transaction: the link named by
``to_id`` + ``relationship`` and one link per word parameter (``inspired_by=<id>``), each with
the reason and tags given. A word parameter is accepted only while the project's links
promote that word (:mod:`~mama_plugin.storage.parameter_words`): a client holding an older
tool list is told which words are parameters now.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import ValidationError
from ...relationships import normalise
from ...schema.links import LinkMemoriesInput
from ...storage import LinkRecord, Redactions, Store
from ...storage.link_tags import LinkTags, clean_tags
from ...storage.relationship_words import RelationshipWords

# The link tool's own parameters: never a relationship word's.
TOOL_FIELDS = frozenset(LinkMemoriesInput.model_fields)


@dataclass
class Linked:
    """The links written (or found already there), their tags, and what was masked."""

    links: list[LinkRecord]
    tags: dict[int, tuple[str, ...]]
    redactions: Redactions = field(default_factory=Redactions)

    def as_dict(self) -> dict[str, object]:
        """Plain data (the tool's structured answer)."""
        return {
            "links": [ln.as_dict() | {"tags": list(self.tags.get(ln.id, ()))} for ln in self.links],
            "masked_secrets": self.redactions.counts,
        }


def promoted_words(store: Store, project: str) -> list[str]:
    """The relationship words that are parameters of the link tool in ``project`` now."""
    return [p.word for p in RelationshipWords(store).parameter_words(project, taken=TOOL_FIELDS)]


def link_memories(store: Store, project: str, args: LinkMemoriesInput) -> Linked:
    """Write the links ``args`` asks for, tagged; raise ValidationError (nothing written) for
    a word parameter the project does not promote, a bad tag or id, or a link the store
    refuses (a cycle, a self-link)."""
    words = set(args.words)
    if words:
        allowed = promoted_words(store, project)
        unknown = sorted(w for w in words if _spelled(w) not in allowed or _spelled(w) != w)
        if unknown:
            offered = ", ".join(allowed) if allowed else "none yet"
            raise ValidationError(
                [
                    f"unknown parameter {', '.join(unknown)}: link_memories takes from_id, "
                    "to_id + relationship, reason, tags, confidence, evidence, and the "
                    f"relationship words this project uses most as their own parameters "
                    f"({offered}; a word becomes one past 50 links with mean confidence "
                    "above 0.75)"
                ]
            )
    tags = clean_tags(args.tags)
    written: list[LinkRecord] = []
    redactions = Redactions()
    with store.transaction():
        for relationship, to_id in args.links():
            record, found = store.links.add(
                args.from_id,
                to_id,
                relationship,
                args.reason,
                evidence=args.evidence,
                confidence=args.confidence,
            )
            if tags:
                LinkTags(store).add(record.id, tags)
            written.append(record)
            redactions.add(found.counts)
    return Linked(written, LinkTags(store).of(ln.id for ln in written), redactions)


def _spelled(word: str) -> str:
    """The word's canonical spelling ("" when it cannot be a relationship word)."""
    try:
        return normalise(word)
    except ValueError:
        return ""
