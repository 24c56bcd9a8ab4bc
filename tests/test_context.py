"""The prompt's context, which decides the tools a session is shown (server/context.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.server.context import detect, detect_all

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
    # A verdict on a proposed link is its own context (its tools are the link tools).
    ("accept the proposed link #3", "linking"),
    ("reject link 2, those are unrelated", "linking"),
    ("the suggestions look right, confirm both", "linking"),
    ("#4 accept it with the reason 'refresh hit the DB'", "linking"),
    ("제안된 링크 수락해줘", "linking"),
    ("그 연결 제안은 거절해. 서로 관련 없어.", "linking"),
    ("/mama:outcome dec_123 SUCCESS p99 38 ms", "tracking"),
    ("/mama-search why sessions", "searching"),
    ("Good news: the JWT rollout held up, p99 is 38 ms", "tracking"),
    ("JWT 배포 잘 됐어. p99 38ms 나와.", "tracking"),
    ("어제 하던 거 이어서 하자.", "resuming"),
    ("왜 JWT에서 세션으로 바꿨었지?", "searching"),
    ("작업 큐로 Kafka랑 RabbitMQ 중에 뭘 쓸까?", "deciding"),
    ("rename the variable in utils.py", None),
    ("add a link to the docs page in the README", None),
]


@pytest.mark.parametrize(("prompt", "context"), LABELLED)
def test_the_prompt_says_what_the_conversation_is_doing(prompt: str, context: str | None) -> None:
    assert detect(prompt) == context


# A prompt can do two things at once: report how a decision turned out and move on.
SEVERAL = [
    (
        "The load test failed: JWT refresh fell over at 10K req/s. Record that and move us to "
        "Redis sessions.",
        {"tracking", "deciding"},
    ),
    ("The load test failed … Record that and move us to Redis sessions", {"tracking", "deciding"}),
    (
        "JWT mostly worked but refresh storms hit the DB; let's switch to sessions",
        {"tracking", "deciding"},
    ),
    ("부하 테스트 실패했어. 기록하고 Redis 세션으로 옮겨줘.", {"tracking", "deciding"}),
    (
        "부하 테스트에서 실패했어: 2GB에서 핫 키가 밀려났어. Memcached로 옮기자.",
        {"tracking", "deciding"},
    ),
    ("/mama:outcome dec_1 FAILED move us to sessions", {"tracking"}),  # a command says it all
]


@pytest.mark.parametrize(("prompt", "contexts"), SEVERAL)
def test_a_prompt_can_signal_several_contexts(prompt: str, contexts: set[str]) -> None:
    assert set(detect_all(prompt)) == contexts
    assert detect(prompt) == detect_all(prompt)[0]


def test_no_context_in_everyday_work() -> None:
    for prompt in ("rename the variable in utils.py and run the tests", "now fix the failing test",
                   "utils.py 변수 이름 바꾸고 테스트 돌려줘", ""):  # fmt: skip
        assert detect_all(prompt) == [] and detect(prompt) is None


@given(st.text(max_size=200) | st.sampled_from([p for p, _ in LABELLED]))
def test_the_strongest_context_is_the_first_of_every_context(prompt: str) -> None:
    """The prompt hook reads a prompt once (``detect_all``) and takes its first as ``detect``."""
    every = detect_all(prompt)
    assert detect(prompt) == (every[0] if every else None)
