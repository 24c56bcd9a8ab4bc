"""The prompt's context, which decides the tools a session is shown (server/context.py)."""

from __future__ import annotations

import pytest

from mama_plugin.server.context import detect

LABELLED = [
    ("let's continue where we left off yesterday", "resuming"),
    ("/mama-resume", "resuming"),
    ("이어서 진행하자", "resuming"),
    ("should we use Redis or Postgres for the queue?", "deciding"),
    ("JWT vs sessions: what are the trade-offs", "deciding"),
    ("/mama:save use Postgres for the job queue", "deciding"),
    ("why did we pick Postgres for orders?", "searching"),
    ("what did we decide about auth", "searching"),
    ("the sessions rollout turned out fine, p99 41 ms", "tracking"),
    ("JWT refresh fell over at 10K req/s, we rolled back", "tracking"),
    # The cliffhanger asks "did it hold up?" and lists proposed links as "#N".
    ("yes, the PostgreSQL choice held up under load", "tracking"),
    ("it didn't hold: we moved orders to the new cluster", "tracking"),
    ("accept the proposed link #3", "tracking"),
    ("reject link 2, those are unrelated", "tracking"),
    ("the suggestions look right, confirm both", "tracking"),
    ("#4 accept it with the reason 'refresh hit the DB'", "tracking"),
    ("제안된 링크 수락해줘", "tracking"),
    ("rename the variable in utils.py", None),
    ("add a link to the docs page in the README", None),
]


@pytest.mark.parametrize(("prompt", "context"), LABELLED)
def test_the_prompt_says_what_the_conversation_is_doing(prompt: str, context: str | None) -> None:
    assert detect(prompt) == context
