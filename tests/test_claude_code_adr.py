"""Real Claude Code, fake model: a project of decisions others wrote answers its own problems.

The store holds the 38 architecture decision records of alphagov/govuk-aws (a held-out
repository of ``python -m benchmarks adr``), saved as the benchmark saves them. One `claude -p`
session asks the contexts of records — the problems as the team wrote them before deciding,
never stored — and two Stack Overflow titles nothing stored is about. Asserted on the request
bodies Claude Code sent the model: each context the product's rules reach in-process (the
benchmark's path) reaches the same record on the turn's first request, as a chain or a
pointer; an unrelated prompt gets at most a pointer.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_claude_code import needs_claude
from test_claude_code_recall import _prompt_context, _reindex, _session

from benchmarks.recall_adr import BAR, BUDGET, projects
from mama_plugin.config import Config
from mama_plugin.embeddings import open_embedder
from mama_plugin.project import project_key
from mama_plugin.services.recall.context import prompt_context
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store

pytestmark = needs_claude
REPO = "alphagov/govuk-aws"
ASKED = 4  # contexts asked: the first ones the rules reach
UNRELATED = ["How do I reverse a list in Python?", "Best way to parse command line arguments in C?"]


def test_a_public_adr_project_answers_its_own_problems_on_the_first_request(
    tmp_path: Path, mama_home: Path
) -> None:
    (adr,) = [p for p in projects()[0] if p.repo == REPO]
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    key, ids = project_key(project), {}
    with Store.open(config=Config(mama_home)) as store:
        for record, fields in adr.memories:
            ids[record] = save_decision(store, key, fields).memory.id
    _reindex()  # embedded, as a store long in use is
    embedder = open_embedder(Config(mama_home), hold=True)
    reached = []
    with Store.open(config=Config(mama_home)) as store:
        for case in (c for c in adr.cases if c.related and c.source == "adr"):
            got = prompt_context(store, case.prompt, project=key, budget=BUDGET, bar=BAR,
                                 embedder=embedder)  # fmt: skip
            meant = {ids[r] for r in case.meant}
            if meant & set(re.findall(r"dec_\w+", got.text)):
                reached.append((case.prompt, meant))
            if len(reached) == ASKED:
                break
    assert len(reached) == ASKED
    # The first prompt asks nothing of memory: on a loaded machine it may beat the warm-up.
    fake = _session(project, home, ["hello", *(p for p, _ in reached), *UNRELATED])
    said = [_prompt_context(r) for r in fake.main_requests[1 : 1 + ASKED + len(UNRELATED)]]
    assert len(said) == ASKED + len(UNRELATED)
    for told, (prompt, meant) in zip(said, reached, strict=False):
        print(prompt[:80], "->", told, sep="\n")
        assert meant & set(re.findall(r"dec_\w+", told)), (prompt, told)
    for told in said[ASKED:]:
        assert told == "" or "MAMA memory that may not apply" in told, told
