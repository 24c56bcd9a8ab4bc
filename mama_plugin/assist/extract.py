"""The deterministic drafter: a narrative's layers read straight from the conversation.

No model, no network, no third-party import. It is the drafter's fallback and its source of
evidence in every case: evidence comes only from the tool calls the transcript records (files
read, edited or created, with the line ranges the tools reported; commands run and whether they
failed), never from text. Everything else is picked from sentences — the context Claude passes
first, then the session's assistant messages, then the user's requests — by cues: "because"
and its kin for reasons, "instead of" / "rather than" for alternatives, "but" / "risk" for
tension, "Next:" and open tasks for next steps, numbers with units for specifics.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..services.render import clip
from ..services.story.commands import check_of, unresolved
from ..services.story.words import (
    affirmed,
    bag,
    restates,
    same_item,
    step_object,
    told_failure,
)
from ..text import (
    ALTERNATIVE,
    CAUSAL,
    CONSIDERED,
    NEXT,
    TENSION,
    numbers,
    pointed,
    split,
    tension,
    unique,
    words,
)
from ..transcript import Digest, FileTouch

MAX_ITEMS = 5
MAX_EVIDENCE = 8
MAX_DETAIL = 120  # a command's outcome as evidence: its error in full is a concern's
_TRADE_OFF = re.compile(r"\b(trade-?offs?|at the cost of|we accept|accepted|in exchange)\b", re.I)
_PREFER_OVER = re.compile(
    r"\b(?:chose|chosen|choose|picked|pick|prefer|preferred|selected|went with)\b[^.;]{0,80}?"
    r"\bover\s+(?P<option>[^,.;:()]{2,60})",
    re.I,
)
# What "over" passes when it means "past" ("p99 over the 50 ms budget", "the cache is over its
# bound", "over the weekend"): an option whose last word is a limit or a time is never one
# chosen against ("over a real-time pipeline" and "over a 60 s TTL" are; an amount at its
# start, "over 2,000 req/s", is no option at all).
_EXCEEDED_WORDS = (
    "budget bound limit threshold target cap quota max maximum ceiling sla slo capacity time "
    "weekend night year years month months week weeks day days hour hours minute minutes"
)
_EXCEEDED = frozenset(_EXCEEDED_WORDS.split())
# Where an alternative's name ends: the verb or connective that starts the rest of the clause.
_OPTION_END = re.compile(
    r"\s+(?:avoids?|because|since|would|will|is|are|was|were|which|that|to|for|and|but|so|as|"
    r"keeps?|means|handles?|gives?|costs?|needs?|adds?|requires?|has|had|did|does|could|can|"
    r"we|i|you|they|it|this|these|now|here|there|rather|instead|over)\b",
    re.I,
)
_NEXT_PREFIX = re.compile(r"^(next( steps?)?|then|todo|follow[- ]up)\s*[:,-]?\s*", re.I)
_BECAUSE = re.compile(r"\b(because|since|due to|so that|as a result|therefore)\b", re.I)
_LEADING = re.compile(r"^\s*(?:because|since|and|but|so|while|which|that|then)\s+", re.I)
_CLAUSE = re.compile(r"[;:,]\s+|\s+(?:and|but|so|while|whereas|because|since)\s+|\s+[-–—]\s+")
# A sentence telling work done: a verb in the past ("Added", "wrote"), or "done", "now".
_DID = re.compile(
    r"\b(?!(?:need|propos|plann|expect|want|suggest)ed\b)[a-z]{3,}ed\b"
    r"|\b(?:done|made|wrote|built|now)\b",
    re.I,
)
_TEST_COMMAND = re.compile(r"\b(pytest|test|bench|benchmark|make|npm run|cargo|go test)\b", re.I)


@dataclass
class Extracted:
    """What the conversation itself says, layer by layer; every list best first."""

    reasons: list[str] = field(default_factory=list)
    alternatives: list[dict[str, str]] = field(default_factory=list)
    concerns: list[str] = field(default_factory=list)
    trade_offs: list[str] = field(default_factory=list)
    next_steps: list[dict[str, str]] = field(default_factory=list)
    specifics: list[str] = field(default_factory=list)
    evidence: list[dict[str, str]] = field(default_factory=list)
    source_text: str = ""  # the text the sentences came from (what a model may be shown)


def extract(decision: str, context: str = "", digest: Digest | None = None) -> Extracted:
    """Read the narrative layers of ``decision`` from ``context`` and the session's ``digest``."""
    digest = digest or Digest()
    texts = [context, *digest.assistant_texts[-12:][::-1], *digest.user_requests[-3:][::-1]]
    # Each sentence once, with the text it came from (0: the context, then newest first).
    source: dict[str, int] = {}
    for n, text in enumerate(texts):
        for s in split(text):
            if not _question(s):
                source.setdefault(s, n)
    sentences = list(source)
    topic = words(decision)
    out = Extracted(source_text=_source_text(context, digest))

    def relevance(sentence: str) -> int:
        return len(words(sentence) & topic)

    causal = [s for s in sentences if CAUSAL.search(s) and not NEXT.match(s)]
    # Stable sort: ties keep their order (Claude's context first, newest messages next).
    causal.sort(key=lambda s: -(relevance(s) + 2 * bool(numbers(s)) + 2 * bool(_BECAUSE.search(s))))
    out.reasons = [clip(s) for s in causal[:MAX_ITEMS]]

    for sentence in sentences:
        for option in _options(sentence):
            if option.lower() not in decision.lower() and all(
                option.lower() != a["option"].lower() for a in out.alternatives
            ):
                # Why it lost: the mention itself when it gives a reason ("… but it would cut
                # the hit rate"), else a reason naming the option, else the mention.
                named = words(option) - topic
                why = sentence
                if named and not (CAUSAL.search(sentence) or TENSION.search(sentence)):
                    why = next((r for r in causal if named & words(r)), sentence)
                out.alternatives.append({"option": option, "rejected_because": clip(why)})
    out.alternatives = out.alternatives[:MAX_ITEMS]

    # A sentence that says why an alternative lost is told there, not again as a concern.
    told = {
        out.reasons[0] if out.reasons else "",
        *(a["rejected_because"] for a in out.alternatives),
    }
    for i, sentence in enumerate(sentences):
        clipped = clip(sentence)
        if NEXT.match(sentence):
            step = _NEXT_PREFIX.sub("", sentence).strip()
            newer = [s for s in sentences if 0 < source[s] < source[sentence]]
            if step and not _done_since(step, newer):
                step = clip(step[:1].upper() + step[1:].rstrip("."))
                out.next_steps.append({"step": step, "priority": "MEDIUM", "context": ""})
        elif _TRADE_OFF.search(sentence):
            out.trade_offs.append(clipped)
        elif tension(sentence) and clipped not in told:
            # A sentence pointing back ("That blocks it") is told after the one before it in
            # its own message, unless that one is told already (a reason).
            same_text = i > 0 and source[sentences[i - 1]] == source[sentence]
            concern = clip(pointed(sentences, i)) if same_text else clipped
            if any(r and concern.startswith(r.rstrip(" .")) for r in told):
                concern = clipped
            out.concerns.append(concern)
    # The failures no later run made good, newest first (an answered probe is none), after
    # what the conversation says (a failure it tells in words keeps its command and exit in
    # the evidence); what it said of one made good is no concern now.
    failing = unresolved(digest.commands)
    still = {check_of(c) for c in failing}
    good = [c.failure() for c in digest.commands if c.failed and check_of(c) not in still]
    out.concerns = [c for c in out.concerns if not any(restates(c, g) for g in good)]
    out.concerns += [clip(c.failure()) for c in failing[::-1]]
    for task in digest.open_tasks():
        priority = "HIGH" if task.status == "in_progress" else "MEDIUM"
        state = task.status.replace("_", " ")
        out.next_steps.append(
            {"step": clip(task.subject), "priority": priority, "context": f"open task ({state})"}
        )
    failures = [c.failure() for c in failing]
    out.concerns = _one_each(unique(out.concerns), failures)[:MAX_ITEMS]
    out.trade_offs = unique(out.trade_offs)[:MAX_ITEMS]
    out.next_steps = _distinct_steps(out.next_steps)[:MAX_ITEMS]
    out.specifics = _specifics(sentences)
    out.evidence = evidence_of(digest, mentioned=" ".join(texts))
    return out


