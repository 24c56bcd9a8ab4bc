"""Narrative drafting: a thin "Use PostgreSQL" becomes a story worth reviewing and saving.

:func:`draft_narrative` combines three sources, in this order of trust:

1. what the caller (Claude) already wrote — never overwritten;
2. the local model's proposal (:mod:`.runtime`), constrained to :class:`DraftedNarrative` and
   then *grounded*: an item whose words are mostly not in the conversation, or whose numbers
   the conversation never states, is dropped — a small model copies its examples;
3. the deterministic extractor (:mod:`.extract`), which also supplies all evidence (from the
   transcript's tool calls only) and the specifics.

For the primary reason, the model's and the extractor's best candidates are graded
(:func:`~mama_plugin.services.saving.quality.reason_quality`) and the better one wins (the
model on a tie). Nothing is saved: the result is a proposal for a person or Claude to review.

:func:`draft_narrative` does it in one call. A server that must not wait for the model past a
deadline takes the steps itself: :func:`read` (the extractor, and the model's prompt), the
model's generation as a job, then :func:`compose` with whatever the model gave in time.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..privacy import redact_tree
from ..schema.assist import DraftedNarrative, DraftRequest
from ..services.saving.quality import RANK, reason_quality
from ..text import numbers, split, tokens, unique, words
from ..transcript import Digest
from .draft_once import once
from .extract import Extracted, extract
from .models import LAYERS
from .runtime import Generation, Model, Prompt

MAX_TOKENS = 320
GROUNDED_SHARE = 0.6
INSTRUCTIONS = (
    "Each record turns a conversation about a software decision into JSON: the primary "
    "reason (why, with the concrete fact), secondary reasons, alternatives that were weighed "
    "and why they lost, unresolved concerns, and next steps. Use only facts the conversation "
    "states; leave a list empty when it says nothing."
)
EXAMPLE = (
    "Decision: Enable SQLite WAL mode for the desktop app.\n"
    "user: the app freezes while it syncs\n"
    "assistant: Readers block on the writer during sync. WAL lets reads continue while the "
    "sync writes: the sync test went from 4.2 s to 0.9 s. A shared-cache pool was considered "
    "but it still serialises writes. WAL leaves -wal files beside the database, so backups must "
    "copy them. Next: update the backup script.",
    '{"primary": "Readers blocked on the writer during sync; with WAL the sync test went from '
    '4.2 s to 0.9 s", "secondary": ["WAL lets reads continue while the sync writes"], '
    '"alternatives": [{"option": "shared-cache pool", "rejected_because": "it still '
    'serialises writes"}], "concerns": ["backups must copy the -wal files too"], '
    '"next_steps": ["Update the backup script"]}',
)
_DIGITS = re.compile(r"\d[\d,.]*\d|\d")
_COMPOUND = re.compile(r"[a-z0-9]+(?:[_./-]+[a-z0-9]+)+", re.I)


@dataclass
class Draft:
    """A proposed narrative (``save_decision`` arguments) and where each layer came from."""

    proposal: dict[str, Any]
    sources: dict[str, str]  # layer -> caller | model | extractor | transcript | none
    model: str  # what the model contributed, in words
    generation: Generation[DraftedNarrative] | None = None
    dropped: list[str] = field(default_factory=list)  # model items not grounded in the text
    missing: list[str] = field(default_factory=list)  # layers nothing could fill

    def as_text(self, home: Path) -> str:
        """The draft for a person or a model to review (``templates/draft.md.j2``; ``home``
        holds the user's overrides)."""
        from ..services.render import render

        return render(
            "draft.md.j2",
            home,
            p=self.proposal,
            sources=self.sources,
            model=self.model,
            dropped=self.dropped,
            proposal_json=json.dumps(self.proposal, ensure_ascii=False),
        ).strip()

    def as_data(self) -> dict[str, Any]:
        """The draft as plain data (what the tool returns)."""
        gen = self.generation
        timing = None
        if gen is not None and gen.outcome != "unavailable":
            timing = {
                "outcome": gen.outcome,
                "attempts": gen.attempts,
                "load_s": gen.load_s,
                "first_token_s": gen.first_token_s,
                "total_s": gen.total_s,
                "tokens": gen.tokens,
            }
        return {
            "saved": False,
            "proposal": self.proposal,
            "sources": self.sources,
            "model": self.model,
            "generation": timing,
            "dropped": self.dropped,
            "missing": self.missing,
        }


@dataclass
class Reading:
    """What a draft is made from: the extractor's findings, the conversation they were read
    from, and the model's prompt (None when there is no conversation to give it)."""

    found: Extracted
    conversation: str
    prompt: Prompt | None


def read(request: DraftRequest, digest: Digest | None = None) -> Reading:
    """Run the extractor on ``request``'s context and the session's ``digest``; no model."""
    found = extract(request.decision, request.context, digest or Digest())
    prompt = None
    if found.source_text.strip():
        prompt = Prompt(INSTRUCTIONS, [EXAMPLE], f"Decision: {request.decision}", found.source_text)
    return Reading(found, f"{request.decision}\n{found.source_text}", prompt)


def ask(
    model: Model, prompt: Prompt, timeout_s: float | None = None
) -> Generation[DraftedNarrative]:
    """The model's proposal for ``prompt`` (a :func:`read`'s); never raises for model trouble."""
    return model.generate(prompt, DraftedNarrative, max_tokens=MAX_TOKENS, timeout_s=timeout_s)


def compose(
    request: DraftRequest,
    reading: Reading,
    generation: Generation[DraftedNarrative] | None,
    note: str,
    *,
    personal: bool = True,
    layers: frozenset[str] = LAYERS,
) -> Draft:
    """The draft from ``reading`` and the model's ``generation`` (None: the extractor's alone),
    with ``note`` saying what the model did (:func:`model_note`). The model's items are used
    for ``layers`` only (a profile's measured jobs, :mod:`.models`). Secrets (and personal
    data, unless ``personal=False``) the draft quotes are masked."""
    proposed = generation.value if generation is not None else None
    draft = _merge(request, reading.found, proposed, reading.conversation, layers)
    draft.proposal = once(draft.proposal)  # each fact once: the reviewer saves what it reads
    draft.model, draft.generation = note, generation
    # A draft is shown and then saved as it stands: what it quotes passes the privacy filter.
    draft.proposal, _ = redact_tree(draft.proposal, personal=personal)
    draft.dropped, _ = redact_tree(draft.dropped, personal=personal)
    return draft


def draft_narrative(
    request: DraftRequest,
    digest: Digest | None = None,
    *,
    assistant: Model | None = None,
    timeout_s: float | None = None,
    personal: bool = True,
    layers: frozenset[str] = LAYERS,
    skipped: str = "",
) -> Draft:
    """Draft ``request``'s narrative from its context and the session's ``digest``.

    Never raises for model trouble: without a model, past the timeout, or when the model's
    output stays invalid, the extractor's draft stands and ``model`` says why. The model's
    items are used for ``layers`` only; with none, the model is not asked at all and
    ``skipped`` (:meth:`.models.Profile.skipped`) is the draft's note. Secrets (and personal
    data, unless ``personal=False``) the draft quotes are masked.
    """
    reading = read(request, digest)
    generation = None
    if assistant is not None and not layers:
        note = skipped or "not asked: the model is trusted with no draft layer"
        return compose(request, reading, None, note, personal=personal, layers=layers)
    if assistant is not None and reading.prompt is not None:
        generation = ask(assistant, reading.prompt, timeout_s)
    note = model_note(assistant, generation)
    return compose(request, reading, generation, note, personal=personal, layers=layers)


def grounded(text: str, conversation: str) -> bool:
    """True when every sentence of ``text`` is grounded in ``conversation``.

    A sentence is grounded when most of its content words occur in the conversation and every
    number in it does: a model that copies its worked example, or invents a figure, fails.
    """
    sentences = split(text)
    return bool(sentences) and all(_grounded(s, conversation) for s in sentences)


def _grounded(sentence: str, conversation: str) -> bool:
    own = words(sentence)
    if not own:
        return False
    if len(own & words(conversation)) / len(own) < GROUNDED_SHARE:
        return False
    haystack = conversation.lower()
    return all(n.lower() in haystack for n in numbers(sentence)) and all(
        d in conversation for d in _DIGITS.findall(sentence)
    )


def _merge(
    request: DraftRequest,
    found: Extracted,
    proposed: DraftedNarrative | None,
    conversation: str,
    layers: frozenset[str] = LAYERS,
) -> Draft:
    sources: dict[str, str] = {}
    dropped: list[str] = []

    def keep(items: list[str]) -> list[str]:
        good = [i for i in items if grounded(i, conversation)]
        dropped.extend(i for i in items if i not in good)
        return good

    def use(layer: str) -> bool:
        return proposed is not None and layer in layers

    m_primary = keep([proposed.primary]) if proposed and use("reasoning") else []
    m_secondary = keep(list(proposed.secondary)) if proposed and use("reasoning") else []
    drafted = list(proposed.alternatives) if proposed and use("alternatives") else []
    m_alternatives = [
        {"option": a.option, "rejected_because": a.rejected_because}
        for a in drafted
        if grounded(f"{a.option} {a.rejected_because}", conversation)
    ]
    dropped += [a.option for a in drafted if a.option not in {x["option"] for x in m_alternatives}]
    m_concerns = keep(list(proposed.concerns)) if proposed and use("tension") else []
    m_steps = keep(list(proposed.next_steps)) if proposed and use("next_steps") else []

    # Reasoning: the caller's, else the better of the model's and the extractor's best.
    reasoning: dict[str, Any]
    if request.reasoning is not None:
        reasoning = request.reasoning.model_dump()
        sources["reasoning"] = "caller"
    else:
        candidates = [(p, "model") for p in m_primary] + [(r, "extractor") for r in found.reasons]
        candidates.sort(key=lambda c: -RANK[reason_quality(c[0])])  # stable: model first on ties
        primary, origin = candidates[0] if candidates else ("", "none")
        secondary = [c for c, _ in candidates[1:3]] + m_secondary
        reasoning = {
            "primary": primary,
            "secondary": unique(secondary, drop=primary)[:3],
            "alternatives_considered": [],
        }
        sources["reasoning"] = origin
    if not reasoning.get("alternatives_considered"):
        alternatives = unique(
            m_alternatives + found.alternatives, key=lambda a: a["option"].lower()
        )[:4]
        reasoning["alternatives_considered"] = alternatives
        sources["alternatives"] = (
            "model" if m_alternatives else "extractor" if alternatives else "none"
        )
    else:
        sources["alternatives"] = "caller"

    tension = request.tension.model_dump()
    if any(tension.values()):
        sources["tension"] = "caller"
    else:
        tension["concerns"] = unique(m_concerns + found.concerns)[:5]
        tension["trade_offs"] = found.trade_offs[:3]
        sources["tension"] = _origin(m_concerns, found.concerns + found.trade_offs)

    if request.next_steps:
        steps = [s.model_dump() for s in request.next_steps]
        sources["next_steps"] = "caller"
    else:
        model_steps = [{"step": s, "priority": "MEDIUM", "context": "drafted"} for s in m_steps]
        steps = list({s["step"].lower(): s for s in model_steps + found.next_steps}.values())[:5]
        sources["next_steps"] = _origin(m_steps, found.next_steps)

    specifics = list(request.specifics) or found.specifics
    sources["specifics"] = "caller" if request.specifics else "extractor" if specifics else "none"
    evidence = [e.model_dump(exclude_none=True) for e in request.evidence]
    cited = {e["source"] for e in evidence}
    evidence += [e for e in found.evidence if e["source"] not in cited]
    sources["evidence"] = "transcript" if found.evidence else "caller" if evidence else "none"

    proposal: dict[str, Any] = {
        "topic": request.topic or _topic(request.decision),
        "decision": request.decision,
        "reasoning": reasoning,
        "specifics": specifics,
        "evidence": evidence,
        "tension": tension,
        "next_steps": steps,
        "confidence": request.confidence,
    }
    for name in ("supersedes", "implements", "links", "tags"):
        value = getattr(request, name)
        if value:
            proposal[name] = [v.model_dump() for v in value] if name == "links" else value
    missing = [layer for layer, origin in sources.items() if origin == "none"]
    return Draft(proposal, sources, model="", dropped=dropped, missing=missing)


def model_note(assistant: Model | None, generation: Generation[DraftedNarrative] | None) -> str:
    """What the model did for a draft, in words (the draft's ``model``)."""
    if assistant is None:
        return "not used: no model configured for this call"
    if generation is None:
        return "not used: no conversation to read (pass context, or run inside a session)"
    name = assistant.name or "the local model"
    if generation.outcome == "ok":
        return f"drafted by {name} in {generation.total_s:.1f} s"
    if generation.outcome == "unavailable":
        return f"not used: {generation.detail}"
    return f"not used ({generation.outcome}: {generation.detail}); drafted from the conversation"


def _origin(model_items: list[Any], extracted: list[Any]) -> str:
    if model_items:
        return "model"
    return "extractor" if extracted else "none"


def _topic(decision: str) -> str:
    """A snake_case topic from the decision's first content words (a starting point only)."""
    # A compound's parts ("server-side", "write-through") name no topic on their own.
    plain = _COMPOUND.sub(" ", decision)
    kept = words(plain)
    picked = [w for w in tokens(plain, ascii_only=True) if w in kept]
    return "_".join(picked[:4]) or "decision"
