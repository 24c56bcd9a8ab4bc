"""A transcript turn by turn: what the session had done when each of its turns ended."""

from __future__ import annotations

import json
import os
from copy import deepcopy
from typing import Any

from .digest import Digest
from .entries import take


def turn_digests(path: str | os.PathLike[str]) -> list[Digest]:
    """The digest of the whole transcript as it stood at the end of each turn, oldest first.

    A turn ends where the user's next request begins (tool results do not start one). Reads
    the whole file; never raises (an unreadable file gives no turns).
    """
    digest, calls, seen = Digest(), dict[str, dict[str, Any]](), set[str]()
    turns: list[Digest] = []
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return []
    for line in raw.split(b"\n"):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        before, asked = deepcopy(digest), len(digest.user_requests)
        take(entry, digest, calls, seen)
        if asked and len(digest.user_requests) > asked:
            turns.append(before)
    if digest.user_requests:
        turns.append(digest)
    return turns
