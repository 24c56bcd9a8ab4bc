"""Build ``data/recall_adr.json``: architecture decision records others wrote, for recall.

A prompt-time recall benchmark needs a project's decisions and the problems that led to them,
both in the words of the people who decided. Public ADR folders hold exactly that: each record's
*Decision* section is a memory of its project's store, and its *Context* section (the problem
as the team described it before deciding) is a related prompt that must recall that record.

This module reads the git snapshots of the repositories in :data:`SOURCES` (fetched beforehand
into ``--mirror-root``, one ``owner+name/repo`` git directory each; nothing is fetched here),
parses every record of each ADR folder at the snapshot's ``HEAD`` and writes one JSON file.
Standard library only, so the file can be rebuilt anywhere the mirrors are::

    python -m benchmarks.adr_records --mirror-root /work/.mirror \\
        --out benchmarks/data/recall_adr.json

Parsing (:mod:`.adr_markdown`) is deliberately plain. A record without both a context and a
decision section is skipped, and the reason is kept in the file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .adr_markdown import (
    BOILERPLATE_CHARS,
    CONTEXT_HEADINGS,
    DECISION_HEADINGS,
    MAX_CHARS,
    MIN_CHARS,
    REPEATED,
    STATUS_WORDS,
    Index,
    Record,
    boilerplate_paragraphs,
    parse,
    record_number,
)


@dataclass(frozen=True)
class Source:
    """One repository's ADR folder: where it is and under what licence its text is shared."""

    repo: str
    path: str
    licence: str
    licence_file: str


SOURCES = (
    Source("cometbft/cometbft", "docs/references/architecture", "Apache-2.0", "LICENSE"),
    Source("celestiaorg/celestia-app", "docs/architecture", "Apache-2.0", "LICENSE"),
    Source("cosmos/ibc-go", "docs/architecture", "Apache-2.0", "LICENSE"),
    Source("alphagov/govuk-aws", "docs/architecture/decisions", "MIT", "LICENCE"),
    Source("ministryofjustice/cloud-platform", "architecture-decision-record", "MIT", "LICENSE"),
    Source(
        "ministryofjustice/modernisation-platform",
        "architecture-decision-record",
        "MIT",
        "LICENSE",
    ),
    Source("arachne-framework/architecture", "", "Apache-2.0", "LICENSE.txt"),
    Source("apache/james-project", "src/adr", "Apache-2.0", "LICENSE"),
)


@dataclass
class Folder:
    """What one repository gave: its records, and the files skipped with their reason."""

    records: list[Record] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)


# --- reading the mirror -------------------------------------------------------------------


def git_dir(mirror_root: Path, repo: str) -> Path:
    """Where ``fetch`` put ``owner/name``'s snapshot: ``owner+name/repo``."""
    return mirror_root / repo.replace("/", "+") / "repo"


def git(directory: Path, *args: str) -> str:
    """Run one read-only git command on a bare snapshot; raises ``CalledProcessError``."""
    done = subprocess.run(
        ["git", f"--git-dir={directory}", *args], capture_output=True, check=True, text=True
    )
    return done.stdout


def list_files(directory: Path, path: str) -> list[str]:
    """Every markdown file under ``path`` at ``HEAD`` (all of the tree when ``path`` is empty)."""
    spec = [path] if path else []
    names = git(directory, "ls-tree", "-r", "--name-only", "HEAD", "--", *spec).splitlines()
    return sorted(name for name in names if name.lower().endswith(".md"))


def read_folder(directory: Path, source: Source) -> Folder:
    """Parse every numbered markdown file under ``source.path`` at ``HEAD``."""
    texts = {
        file: git(directory, "show", f"HEAD:{file}") for file in list_files(directory, source.path)
    }
    boilerplate = boilerplate_paragraphs(texts)
    files = [name for name in texts if record_number(name) is not None]
    index = Index.of(files)
    folder = Folder()
    for file in files:
        result = parse(file, texts[file], index, boilerplate)
        if isinstance(result, str):
            folder.skipped.append({"file": file, "reason": result})
        else:
            folder.records.append(result)
    return folder


