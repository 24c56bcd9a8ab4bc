"""Does a later session close an item of open work? The rules against each model profile asked,
on the truth benchmark's labelled steps (:func:`.truth.done_pairs`).

Each pair is a next step a session's checkpoint held after one of its turns, and the same
recorded session's later turns replayed as another session, judged after each of them: the
step is labelled done from the turn the labels say did it. ``rules`` is the product's verdict
(the step no longer told as open, :func:`mama_plugin.services.story.freshness.open_steps`);
a model reads the step and the later session's facts as its checkpoint holds them
(:func:`mama_plugin.assist.stopped.facts`) and answers done or not, constrained to
:class:`Closed`, alone and behind the rules (the rules' closings kept, the model asked about
the rest). Pairs with the same step and facts are asked once.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic

from mama_plugin.assist.runtime import Assistant, Prompt
from mama_plugin.assist.stopped import facts, layers_of
from mama_plugin.config import Config
from mama_plugin.storage import Store

from .coauthor import median, p95, profile_config, share, title

INSTRUCTIONS = (
    "A step of open work a coding session left, and what a later session did. Answer "
    "done=true only when the later session's facts show the step carried out (the change made, "
    "the check passing); done=false when they show it still to do, or say nothing of it."
)
EXAMPLES = [
    (
        "Step: add a retry to fetch_user() in api/client.py\n"
        "Later session:\nAsked: make the user lookup survive a 503\n"
        "Changed: api/client.py (edited)\nClaude's last message: fetch_user() now retries "
        "twice on a 503; test_client passes.",
        '{"done": true}',
    ),
    (
        "Step: bound the cache at 1,000 entries\n"
        "Later session:\nAsked: run the tests\nCommands run: `pytest -q` exit 0: 12 passed\n"
        "Claude's last message: All 12 tests pass.",
        '{"done": false}',
    ),
]


class Closed(pydantic.BaseModel):
    """A model's answer: does the later session close the step?"""

    done: bool


def closing_pairs(progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """The truth benchmark's (step, later turn) pairs with the later session's facts."""
    from .checkout import FIXTURES
    from .truth import LABELS, done_pairs, load

    sessions = load(LABELS, FIXTURES, None)
    if progress:
        progress(f"replaying {len(sessions)} labelled sessions for their steps")
    with tempfile.TemporaryDirectory(prefix="mama-bench-closes-") as folder:
        tmp = Path(folder)
        with Store.open(tmp / "mama.db", config=Config(tmp)) as store:
            return done_pairs(
                store, sessions, tmp, baseline=False, facts=lambda m: facts(layers_of(m))
            )


def scored(said: list[bool], pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Precision and recall of "done" for one judge's verdicts."""
    hits = sum(s and p["done"] for s, p in zip(said, pairs, strict=True))
    closed = sum(said)
    return {
        "precision": share(hits, closed),
        "recall": share(hits, sum(p["done"] for p in pairs)),
        "false_merges": closed - hits,  # steps closed while still open
        "merged": closed,
    }


def by_model(
    pairs: list[dict[str, Any]], config: Config, say: Callable[[str], None] | None
) -> tuple[list[bool], dict[str, Any]]:
    """Each pair's verdict by ``config``'s model (no valid answer: not done), and its timings."""
    model = Assistant(config)
    load_s = model.warm()
    asked: dict[tuple[str, str], bool | None] = {}
    took: list[float] = []
    for p in pairs:
        key = (p["step"], p["facts"])
        if key in asked:
            continue
        started = time.monotonic()
        head = f"Step: {p['step']}\nLater session:\n{p['facts']}"
        answer = model.generate(Prompt(INSTRUCTIONS, EXAMPLES, head), Closed, max_tokens=12)
        took.append(time.monotonic() - started)
        asked[key] = answer.value.done if answer.value is not None else None
        if say and len(asked) % 25 == 0:
            say(f"{config.settings.assist_profile}: {len(asked)} asked")
    model.close()
    timing = {
        "asked": len(asked),
        "unanswered": sum(v is None for v in asked.values()),
        "seconds_median": median(took),
        "seconds_p95": p95(took),
        "load_s": round(load_s, 2),
    }
    return [bool(asked[(p["step"], p["facts"])]) for p in pairs], timing


def closes_judges(
    config: Config, profiles: list[str], progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Every judge's figures on the closing pairs."""
    pairs = closing_pairs(progress)
    rules = [bool(p["dropped"]) for p in pairs]
    judges: dict[str, dict[str, Any]] = {"rules": scored(rules, pairs)}
    for profile in profiles:
        if progress:
            progress(f"{profile}: does a later session close the step?")
        said, timing = by_model(pairs, profile_config(config, profile), progress)
        judges[profile] = scored(said, pairs) | timing | {"title": title(profile)}
        judges[f"rules, then {profile}"] = scored(
            [r or m for r, m in zip(rules, said, strict=True)], pairs
        )
    return {
        "pairs": len(pairs),
        "done": sum(p["done"] for p in pairs),
        "steps": len({(p["session"], p["step"]) for p in pairs}),
        "judges": judges,
    }