def evidence_of(digest: Digest, *, mentioned: str = "") -> list[dict[str, str]]:
    """Evidence from the session's tool calls only: changed files, files read, commands.

    Each file once: the lines it changed ("shop/cache.py:7-10,25-26", edited or created), or
    the lines read when it only was read, before the rest when the conversation names it.
    Each check once, by its latest run that shows a result (the test that failed and then
    passed passed; a rerun piped through ``tail``, which shows none, is told beside the run
    that failed): tests, failures, and a failed check's run that made it good. A failed
    command is evidence too (of what did not work).
    """
    root = digest.cwd
    named = mentioned.lower()
    files: dict[str, list[FileTouch]] = {}
    for touch in digest.files:
        files.setdefault(touch.relative(root), []).append(touch)
    items: list[tuple[int, dict[str, str]]] = []
    for name, touches in files.items():
        changed = [t for t in touches if t.action != "read"]
        told = changed or touches
        action = "created" if any(t.action == "created" for t in changed) else told[0].action
        rank = 0 if changed else (1 if name.lower() in named else 3)
        lines = [f"{a}" if a == b else f"{a}-{b}" for a, b in _merged([t.lines for t in told])]
        cite = f"{name}:{','.join(lines)}" if lines else name  # no ", ": it parts a draft's line
        items.append((rank, {"source": cite, "kind": "file", "detail": action}))
    checks: set[str] = set()
    failed = {check_of(c) for c in digest.commands if c.failed}
    for command in digest.commands[::-1]:
        check = check_of(command)
        if check in checks:
            continue  # an earlier run of a check its latest conclusive run tells
        if not command.unknown:
            checks.add(check)
        test = _TEST_COMMAND.search(command.command + " " + command.description)
        if command.failed or test or check in failed:  # a failure, a test, a failure made good
            detail = f"{command.description} ({clip(command.outcome, MAX_DETAIL)})"
            items.append(
                (
                    2,
                    {
                        "source": clip(command.command, 300),
                        "kind": "command",
                        "detail": detail.strip(),
                    },
                )
            )
    return [item for _, item in sorted(items, key=lambda pair: pair[0])][:MAX_EVIDENCE]


