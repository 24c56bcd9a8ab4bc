"""What the link tool takes: two memories, the relationship and WHY, tags, and the words a
project uses so often they are parameters of their own (no I/O)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from ..relationships import normalise
from .inputs import Confidence, LinkReason, LinkTagWords, MemoryId
from .narrative import ITEM_MAX, Strict, _listify


class LinkMemoriesInput(Strict):
    """A link between two saved memories: from_id --relationship--> to_id, with WHY."""

    # Parameters a project's listed schema adds (a relationship word used more than 50 times
    # with mean confidence above 0.75, e.g. inspired_by) arrive in ``words`` (word → the
    # memory from_id links to with it); services/graph/linking.py checks each against the store.

    from_id: Annotated[MemoryId, Field(description="The memory the link starts from.")]
    reason: LinkReason
    to_id: Annotated[
        MemoryId | None, Field(description="The memory it links to (with relationship).")
    ] = None
    relationship: Annotated[
        str | None,
        Field(
            max_length=64,
            description="Any verb phrase: inspired_by, refines, depends_on, "
            "addresses_failure_of, ... (with to_id).",
        ),
    ] = None
    tags: LinkTagWords = []
    confidence: Confidence = 1.0
    evidence: Annotated[str, Field(max_length=ITEM_MAX)] = ""
    words: SkipJsonSchema[dict[str, MemoryId]] = {}

    _tag_list = field_validator("tags", mode="before")(lambda cls, v: _listify(v))

    @model_validator(mode="before")
    @classmethod
    def _word_parameters(cls, data: Any) -> Any:
        """Every name that is not a field is a relationship word's parameter (word → id)."""
        if not isinstance(data, dict):
            return data
        fields = set(cls.model_fields)
        extra = {k: v for k, v in data.items() if k not in fields}
        if not extra:
            return data
        kept = {k: v for k, v in data.items() if k in fields}
        given = kept.get("words") or {}
        if not isinstance(given, dict):  # the field's own check says what is wrong with it
            return kept
        return kept | {"words": {**given, **extra}}

    @field_validator("relationship")
    @classmethod
    def _normalise(cls, value: str | None) -> str | None:
        return normalise(value) if value is not None else None

    @model_validator(mode="after")
    def _some_link(self) -> LinkMemoriesInput:
        if (self.to_id is None) != (self.relationship is None):
            raise ValueError("give to_id and relationship together (or a word's own parameter)")
        if self.to_id is None and not self.words:
            raise ValueError(
                "name the link: to_id and relationship, or a relationship word's parameter "
                "such as inspired_by=<id> when the tool lists one"
            )
        return self

    def links(self) -> list[tuple[str, str]]:
        """(relationship, to_id) of every link asked for, in the order given."""
        asked = [(self.relationship, self.to_id)] if self.to_id and self.relationship else []
        return [*asked, *self.words.items()]
