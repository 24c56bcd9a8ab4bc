"""What a story keeps when it must say less: within its token budget, or after the session
start told part of it.

Pure functions over the rendered text: a story's lines in blocks (a header and its items),
given up whole, least needed first (:func:`fit`), and the lines a ``load_checkpoint`` answer
adds to what the session start already said (:func:`left_out`). Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# What a story gives up before it tells fewer items a list: what helps least to go on.
SPARED = (
    "Yours in every project",
    "Proposed links",
    "Waiting for an outcome",
    "Decisions on record",
    "Since then",
    "Context:",
    "After that, the same session",
    "What you will see now",
)
# What a story that does not fit its budget at the fewest items a list gives up, in order:
# the blocks a line starts; "Unresolved", the decisions, the next step and "Where I stopped"
# go last ("What I did" stays).
_GIVEN_UP = (
    *SPARED,
    "Tasks:",
    "Remains:",
    "- ",  # the done items under "What I did"
    "Unresolved:",
    "Decisions (",  # from its last decision up: the first stays longest
    "Next step:",
    "Where I stopped",
)
_DECISION = re.compile(r"D\d+ ")


def fit(body: str, fits: Callable[[str], bool], leads: tuple[str, ...] = _GIVEN_UP) -> str:
    """``body`` without whole blocks until ``fits`` it: a header goes with its items, an item
    list from its last item up, the blocks ``leads`` start in that order (never a header left
    without its items, nor a list cut mid-item); what fits, or the least it came to."""
    blocks = _blocks(body)
    for lead in leads:
        while not fits("\n".join("\n".join(b) for b in blocks)):
            found = [i for i, b in enumerate(blocks) if b[0].startswith(lead)]
            if not found:
                break
            block = blocks[found[-1]]
            if len(block) > 2:  # a list: its last item first
                block.pop()
            else:
                blocks.pop(found[-1])
        if fits("\n".join("\n".join(b) for b in blocks)):
            break
    return "\n".join("\n".join(b) for b in blocks)


def _blocks(body: str) -> list[list[str]]:
    """The body's lines in blocks: a line and the item lines under it (``- ``, ✅, ⚠️, ❓, a
    decision's ``D1`` and its indented ``open:``); each done item under "What I did" is a
    block of its own."""
    blocks: list[list[str]] = []
    done = False  # among the done items under "What I did"
    for line in body.splitlines():
        done = line.startswith("What I did") or (done and line.startswith("- "))
        item = line.startswith(("  ", "- ", "✅", "⚠️", "❓")) or bool(_DECISION.match(line))
        if item and blocks and not (done and line.startswith("- ")):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return blocks


# The fence's own lines and its header: kept whatever the start said.
_FRAME = ("<mama-memory>", "</mama-memory>", "MAMA — ")


def left_out(told: str, said: str) -> str:
    """``told`` without the lines ``said`` holds already (the session start's text): a block
    keeps its header while an item of its own is new, and goes when none is; "" when nothing
    is new (the fence's lines aside). Lines outside blocks that ``said`` holds go too."""
    known = {line.strip() for line in said.splitlines() if not line.startswith(_FRAME)}
    known.discard("")
    kept: list[str] = []
    for block in _blocks(told):
        head, items = block[0], block[1:]
        new = [line for line in items if line.strip() not in known]
        if new:
            kept += [head, *new]
        elif not items and head.strip() and head.strip() not in known:
            kept.append(head)
    if all(not line.strip() or line.startswith(_FRAME) for line in kept):
        return ""
    return "\n".join(kept).strip()
