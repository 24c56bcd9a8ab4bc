"""The README, the CLI, the benchmarks' command and the CI script must not drift apart.

The benchmarks' reference is benchmarks/README.md (every command with its options, and the
tables; ``benchmarks/tests/test_tables.py`` holds those to their JSON); README.md points at it.
"""

from __future__ import annotations

import argparse
import difflib
import re
from pathlib import Path

import pytest

from benchmarks.cli import build_parser as build_benchmarks_parser
from mama_plugin.cli import build_parser
from mama_plugin.settings import KEYS
from mama_plugin.storage.migrations import STEPS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BENCHMARKS_README = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")


def _commands(parser: argparse.ArgumentParser | None = None) -> dict[str, argparse.ArgumentParser]:
    parser = parser or build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _kinds() -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``python -m benchmarks``, one per benchmark."""
    return _commands(build_benchmarks_parser())


def synopsis(parser: argparse.ArgumentParser) -> str:
    """A subcommand's options as the README writes them: ``--a X [--b] [--c N]``."""
    parts = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        option = action.option_strings[0]
        if action.nargs != 0:
            option += f" {action.metavar or action.dest.upper()}"
        parts.append(option if action.required else f"[{option}]")
    return " ".join(parts)


def test_readme_opens_with_the_two_commands() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    assert blocks[:2] == [
        "bash scripts/setup.sh && .venv/bin/mama demo\n",
        "bash scripts/test.sh\n",
    ]
    first_prose = README.index("```bash")
    assert README[:first_prose].count("\n") <= 2  # nothing but the title before them


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in ci
    for script in ("scripts/setup.sh", "scripts/test.sh", ".ci/run"):
        assert (ROOT / script).stat().st_mode & 0o111, f"{script} must be executable"


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_is_documented_and_has_help(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert f"`mama {name}" in README, f"README does not document `mama {name}`"
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([name, "--help"])
    assert info.value.code == 0
    assert "usage: mama " + name in capsys.readouterr().out


def test_every_documented_command_exists() -> None:
    documented = set(re.findall(r"`mama ([a-z]+)", README))
    assert documented <= set(_commands()), documented - set(_commands())


@pytest.mark.parametrize("kind", sorted(_kinds()))
def test_every_benchmark_is_documented_with_its_options_and_has_help(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/README.md's row is the parser's: the kind and every option it takes."""
    row = f"| `python -m benchmarks {kind} {synopsis(_kinds()[kind])}".rstrip()
    assert row in BENCHMARKS_README, f"benchmarks/README.md does not document {row}`"
    with pytest.raises(SystemExit) as info:
        build_benchmarks_parser().parse_args([kind, "--help"])
    assert info.value.code == 0
    assert "usage: python -m benchmarks " + kind in capsys.readouterr().out


@pytest.mark.parametrize("text", [README, BENCHMARKS_README], ids=["README", "benchmarks"])
def test_every_documented_benchmark_exists(text: str) -> None:
    documented = set(re.findall(r"python -m benchmarks ([a-z]+)", text))
    assert documented <= set(_kinds()), documented - set(_kinds())


def test_every_config_key_is_documented() -> None:
    for key in KEYS:
        assert f"`{key}`" in README, f"README does not document config key {key}"


def test_plugin_manifest_is_linked_not_copied() -> None:
    top = ROOT / "plugin.json"
    assert top.is_symlink() and top.resolve() == (ROOT / ".claude-plugin" / "plugin.json").resolve()


def test_changelog_and_architecture_exist() -> None:
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text()
    assert "## Rooms" in (ROOT / "docs" / "architecture.md").read_text()


# -- tables rendered from the code --------------------------------------------------------
# Each table is the exact rendering of the code's own list; `python tests/test_docs.py`
# rewrites both documents when the code changes.

ARCHITECTURE = ROOT / "docs" / "architecture.md"
README_PATH = ROOT / "README.md"
REWRITE = "PYTHONPATH=. .venv/bin/python tests/test_docs.py"
MIGRATIONS_HEADER = "| step | adds |"
CONFIG_HEADER = "| key | default | meaning |"


def _table_span(text: str, header: str) -> tuple[int, int]:
    """Where the Markdown table starting with ``header`` begins and ends in ``text``."""
    start = text.index(header + "\n")
    end = start
    while end < len(text) and text.startswith("|", end):
        end = text.index("\n", end) + 1
    return start, end


def _rows(table: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip("|").split(" | ")] for line in table.splitlines()[2:]
    ]


def render_migrations() -> str:
    """The schema table: one row per ladder step, in order, from ``Step.adds``."""
    lines = [MIGRATIONS_HEADER, "|---|---|"]
    lines += [f"| {n} `{s.name}` | {s.adds} |" for n, s in enumerate(STEPS, start=1)]
    return "\n".join(lines) + "\n"


def _default(value: object) -> str:
    if value in ("", ()):
        return "empty"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def render_config(meanings: dict[str, str]) -> str:
    """The config table: every key in ``KEYS`` order with its default.

    A key's meaning is prose kept in the README (``meanings``); a new key starts from its help.
    """
    lines = [CONFIG_HEADER, "|---|---|---|"]
    for name, key in KEYS.items():
        meaning = meanings.get(name) or key.help
        lines.append(f"| `{name}` | {_default(key.default)} | {meaning} |")
    return "\n".join(lines) + "\n"


def _readme_meanings(text: str) -> dict[str, str]:
    start, end = _table_span(text, CONFIG_HEADER)
    return {row[0].strip("`"): " | ".join(row[2:]) for row in _rows(text[start:end])}


def _rendered(path: Path) -> str:
    """``path``'s text with its generated table(s) replaced by a fresh rendering."""
    text = path.read_text(encoding="utf-8")
    if path == ARCHITECTURE:
        header, table = MIGRATIONS_HEADER, render_migrations()
    else:
        header, table = CONFIG_HEADER, render_config(_readme_meanings(text))
    start, end = _table_span(text, header)
    return text[:start] + table + text[end:]


@pytest.mark.parametrize("path", [ARCHITECTURE, README_PATH], ids=lambda p: p.name)
def test_tables_match_the_code(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fresh = _rendered(path)
    if text != fresh:
        diff = difflib.unified_diff(
            text.splitlines(), fresh.splitlines(), str(path), "rendered from the code", lineterm=""
        )
        pytest.fail(
            f"{path.name} drifted from the code; rewrite it with `{REWRITE}`\n" + "\n".join(diff)
        )


def test_every_migration_step_says_what_it_adds() -> None:
    assert all(step.adds.strip() for step in STEPS)


if __name__ == "__main__":
    for doc in (ARCHITECTURE, README_PATH):
        doc.write_text(_rendered(doc), encoding="utf-8")
        print(f"wrote {doc}")
