"""What the co-author benchmarks (``draft``, ``links``) share: labels, matching, timing, load.

A proposed item is *correct* when it says what a labelled item of the same layer says: at
least :data:`MATCH_SHARE` of the labelled item's content words are in it, and every number
the labelled item states too (evidence: the labelled path or command is part of the cited
source). An item is *grounded* when :func:`mama_plugin.assist.draft.grounded` keeps it: the
product's own test, so the figures say what a user would be shown.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import subprocess
from pathlib import Path
from typing import Any

from mama_plugin.assist.models import PROFILES
from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.text import words

MATCH_SHARE = 0.6
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def load_labels(path: Path, what: str) -> dict[str, Any]:
    """A label file's object; MamaError says what to fix when it is missing or not JSON."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MamaError(f"cannot read the {what} labels at {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise MamaError(f"the {what} labels at {path} are not JSON: {exc}") from exc
    return data


def matches(item: str, label: str, *, evidence: bool = False) -> bool:
    """True when the proposed ``item`` says what the labelled ``label`` says (module doc)."""
    if evidence:
        return label.lower() in item.lower()
    wanted = words(label)
    if not wanted:
        return label.lower() in item.lower()
    if len(wanted & words(item)) / len(wanted) < MATCH_SHARE:
        return False
    have = set(_DIGITS.findall(item))
    return all(d in have for d in _DIGITS.findall(label))


def profile_config(config: Config, profile: str) -> Config:
    """``config`` with ``assist_profile`` set to ``profile`` (and no ``assist_model_path``), or
    with ``assist_model_path`` set to ``profile`` when it is a GGUF file's path (a user's own
    model), for this run only: the user's config file is not written."""
    settings = config.settings
    if profile in PROFILES:
        settings = dataclasses.replace(settings, assist_profile=profile, assist_model_path="")
    elif Path(profile).is_file():
        settings = dataclasses.replace(settings, assist_model_path=str(Path(profile).resolve()))
    else:
        known = ", ".join(PROFILES)
        raise MamaError(f"no model profile {profile!r}; tested profiles: {known}, or a GGUF path")
    chosen = Config(config.home)
    chosen.__dict__["settings"] = settings
    return chosen


def title(profile: str) -> str:
    """A profile's title, or a user's model file's name."""
    return PROFILES[profile].title if profile in PROFILES else f"{Path(profile).name} (yours)"


def profiles_option(text: str) -> list[str]:
    """``--profiles``: comma-separated profile names or GGUF paths, or ``all``."""
    names = list(PROFILES) if text.strip() == "all" else [n.strip() for n in text.split(",")]
    unknown = [n for n in names if n not in PROFILES and not Path(n).is_file()]
    if unknown or not names:
        known = ", ".join(PROFILES)
        raise argparse.ArgumentTypeError(f"unknown profile(s) {', '.join(unknown)}; known: {known}")
    return names


def uptime() -> str:
    """What ``uptime`` says (the machine's load beside every latency printed)."""
    try:
        done = subprocess.run(["uptime"], capture_output=True, text=True, timeout=5, check=False)
        if done.stdout.strip():
            return done.stdout.strip()
    except OSError:
        pass
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"


def median(values: list[float]) -> float | None:
    """The median, None for no values."""
    return round(statistics.median(values), 4) if values else None


def p95(values: list[float]) -> float | None:
    """The 95th percentile (nearest rank), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, -(-95 * len(ordered) // 100) - 1)], 4)


def share(part: int, whole: int) -> float | None:
    """``part / whole`` to three places, None when ``whole`` is 0."""
    return round(part / whole, 3) if whole else None


def cell(value: float | None, *, unit: str = "", scale: float = 1.0) -> str:
    """A table cell: the figure, or a dash when there is none."""
    if value is None:
        return "–"
    return f"{value * scale:.2f}{unit}" if unit else f"{value:.2f}"