def licence_line(directory: Path, source: Source) -> str:
    """The licence file's first line naming a licence, to show what was read."""
    text = git(directory, "show", f"HEAD:{source.licence_file}")
    return next((line.strip() for line in text.splitlines() if "licen" in line.lower()), "")


def repository_entry(mirror_root: Path, source: Source) -> dict[str, object]:
    """One repository's JSON object: where the records came from, then the records."""
    directory = git_dir(mirror_root, source.repo)
    folder = read_folder(directory, source)
    return {
        "repo": source.repo,
        "commit": git(directory, "rev-parse", "HEAD").strip(),
        "licence": source.licence,
        "licence_file": f"{source.licence_file}: {licence_line(directory, source)}",
        "path": source.path or ".",
        "records": [vars(record) for record in folder.records],
        "skipped": folder.skipped,
    }


NOTE = (
    "One repository is one project's memory store. Every markdown file of the repository's ADR "
    "folder (subfolders included) whose name starts with a number is a record; 'id' is "
    "'adr-' and that number, three digits at least, whatever the repository's own padding "
    "(when two files share a number, each id adds its file's slug, and 'ADR-N' names both). "
    "'title' is the first level-1 heading without its number. 'status' is read from the "
    "Status section (or a 'Status:' line): the first of these words it contains, as "
    + "; ".join(f"{word} = {status}" for word, status in STATUS_WORDS)
    + ", else 'unknown'. 'superseded_by' holds the records that status names after "
    "'superseded' (with or without 'by'); 'links' the repository's other records the file "
    "names (ADR-N, or a relative link to its .md file). 'context' is the section headed "
    + ", ".join(CONTEXT_HEADINGS)
    + " (the first found); 'decision' the section headed "
    + ", ".join(DECISION_HEADINGS)
    + " (the first found; 'decision_heading' says which), each with its subsections, kept "
    "as written: HTML comments, images, blockquote marks and link targets dropped (a link "
    "keeps its text), headings kept as words, whitespace collapsed, cut at a sentence end "
    f"within {MAX_CHARS} characters (' …' marks a cut at a word instead); paragraphs copied "
    f"unchanged from the folder's template, or found word for word in {REPEATED} or more of "
    f"its records (a template's guidance; {BOILERPLATE_CHARS} characters or more), are "
    "dropped. Records without "
    f"both sections, with either under {MIN_CHARS} characters or only a placeholder (TODO, "
    "TBD, N/A), and templates are skipped; each repository lists them under 'skipped' with "
    "the reason. Use: each decision is a memory of its repository's store; its own context "
    "is a related prompt that must recall it. Built by benchmarks/adr_records.py from the "
    "commits named."
)


def build(mirror_root: Path) -> dict[str, object]:
    """The whole dataset: header fields, then one entry per repository of :data:`SOURCES`."""
    return {
        "name": "Architecture decision records of public repositories",
        "source": "The ADR folders of "
        + ", ".join(f"{source.repo} ({source.path or 'top level'})" for source in SOURCES)
        + ", each read at the commit its entry names.",
        "licence": "Each repository's own, named in its entry (MIT or Apache-2.0, from its "
        "licence file); the texts are excerpts of those repositories' documentation, by "
        "their authors, unchanged in wording. The same licences apply to this file's excerpts.",
        "note": NOTE,
        "repositories": [repository_entry(mirror_root, source) for source in SOURCES],
    }


def main(argv: list[str] | None = None) -> None:
    """Command line: read the mirrors, write the JSON, print one count line per repository."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mirror-root", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    dataset = build(args.mirror_root)
    text = json.dumps(dataset, ensure_ascii=False, indent=1)
    args.out.write_text(text + "\n", encoding="utf-8")
    for entry in dataset["repositories"]:  # type: ignore[attr-defined]
        print(f"{entry['repo']}: {len(entry['records'])} records, {len(entry['skipped'])} skipped")


if __name__ == "__main__":
    main()
