"""benchmarks/README.md's measurement tables are their JSON's rendering, never typed by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.tables import DOC, RESULTS, check, names, render, rewrite
from benchmarks.tables_render import TABLES

TEXT = DOC.read_text(encoding="utf-8")
REWRITE = ".venv/bin/python -m benchmarks tables"


@pytest.mark.parametrize("name", names(TEXT))
def test_every_table_is_what_its_json_renders(name: str) -> None:
    problems = [p for p in check(TEXT) if p.name == name]
    assert not problems, f"{problems[0]}: run the benchmark again, then `{REWRITE}`"


def test_every_renderer_has_its_table_and_its_json() -> None:
    assert set(names(TEXT)) == set(TABLES), "a table without a renderer, or one never shown"
    for name, (stem, _) in TABLES.items():
        assert (RESULTS / f"{stem}.json").is_file(), f"{name}: no benchmarks/results/{stem}.json"
        run = json.loads((RESULTS / f"{stem}.run.json").read_text(encoding="utf-8"))
        assert run["command"].startswith("python -m benchmarks "), stem
        assert "load average" in run["uptime_before"] and "load average" in run["uptime_after"]


def test_no_table_outside_the_markers() -> None:
    """A measurement table typed by hand (outside the markers) is refused: every figure is
    rendered from its JSON (the earlier hand-typed ones are history, in the CHANGELOG); the
    command table is the one table of options (its rows are the parser's, tests/test_docs.py)."""
    outside = re.sub(r"<!-- table: .*? -->\n.*?<!-- /table -->", "", TEXT, flags=re.S)
    headers = [line for line in outside.splitlines() if line.startswith("| ")]
    headers = [h for h in headers if not h.startswith("| `python -m benchmarks ")]
    assert headers == ["| command | what it measures |"], headers


def _results(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    for path in RESULTS.glob("truth*.json"):
        (folder / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def test_a_changed_figure_is_named(tmp_path: Path) -> None:
    folder = _results(tmp_path)
    doc = f"<!-- table: truth -->\n{render('truth', folder)}<!-- /table -->\n"
    assert check(doc, folder) == []
    data = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    data["verdict_now"]["failed"]["recall"] = 0.5
    (folder / "truth.json").write_text(json.dumps(data), encoding="utf-8")
    (problem,) = check(doc, folder)
    assert problem.name == "truth" and "differs from benchmarks/results/truth.json" in str(problem)
    assert check(rewrite(doc, folder), folder) == []
    assert "1.00 / 0.50" in rewrite(doc, folder)


def test_a_hand_edited_table_is_named(tmp_path: Path) -> None:
    folder = _results(tmp_path)
    doc = f"<!-- table: truth -->\n{render('truth', folder)}<!-- /table -->\n"
    (problem,) = check(doc.replace("1.00 / 0.91", "1.00 / 0.99"), folder)
    assert problem.name == "truth"


def test_a_table_without_json_or_renderer_is_named(tmp_path: Path) -> None:
    folder = _results(tmp_path)
    (folder / "truth.json").unlink()
    doc = "<!-- table: truth -->\n| a |\n|---|\n<!-- /table -->\n"
    doc += "<!-- table: nobody -->\n| b |\n|---|\n<!-- /table -->\n"
    problems = {p.name: str(p) for p in check(doc, folder)}
    assert "no JSON: benchmarks/results/truth.json is missing" in problems["truth"]
    assert "no renderer" in problems["nobody"]
    assert rewrite(doc, folder) == doc  # nothing to render from: left as it is


def test_the_check_subcommand_exits_non_zero_naming_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import benchmarks.tables as tables

    doc = tmp_path / "README.md"
    doc.write_text(TEXT.replace("<!-- table: truth -->\n", "<!-- table: truth -->\n| x |\n"))
    monkeypatch.setattr(tables, "DOC", doc)
    monkeypatch.setattr(tables, "ROOT", tmp_path)
    assert main(["tables", "--check"]) == 1
    assert "table truth: differs" in capsys.readouterr().err
    assert main(["tables"]) == 0
    assert doc.read_text(encoding="utf-8") == TEXT
    assert main(["tables", "--check"]) == 0


def _anchors(text: str) -> set[str]:
    """GitHub's anchors for a document's headings (code blocks skipped)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    found = set()
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("source", ["README.md", "docs/guide.md"])
def test_links_into_the_benchmarks_and_the_guide_land_on_a_heading(source: str) -> None:
    root = DOC.parents[1]
    text = (root / source).read_text(encoding="utf-8")
    targets = {"benchmarks/README.md": DOC, "docs/guide.md": root / "docs" / "guide.md"}
    for target, path in targets.items():
        anchors = _anchors(path.read_text(encoding="utf-8"))
        for anchor in re.findall(rf"\]\((?:\.\./)?{re.escape(target)}#([^)]+)\)", text):
            assert anchor in anchors, f"{source}: {target}#{anchor} names no heading"
