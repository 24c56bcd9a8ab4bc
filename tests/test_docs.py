"""The README, the CLI and the CI script must not drift apart."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from mama_plugin.cli import build_parser
from mama_plugin.config import KEYS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


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


def test_every_config_key_is_documented() -> None:
    for key in KEYS:
        assert f"`{key}`" in README, f"README does not document config key {key}"


def test_plugin_manifest_is_linked_not_copied() -> None:
    top = ROOT / "plugin.json"
    assert top.is_symlink() and top.resolve() == (ROOT / ".claude-plugin" / "plugin.json").resolve()


def test_changelog_and_architecture_exist() -> None:
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text()
    assert "## Rooms" in (ROOT / "docs" / "architecture.md").read_text()
