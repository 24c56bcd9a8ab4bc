"""``mama share --check``: the files of ``.mama/`` as they are, read for secrets and format.

Needs no store (a CI job has none): each file is read as committed, parsed, and run through
the privacy filter; anything the filter would mask or drop (a credential, a ``<private>``
span, and personal data unless ``keep_personal_data``) is a finding, named by file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..privacy import redact_text
from . import scan
from .files import parse
from .frontmatter import ShareFormatError


@dataclass(frozen=True)
class Finding:
    """One thing wrong with one file: where, and what."""

    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}" if self.line else f"{self.path}: {self.what}"


def check_folder(root: Path, *, personal: bool = True) -> tuple[int, list[Finding]]:
    """How many files were checked under ``root/.mama``, and every finding among them."""
    findings: list[Finding] = []
    files = scan.listing(root)
    for rel in files:
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            findings.append(Finding(rel, 0, f"cannot be read ({exc})"))
            continue
        try:
            parse(text, where=rel)
        except ShareFormatError as exc:
            findings.append(Finding(rel, 0, str(exc).removeprefix(f"{rel}: ")))
        for number, line in enumerate(text.splitlines(), start=1):
            found = redact_text(line, personal=personal)[1]
            if found:
                kinds = ", ".join(sorted(found))
                findings.append(
                    Finding(rel, number, f"looks like a secret or private data ({kinds})")
                )
        whole = redact_text(text, personal=personal)[1]
        if whole and not any(f.path == rel and f.line for f in findings):
            kinds = ", ".join(sorted(whole))
            findings.append(Finding(rel, 0, f"looks like a secret across lines ({kinds})"))
    return len(files), findings
