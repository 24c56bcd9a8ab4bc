"""The ``secrets`` benchmark: does a credential or personal data reach disk? What is masked wrongly?

Leaks: in a fresh MAMA_HOME, every case of :mod:`.secrets_corpus` goes through every write path
a user has — the tools of a real ``mama serve`` over stdio (each save tool, outcomes, links and
their reasons, a draft, a call that fails validation), the Stop hook's rolling checkpoint read
from a Claude Code transcript, ``observe_prompt``, ``mama import`` of a JSON export — then
``mama export`` (JSON and Markdown) runs, and every file under MAMA_HOME
(database, WAL while the server still runs, backups, logs, exports, config) and every tool
answer is searched for every secret. The target is 0.

False positives: the scanner runs over ordinary text nobody on this project wrote — the
LoCoMo-10 conversations (``--dataset``) — and over the recorded Claude Code transcripts of
``tests/fixtures/transcripts`` (in a checkout), and every span it masks there is counted and
shown: none of it is a secret.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from mama_plugin.privacy import redact_text

from .checkout import FIXTURES, ROOT
from .secrets_corpus import PRIVATE_VARIANTS, Case, corpus
from .secrets_paths import dump, through_tools
from .stdio import StdioServer

MAMA = (sys.executable, "-m", "mama_plugin.cli")


def leak_run(seed: int = 7, *, progress: Any = None) -> dict[str, Any]:
    """Drive the corpus through every write path; return what was found where."""
    say = progress or (lambda _line: None)
    cases = corpus(seed)
    hidden = [
        Case("private_" + str(i), "MAMA README", v.format(s=s), s)
        for i, (v, s) in enumerate(
            (v, f"hidden-{i}-{seed}-tessellate") for i, v in enumerate(PRIVATE_VARIANTS)
        )
    ]
    # A canary: plain words, not a secret. It must be found on disk, or the search is blind.
    canary = Case(
        "canary",
        "this bench",
        f"canary word zebrafinch{seed}tessellate",
        f"zebrafinch{seed}tessellate",
    )
    everything = [*cases, *hidden, canary]
    with tempfile.TemporaryDirectory(prefix="mama-bench-secrets-") as tmp:
        home, project = Path(tmp) / "mama", Path(tmp) / "project"
        home.mkdir()
        project.mkdir()
        (home / "config.json").write_text('{"assist_model_path": "off"}\n', encoding="utf-8")
        env = {**os.environ, "MAMA_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        answers: list[str] = []
        errors: Counter[str] = Counter()  # tool errors; one invalid call per case is expected
        say(f"{len(everything)} cases through the tools of mama serve")
        server = StdioServer(env, project=str(project), cwd=str(project))
        try:
            calls, accepted = through_tools(server, everything, project, Path(tmp), answers, errors)
            live = _files(home)  # the WAL is there only while the server runs
        finally:
            server.close()
        say("mama import, mama export")
        source = Path(tmp) / "import.json"
        source.write_text(json.dumps(dump(everything, str(project))), encoding="utf-8")
        commands = [
            ["import", str(source), "--project", str(project)],
            ["export", "--output", str(Path(tmp) / "export.json")],
            ["export", "--format", "md", "--output", str(Path(tmp) / "export.md")],
        ]
        for command in commands:
            done = subprocess.run(
                [*MAMA, *command], env=env, capture_output=True, text=True, timeout=300
            )
            answers.append(done.stdout + done.stderr)
            calls += 1
        exports = {p: b for p, b in _files(Path(tmp), top_only=True).items() if "export" in p}
        files = {**live, **_files(home), **exports}
        exported = json.loads(files[next(p for p in files if p.endswith("export.json"))])
        found_canary = sorted(where for where, blob in files.items() if _holds(blob, canary.secret))
        leaks = [
            {
                "kind": case.kind,
                "where": where if where != "tool answer" else _around(blob, case.secret),
            }
            for case in everything
            if case is not canary
            for where, blob in [*files.items(), *(("tool answer", a.encode()) for a in answers)]
            if _holds(blob, case.secret)
        ]
    return {
        "cases": len(everything),
        "credential_kinds": sum(not c.personal for c in cases),
        "personal_kinds": sum(c.personal for c in cases),
        "private_variants": len(hidden),
        "calls": calls,
        "files_searched": sorted(files),
        "leaks": leaks,
        "memories_exported": len(exported["memories"]),
        "links_exported": len(exported["links"]),
        "masks_in_export": json.dumps(exported).count("[REDACTED"),
        "canary_found_in": found_canary,
        "tool_errors": dict(errors),
        "reason_characters_accepted": accepted,
        "expected_tool_errors": {"save_decision": len(everything)},
    }


def _around(blob: bytes, secret: str) -> str:
    text = blob.decode("utf-8", "replace")
    parts = [secret] if len(secret) < 24 else _windows(secret)
    at = max(text.find(part) for part in parts)
    return "tool answer: " + text[max(0, at - 150) : at + len(secret) + 30]


def _holds(blob: bytes, secret: str) -> bool:
    """True when ``blob`` holds ``secret``, or 16 characters of it in a row (a clipped leak)."""
    parts = [secret] if len(secret) < 24 else [*_windows(secret), secret[-16:]]
    forms = {form for part in parts for form in (part, json.dumps(part)[1:-1])}
    return any(form.encode() in blob for form in forms)


def _windows(secret: str) -> list[str]:
    """16-character windows every 8: any run of 24 characters of ``secret`` holds one."""
    return [secret[i : i + 16] for i in range(0, len(secret) - 15, 8)]


def _files(folder: Path, *, top_only: bool = False) -> dict[str, bytes]:
    """Every file MAMA wrote there but the embedding model it builds from its package."""
    paths = folder.iterdir() if top_only else folder.rglob("*")
    found = {}
    for path in paths:
        if path.parent.name == "models" and path.name.startswith("all-MiniLM"):
            continue
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 200_000_000:
            try:
                found[str(path.relative_to(folder.parent))] = path.read_bytes()
            except OSError:
                continue
    return found


def false_positives(dataset: Path | None) -> dict[str, Any]:
    """What the scanner masks in ordinary text: counts by corpus and kind, with examples."""
    corpora: dict[str, list[str]] = {}
    if dataset is not None:
        corpora["LoCoMo-10 conversations"] = _locomo_texts(dataset)
    if FIXTURES.is_dir():
        corpora["Claude Code transcripts (fixtures)"] = _transcript_texts(FIXTURES)
    figures: dict[str, Any] = {}
    for name, texts in corpora.items():
        kinds: Counter[str] = Counter()
        examples: list[str] = []
        started = time.perf_counter()
        for text in texts:
            clean, found = redact_text(text)
            kinds.update(found)
            if found and len(examples) < 10:
                examples.append(clean[:160])
        took = time.perf_counter() - started
        figures[name] = {
            "texts": len(texts),
            "characters": sum(map(len, texts)),
            "masked": sum(kinds.values()),
            "by_kind": dict(kinds),
            "examples": examples,
            "us_per_text": round(took / max(1, len(texts)) * 1e6, 1),
        }
    return figures


def _locomo_texts(dataset: Path) -> list[str]:
    texts = []
    for sample in json.loads(dataset.read_text(encoding="utf-8")):
        for key, session in sample["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    texts += [
                        turn["text"],
                        *([turn["blip_caption"]] if turn.get("blip_caption") else []),
                    ]
    return texts


def _transcript_texts(folder: Path) -> list[str]:
    texts: list[str] = []

    def walk(item: Any) -> None:
        if isinstance(item, str) and len(item) > 3:
            texts.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for value in item:
                walk(value)

    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            walk(json.loads(line).get("message"))
    return texts


def secrets_run(dataset: Path | None, *, progress: Any = None) -> tuple[str, dict[str, Any]]:
    """Both measures; the report and its figures."""
    leaks = leak_run(progress=progress)
    fp = false_positives(dataset)
    load = os.getloadavg()[0]
    lines = [
        f"secrets bench (load average {load:.1f})",
        f"leaks: {len(leaks['leaks'])} — {leaks['credential_kinds']} credential kinds, "
        f"{leaks['personal_kinds']} personal-data kinds, {leaks['private_variants']} <private> "
        f"variants, {leaks['calls']} calls through every write path, "
        f"{len(leaks['files_searched'])} files and every tool answer searched",
    ]
    lines += [f"  LEAK {leak['kind']} in {leak['where']}" for leak in leaks["leaks"]]
    lines.append(
        f"tool errors: {leaks['tool_errors']} (expected {leaks['expected_tool_errors']}: one "
        "call per case that fails validation, to search its error path too)"
    )
    lines.append(
        f"written: {leaks['memories_exported']} memories, {leaks['links_exported']} links, "
        f"{leaks['masks_in_export']} masks in the export, "
        f"{leaks['reason_characters_accepted']} characters of cases accepted as suggested links' "
        "reasons; the canary (plain words) was found in "
        f"{len(leaks['canary_found_in'])} files ({', '.join(leaks['canary_found_in'])})"
    )
    for name, figures in fp.items():
        lines.append(
            f"false positives in {name}: {figures['masked']} spans masked in "
            f"{figures['texts']:,} texts ({figures['characters']:,} characters) "
            f"{figures['by_kind'] or ''} — {figures['us_per_text']} µs per text"
        )
        lines += [f"  {example!r}" for example in figures["examples"]]
    if dataset is None:
        lines.append("(no --dataset: LoCoMo-10 skipped; pass its locomo10.json)")
    return "\n".join(lines) + "\n", {"leaks": leaks, "false_positives": fp, "load": load}
