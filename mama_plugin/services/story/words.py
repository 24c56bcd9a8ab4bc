"""How a step is compared with what later work says: its parts, its object, its words.

Pure functions over text; standard library only (the session-start hook may use them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ...text import NUMBER_WITH_UNIT, stem, words

COVERAGE = 0.6  # share of a step's words a "done" text must hold to close it
MIN_SHARED = 2  # and at least this many of them

_PARTS = re.compile(
    r",?\s*\bthen\b\s*|;\s+|,\s+and\s+(?=(?:re)?run\b)|\s+and\s+(?=(?:re)?run\b)", re.I
)
_VERB = re.compile(r"^\s*[A-Za-z]+\b")
_ARTICLE = re.compile(r"^\s*(?:the|a|an|this|that|its|our)\b", re.I)
# A done item that denies what it names ("Did not add the expiry test yet") shows nothing
# done: its words cover the step all the same, and the step would leave "Remains" unfinished.
# Nor does one that says the work is under way ("Task created and in progress: switch …", "the
# switch is in progress"; "finished the migration that was in progress" is done).
_DENIED = re.compile(
    r"\b(?:not|never|no longer|cannot|unable to|failed to|yet to|still to)\b"
    r"|\b(?:is|are|still|now) in progress\b|\bin progress:"
    r"|n't\b",
    re.I,
)


# Verbs that name one action in steps ("start the service", "run the service"), by stem.
_SAME_VERB = {"start": "run", "launch": "run", "boot": "run"}


@lru_cache(maxsize=4096)
def bag(text: str) -> frozenset[str]:
    """The stemmed content words steps and done items are compared by, a verb of one action
    as one word (a pure function of its text, memoised: the same steps and done items are
    compared again and again)."""
    return frozenset(_SAME_VERB.get(s, s) for s in (stem(w) for w in words(text)))


def covers(done: str, step: str) -> bool:
    """Whether the ``done`` text holds most of ``step``'s words (stemmed): the step is done."""
    wanted = bag(step)
    shared = len(wanted & bag(done))
    return (
        bool(wanted)
        and shared >= min(MIN_SHARED, len(wanted))
        and (shared / len(wanted) >= COVERAGE)
    )


# A name in code: a path or dotted name, an identifier with an underscore, a call, camelCase,
# PascalCase, a constant ("pricesvc/cache.py", "_entries", "stats()", "maxSize",
# "AttributeError", "STATS").
_NAME = re.compile(
    r"[A-Za-z0-9]*(?:[_./][A-Za-z0-9]+)+|\b[A-Za-z_]\w*(?=\(\))|\b[a-z]+[A-Z]\w*|"
    r"\b[A-Z][a-z0-9]+[A-Z]\w*|\b[A-Z][A-Z0-9_]{2,}\b"
)


def names(text: str) -> frozenset[str]:
    """The names in code ``text`` mentions (3 characters or more), lowercased."""
    return frozenset(n.lower() for n in _NAME.findall(text) if len(n.strip("_./")) >= 3)


HELD = 0.8  # share of the shorter item's words the longer holds when they name nothing


def same_item(a: str, b: str, *, alike: bool = True) -> bool:
    """Whether two items of open work are one: they name the same thing in code and share
    most of the shorter one's words ("_entries has no size bound yet" and "bound _entries at
    1024"), or — two of a kind (``alike``: two steps, two problems) — the longer holds nearly
    all of the shorter's, three words at least ("Tune autovacuum for the jobs table" and "tune
    autovacuum for the jobs table before the rollout"), or they state the same measurement
    with two more words in common and do not name different things in code, or one says in
    words that a failed command's check fails (:func:`restates`). A failure and the step that
    would mend it share words and stay two."""
    words_a, words_b = bag(a), bag(b)
    shared = len(words_a & words_b)
    shorter = min(len(words_a), len(words_b))
    named_a, named_b = names(a), names(b)
    if alike and (restates(a, b) or restates(b, a)):
        return True
    # One measurement said twice, with more in common than the measurement's own words.
    plain = len(bag(NUMBER_WITH_UNIT.sub(" ", a)) & bag(NUMBER_WITH_UNIT.sub(" ", b)))
    one_measure = alike and plain >= 2 and shared >= 3 and bool(_result(measured(a) & measured(b)))
    if named_a & named_b:
        return (shared >= MIN_SHARED and shared >= COVERAGE * shorter) or one_measure
    if one_measure and not (named_a and named_b):
        return True  # one measurement said twice ("p99 93 ms at 2,000 req/s", "93 ms vs 41")
    return alike and shared >= 3 and shared >= HELD * shorter


# A failed command as a concern says what it was for: "`sh smoke.sh` failed (Run the smoke
# test): exit 7, …" (:meth:`mama_plugin.transcript.Command.failure`).
_FAILED = r"^`[^`]+` (?:failed|was interrupted)"
_FAILED_CHECK = re.compile(_FAILED + r" \(([^)]+)\)")
_RUN = re.compile(r"^\s*(?:re-?run|run|execute|kick off|launch|try)\b(?:\s+(?:the|a|an))?", re.I)
_CHECKS = frozenset(("test", "script", "check", "suite", "benchmark"))  # kinds of check, stemmed
_FAILS = re.compile(r"\b(?:fail\w*|broken|cannot (?:connect|start|run|pass|reach))\b", re.I)


def told_failure(text: str) -> bool:
    """Whether ``text`` is a failed command as a concern tells it ("`cmd` failed …")."""
    return re.match(_FAILED + r"\b", text) is not None


def restates(said: str, failure: str) -> bool:
    """Whether ``said`` tells ``failure`` again in words: it names what the failed command was
    for, its "Run" aside ("the smoke test", "startup check"; a check noun of its own may stand
    in for "script": "Smoke script" is "the smoke test"), and says it fails ("The smoke test
    still cannot connect")."""
    found = _FAILED_CHECK.match(failure)
    if found is None or _FAILED_CHECK.match(said) or not _FAILS.search(said):
        return False
    purpose, held = bag(_RUN.sub("", found.group(1), count=1)), bag(said)
    named = purpose - _CHECKS  # what the check is of, without the kind of check
    if len(purpose) >= 2 and purpose <= held:
        return True
    return len(named) == 1 and named <= held and bool(held & _CHECKS) and purpose != named


# A load a test ran under ("2,000 req/s", "50 users") says under what, not what was found.
_LOAD = re.compile(r"(?:/s|rps|qps|tps|users?|requests?|jobs?|threads?|cores?)$")


def _result(measures: frozenset[str]) -> frozenset[str]:
    """The measurements that state a result, not the load it was found under."""
    return frozenset(m for m in measures if not _LOAD.search(m))


def measured(text: str) -> frozenset[str]:
    """The measurements ``text`` states ("93 ms", "2,000 req/s"), spaces and case aside."""
    return frozenset(re.sub(r"[\s~≈]", "", m).lower() for m in NUMBER_WITH_UNIT.findall(text))


def parts(step: str) -> list[str]:
    """The parts of a step that does several things in turn ("X, then Y" → X, Y)."""
    found = [p.strip(" .,") for p in _PARTS.split(step)]
    return [p for p in found if len(bag(p)) >= 1] or [step]


def step_object(part: str) -> str:
    """The part without its verb and article: "Add a serve mode to app.py" → "serve mode to …"."""
    rest = _VERB.sub("", part, count=1)
    return _ARTICLE.sub("", rest, count=1)


def affirmed(texts: Iterable[str]) -> list[str]:
    """``texts`` without those that deny something (see ``_DENIED``)."""
    return [t for t in texts if not _DENIED.search(t)]
