"""Real Claude Code, scripted model: a FAILED outcome lowers what was built on it, and the next
session start says so (``MAMA_STORIES=all``, as the other multi-session stories)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from fake_anthropic import text, tool_use
from test_claude_code import result_of
from test_claude_code_stories import (
    JWT_DECISION,
    LOAD_TEST,
    Story,
    T,
    bash,
    full_only,
    holds,
    saved,
    told,
)


def answered(requests: list[dict[str, Any]], tool: str) -> str:
    """The text of the first answer of ``tool`` among the requests sent after a call of it."""
    for request in requests[1:]:
        with contextlib.suppress(AssertionError):
            return str(result_of(request, tool)["text"])
    raise AssertionError(f"no answer of {tool}")


GATEWAY = {
    "topic": "gateway",
    "decision": "Refresh JWT access tokens in the API gateway",
    "reasoning": "the gateway sees every request: refreshing there keeps the services stateless",
    "confidence": 0.7,
}


@full_only
def test_a_failed_outcome_lowers_the_decision_built_on_it_and_the_next_start_says_so(
    tmp_path: Path,
) -> None:
    story = Story(tmp_path)
    first = story.run("Record our API auth decision: stateless JWT", [
        tool_use(T + "save_decision", {**JWT_DECISION, "confidence": 0.8}),
        text("Saved the auth decision."),
    ])  # fmt: skip
    jwt = saved(first, "save_decision")
    built = {**GATEWAY, "links": [{"to_id": jwt, "relationship": "depends_on",
                                   "reason": "it refreshes the JWTs that decision chose"}]}  # fmt: skip
    second = story.run("Decide where token refresh happens", [
        tool_use(T + "save_decision", built),
        text("Saved: the gateway refreshes the tokens."),
    ])  # fmt: skip
    gateway = saved(second, "save_decision")
    third = story.run("Load test the auth at 10K req/s", [
        bash(LOAD_TEST, "Load test the API at 10K req/s"),
        tool_use(T + "evolve_outcome", {"memory_id": jwt, "outcome": "FAILED",
                                        "details": "token refresh hit the DB: p99 307 ms"}),
        text("JWT failed the load test (p99 307 ms at 10K req/s)."),
    ])  # fmt: skip
    answer = answered(third.fake.main_requests, T + "evolve_outcome")
    print(answer)
    holds(answer, f"Confidence 0.8 → 0.68; built on it: {gateway} 0.7 → 0.64.")
    fourth = story.run("hello", [text("Hi.")])
    memory = told(fourth.start, budget=600)
    print(memory)
    holds(
        memory,
        f"{gateway} [gateway]: Refresh JWT access tokens in the API gateway (0.64) — ",
        f"; confidence was 0.7 before {jwt} FAILED",
        f"{jwt} [auth_strategy]: Use stateless JWT access tokens for API auth (FAILED)",
    )