def _exceeded(option: str) -> bool:
    """Whether the option after "over" is a limit or a time (see _EXCEEDED)."""
    last = option.split()[-1].strip(".,;:'\"`").lower() if option.split() else ""
    return last in _EXCEEDED


def _merged(spans: list[tuple[int, int] | None]) -> list[tuple[int, int]]:
    """Line spans in order, overlapping or adjoining ones joined (1-50 and 1-200: 1-200)."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _options(sentence: str) -> list[str]:
    found: list[str] = []
    for pattern in (ALTERNATIVE, CONSIDERED, _PREFER_OVER):
        for match in pattern.finditer(sentence):
            option = _OPTION_END.split(match.group("option"), maxsplit=1)[0]
            option = " ".join(option.split()[:5]).strip(" '\"`")
            if len(option) < 2 or option[0].isdigit():
                continue
            over = sentence[: match.start("option")].rstrip().lower().endswith("over")
            if over and _exceeded(option):
                continue  # "over the 50 ms budget", "over its bound": past a limit, not a choice
            found.append(option)
    return found


def _specifics(sentences: list[str]) -> list[str]:
    """Each number with its unit, in the clause around it (``"SKIP LOCKED handled 2,140 jobs/s
    in bench/queue.txt"``), or in the few words around it when the clause is long."""
    found: list[str] = []
    for sentence in sentences:
        for clause in _CLAUSE.split(sentence):
            for number in numbers(clause):
                if len(clause) > 90:
                    start = clause.find(number)
                    before = clause[:start].split()[-3:]
                    after = clause[start + len(number) :].split()[:3]
                    clause = " ".join([*before, number, *after])
                clause = _LEADING.sub("", clause.replace("(", "").replace(")", ""))
                found.append(clip(clause.strip(" .,;:"), 140))
                break
    found = unique(found)
    # "307 ms at 10K req/s" says nothing "p99 307 ms at 10K req/s" does not.
    kept = [f for f in found if not any(f != g and f.lower() in g.lower() for g in found)]
    return kept[:6]


def _source_text(context: str, digest: Digest) -> str:
    """The conversation as a model should read it: requests and replies, newest last."""
    parts = [f"user: {r}" for r in digest.user_requests[-3:]]
    parts += [f"assistant: {t}" for t in digest.assistant_texts[-8:]]
    if context.strip():
        parts.append(f"notes: {context.strip()}")
    return "\n".join(parts)


def _distinct_steps(steps: list[dict[str, str]]) -> list[dict[str, str]]:
    """Drop a step whose words another, earlier step already says ("Tune autovacuum" after
    "Tune autovacuum for the jobs table before the rollout"), or that is one item with it in
    other words (:func:`~mama_plugin.services.story.words.same_item`)."""
    kept: list[dict[str, str]] = []
    for step in steps:
        mine = words(step["step"])
        if not any(
            mine <= words(k["step"])
            or words(k["step"]) <= mine
            or same_item(step["step"], k["step"])
            for k in kept
        ):
            kept.append(step)
    return kept


def _one_each(concerns: list[str], failures: Sequence[str] = ()) -> list[str]:
    """The concerns (newest first), each problem once: a failure said again in words, or one
    measurement told twice, is the first one told
    (:func:`~mama_plugin.services.story.words.same_item`),
    and so are two sentences that each say one of ``failures`` (the failed commands still
    failing) fails in words ("The smoke test still fails until …", "The smoke test failed:
    curl exited 7 …"); two failed commands stay two, each a check of its own."""
    kept: list[str] = []
    said: set[str] = set()  # the failures a kept sentence says in words
    for concern in concerns:
        told = {f for f in failures if restates(concern, f)}
        if told & said or any(
            same_item(concern, k) and not (told_failure(concern) and told_failure(k)) for k in kept
        ):
            continue
        said |= told
        kept.append(concern)
    return kept


def _done_since(step: str, newer: list[str]) -> bool:
    """Whether a sentence of a newer message tells ``step`` done ("Added the max_entries bound
    to TTLCache" after "Next: add a max_entries bound to TTLCache"): it holds every word of the
    step's object, says something was done, and is neither a step, a problem nor a denial
    ("About twenty lines: a handler and a --serve flag" is the step's size, not the step done;
    "I added the size bound" does not do "add a test for the size bound")."""
    wanted = bag(step_object(step))
    return any(
        wanted <= bag(s) and _DID.search(s) and not (NEXT.match(s) or tension(s) or _question(s))
        for s in affirmed(newer)
    )


def _question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def as_dict(extracted: Extracted) -> dict[str, Any]:
    """The extraction as plain data (for tests and the CLI)."""
    return {k: v for k, v in extracted.__dict__.items() if k != "source_text"}
