"""Real Claude Code, fake model: the index is warm when a short ``-p`` session needs it.

Runs the scenario of ``python -m benchmarks warm`` (benchmarks/warm.py): one session saves a
decision, the next opens with a paraphrase of it that keywords alone miss. ``MAMA_WARM_RUNS``
sets how many pairs of sessions (1 by default); the benchmark runs more, with default settings.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_claude_code import needs_claude

from benchmarks import warm
from mama_plugin.server import hook_tools

pytestmark = needs_claude
RUNS = int(os.environ.get("MAMA_WARM_RUNS", "1"))


@pytest.mark.parametrize("index", range(RUNS))
def test_a_saved_decision_is_embedded_and_the_next_first_prompt_recalls_it_by_meaning(
    index: int, built_model: Path
) -> None:
    # -p waits for the server, as a user typing later would: the server's start race is
    # python -m benchmarks startup's business; this is about the index once the server is there.
    run = warm.one_run(index, built_model, wait=True)
    assert run.saved, run
    # The vector was there before the session's server was gone (the save woke the indexer,
    # or the drain on Claude Code's SIGINT embedded it).
    assert run.save_to_vector_s is not None, run
    assert not run.keyword_baseline, run  # keywords alone miss the paraphrase
    if run.first_prompt_path == "keywords" and (run.model_wait_s or 0) >= (
        hook_tools.EMBEDDER_WAIT_S - 0.02
    ):
        pytest.skip(f"the model took over {hook_tools.EMBEDDER_WAIT_S} s to load (load "
                    f"average {os.getloadavg()[0]:.1f}): the prompt fell back to keywords")  # fmt: skip
    assert run.first_prompt_path == "vectors", run
    # The decision reached the model on the first request: the session start tells a project's
    # decisions, and the prompt hook never repeats what the session start told (nothing twice);
    # how often a paraphrase alone is recalled is `python -m benchmarks recall`'s business.
    assert run.injected or run.told_at_start, run
