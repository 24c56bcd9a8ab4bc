"""A shell command line read as its pipelines and their stages (split outside quotes).

``|`` separates the stages of a pipeline; ``||``, ``&&``, ``;`` and a newline end one. What
:mod:`.verdict` (whose status a pipeline's is) and :mod:`.looks` (whether every command only
looks) both read. Standard library only.
"""

from __future__ import annotations


def pipelines(command: str) -> list[list[str]]:
    """Each pipeline of ``command`` with its stages, stripped; blank stages left out."""
    found: list[list[str]] = [[""]]
    quote, i = "", 0
    while i < len(command):
        ch, pair = command[i], command[i : i + 2]
        if quote or ch in "'\"":
            quote = ("" if ch == quote else quote) if quote else ch
        elif pair in ("||", "&&") or ch in ";\n":
            found.append([""])
            i += 2 if pair in ("||", "&&") else 1
            continue
        elif ch == "|":
            found[-1].append("")
            i += 1
            continue
        found[-1][-1] += ch
        i += 1
    stripped = [[stage.strip() for stage in line if stage.strip()] for line in found]
    return [line for line in stripped if line]
