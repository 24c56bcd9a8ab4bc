"""Real Claude Code, scripted model: ``/mama:view`` runs ``mama view`` and hears where the page is."""

from __future__ import annotations

from pathlib import Path

from fake_anthropic import text, tool_use
from test_claude_code import JWT, ROOT, needs_claude, result_of, run_claude
from test_claude_code_hooks import sent

from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store

pytestmark = needs_claude


def test_mama_view_tells_where_the_page_is(tmp_path: Path, mama_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with Store.open(config=Config(mama_home)) as store:
        save_decision(store, project_key(project), JWT)
    command = f'sh "{ROOT}/bin/mama" view'
    fake = run_claude(
        [tool_use("Bash", {"command": command, "description": "Write MAMA's page"}),
         text("The page is written.")],
        "/mama:view", tmp_path, "view",
    )  # fmt: skip
    assert 'bin/mama\\" view`' in sent(fake.main_requests[0])  # view.md's body, expanded
    ran = result_of(fake.main_requests[1], "Bash")
    assert not ran["is_error"], ran["text"]  # allowed by the command's frontmatter alone
    page = mama_home / "views" / "project.html"
    assert f"Wrote {page}" in ran["text"] and page.as_uri() in ran["text"]
    assert JWT["decision"] in page.read_text(encoding="utf-8")
