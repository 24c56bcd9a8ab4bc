"""Real Claude Code, fake model: after the user changes ``embedding_model``, the next session's
server re-embeds the store by itself, and a paraphrase is recalled by the new model's vectors.

The store's vectors are all-mpnet-base-v2's (``mama reindex`` under ``embedding_model =
mpnet``); the user then chooses MiniLM and starts a session, running no command. Asserted on
the store and on the request bodies Claude Code sent the model: the server re-embedded every
memory with MiniLM, and a question that shares one word with its decision gets that decision.
Before, the vectors stayed mpnet's, recall matched by words alone until `mama reindex`, and the
paraphrase went unanswered.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_claude_code_recall import NAMES, PARAPHRASES, _prompt_context, _reindex, _seed, _session
from test_claude_code_recall import _use as use_model
from test_mpnet import installed

from mama_plugin.config import Config
from mama_plugin.storage import Store

pytestmark = pytest.mark.skipif(
    not installed(), reason="the all-mpnet-base-v2 packages are not installed"
)
RE_EMBED_S = 120  # a person's pace between two prompts, at most


def _re_embedded(home: Path, model: str) -> bool:
    with Store.open(config=Config(home)) as store:
        recorded = store.vectors.recorded_model()[0]
        return recorded == model and store.vectors.count_pending() == 0 and store.vectors.any()


def test_a_model_change_is_re_embedded_by_the_next_session_without_a_command(
    tmp_path: Path, mama_home: Path
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    use_model("mpnet", mama_home)
    _jwt, redis = _seed(project, mama_home)
    _reindex()
    assert _re_embedded(mama_home, NAMES["mpnet"])
    use_model("minilm", mama_home)  # the user's change; no `mama reindex` after it

    def wait_for_the_new_vectors(n: int) -> None:
        if n == 1:  # the first prompt went through: its session's server is up
            deadline = time.monotonic() + RE_EMBED_S
            while not _re_embedded(mama_home, NAMES["minilm"]):
                assert time.monotonic() < deadline, "the store was not re-embedded"
                time.sleep(0.2)

    question, _decision = PARAPHRASES[0]
    fake = _session(
        project, home, ["fix the typo in the README", question], before=wait_for_the_new_vectors
    )
    assert redis in _prompt_context(fake.main_requests[1])
    assert _re_embedded(mama_home, NAMES["minilm"])
