"""``python -m benchmarks tables``: benchmarks/README.md's measurement tables, from JSON.

The house rule: a measurement table is never typed by hand. Each one sits between two markers,
``<!-- table: NAME -->`` and ``<!-- /table -->``, and is the rendering of a JSON file its
benchmark wrote with ``--json OUT`` (``benchmarks/results/STEM.json``, committed) by the
renderer :data:`.tables_render.TABLES` names for it, with the file (several tables may read
one), followed by one line naming the file, the command that produced it and the machine's
load (``STEM.run.json``, written beside the JSON by whoever ran the benchmark). ``tables``
rewrites every marked table; ``tables --check`` changes nothing and exits 1 naming each table
that differs from its JSON, has no JSON, or has no renderer.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mama_plugin.cli.options import argument, command

from .checkout import ROOT

__all__ = ["DOC", "RESULTS", "Problem", "check", "render", "rewrite", "tables"]

DOC = ROOT / "benchmarks" / "README.md"
RESULTS = ROOT / "benchmarks" / "results"
MARKED = re.compile(
    r"(<!-- table: (?P<name>[a-z0-9][a-z0-9-]*) -->\n)(?P<body>.*?)(<!-- /table -->)", re.S
)


@dataclass(frozen=True)
class Problem:
    """One marked table that is not what its JSON renders, and why."""

    name: str
    why: str

    def __str__(self) -> str:
        return f"{self.name}: {self.why}"


def results(stem: str, folder: Path = RESULTS) -> tuple[dict[str, Any], dict[str, Any]]:
    """The figures ``STEM.json`` holds and how they were produced (``STEM.run.json``, or {})."""
    data = json.loads((folder / f"{stem}.json").read_text(encoding="utf-8"))
    run_path = folder / f"{stem}.run.json"
    run = json.loads(run_path.read_text(encoding="utf-8")) if run_path.is_file() else {}
    return data, run


def source_line(stem: str, run: dict[str, Any]) -> str:
    """The line under a table: its JSON, the command that wrote it and the load around it."""
    where = f"`benchmarks/results/{stem}.json`"
    if not run:
        return f"<sub>From {where}.</sub>\n"
    load = " → ".join(_load(run.get(k, "")) for k in ("uptime_before", "uptime_after"))
    day = str(run.get("started", ""))[:10]
    return f"<sub>From {where}: `{run['command']}`, {day}, load {load}.</sub>\n"


def _load(uptime: str) -> str:
    found = re.search(r"load averages?: ([\d.]+),? ([\d.]+),? ([\d.]+)", uptime)
    return "/".join(found.groups()) if found else "?"


def render(name: str, folder: Path = RESULTS) -> str:
    """Table ``name`` as the document holds it: the Markdown table, then its source line."""
    from .tables_render import TABLES

    stem, renderer = TABLES[name]
    data, run = results(stem, folder)
    return renderer(data).rstrip("\n") + "\n\n" + source_line(stem, run)


def _stem(name: str) -> str | None:
    """The JSON stem table ``name`` is rendered from, or None when no renderer names it."""
    from .tables_render import TABLES

    return TABLES[name][0] if name in TABLES else None


def _problem(name: str, body: str, folder: Path) -> Problem | None:
    stem = _stem(name)
    if stem is None:
        return Problem(name, "no renderer in benchmarks/tables_render.py")
    if not (folder / f"{stem}.json").is_file():
        return Problem(name, f"no JSON: benchmarks/results/{stem}.json is missing")
    if body != render(name, folder):
        return Problem(name, f"differs from benchmarks/results/{stem}.json")
    return None


def check(text: str, folder: Path = RESULTS) -> list[Problem]:
    """Every marked table of ``text`` that differs from its rendering, has no JSON or renderer."""
    problems = []
    for match in MARKED.finditer(text):
        problem = _problem(match["name"], match["body"], folder)
        if problem:
            problems.append(problem)
    return problems


def rewrite(text: str, folder: Path = RESULTS) -> str:
    """``text`` with every marked table rendered afresh (a table without JSON is left as is)."""

    def fresh(match: re.Match[str]) -> str:
        name = match["name"]
        stem = _stem(name)
        if stem is None or not (folder / f"{stem}.json").is_file():
            return match[0]
        return match[1] + render(name, folder) + match[4]

    return MARKED.sub(fresh, text)


def names(text: str) -> list[str]:
    """The marked tables of ``text``, in order."""
    return [m["name"] for m in MARKED.finditer(text)]


@command("tables", "rewrite benchmarks/README.md's tables from benchmarks/results/*.json")
@argument(
    "--check",
    action="store_true",
    help="change nothing; exit 1 naming each table that differs from its JSON or has none",
)
def tables(args: argparse.Namespace) -> int:
    text = DOC.read_text(encoding="utf-8")
    if not args.check:
        fresh = rewrite(text)
        if fresh != text:
            DOC.write_text(fresh, encoding="utf-8")
    problems = check(DOC.read_text(encoding="utf-8") if not args.check else text)
    for problem in problems:
        print(f"benchmarks: table {problem}", file=sys.stderr)
    if not args.check:
        print(f"{len(names(text))} tables in {DOC.relative_to(ROOT)}, {len(problems)} not rendered")
    return 1 if problems else 0
