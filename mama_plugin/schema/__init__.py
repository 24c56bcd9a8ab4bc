"""Schema room: pydantic models of memories, links and tool inputs. No I/O."""

from .edits import ForgetInput, PromoteInput, UpdateInput
from .inputs import (
    VERIFIED,
    CheckpointInput,
    ContextInput,
    DecisionInput,
    InsightInput,
    LinkInput,
    OutcomeInput,
    SupersedeInput,
)
from .narrative import (
    Alternative,
    Continuity,
    EvidenceItem,
    NextStep,
    Outcome,
    Reasoning,
    Tension,
)
from .queries import (
    LoadCheckpointInput,
    LoadContextInput,
    MoreToolsInput,
    SearchByContextInput,
    SearchByTopicInput,
    SearchRecentInput,
)
from .validation import parse

__all__ = [
    "VERIFIED",
    "Alternative",
    "CheckpointInput",
    "ContextInput",
    "Continuity",
    "DecisionInput",
    "EvidenceItem",
    "ForgetInput",
    "InsightInput",
    "LinkInput",
    "LoadCheckpointInput",
    "LoadContextInput",
    "MoreToolsInput",
    "NextStep",
    "Outcome",
    "OutcomeInput",
    "PromoteInput",
    "Reasoning",
    "SearchByContextInput",
    "SearchByTopicInput",
    "SearchRecentInput",
    "SupersedeInput",
    "Tension",
    "UpdateInput",
    "parse",
]
