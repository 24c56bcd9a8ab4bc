"""The checkout the benchmarks run from: its root, its data, Claude Code and the test double.

The benchmarks are no part of the product (the wheel ships ``mama_plugin`` alone), so they run
only from a source checkout, as ``python -m benchmarks`` from its root. What they use of that
checkout besides the product is named here once.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from mama_plugin.errors import MamaError

ROOT = Path(__file__).resolve().parents[1]
# The labelled sets, scripts and samples the benchmarks read (never the product).
DATA = Path(__file__).resolve().parent / "data"
CLAUDE = ROOT / ".tools" / "node_modules" / ".bin" / "claude"
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
FAKE_ANTHROPIC = "tests.fake_anthropic"


def fake_anthropic() -> ModuleType:
    """The scripted Messages API the real-CLI tests drive Claude Code with, imported.

    It is a test double, so it lives with the tests (``tests/fake_anthropic.py``) and nowhere in
    the product; the benchmarks that drive real Claude Code (warm, presence, turns) use the same
    one. It is imported by name, as ``tests.fake_anthropic``, not loaded from a file path:
    ``benchmarks`` itself is importable only with the checkout root on ``sys.path``
    (``python -m benchmarks`` from the root, pytest, ``PYTHONPATH``), and that same entry makes
    ``tests`` importable, so no path arithmetic is needed and the module is registered in
    ``sys.modules`` as any import is (its dataclasses look their module up there). Raises
    MamaError saying where to run from when the double is not there.
    """
    try:
        return importlib.import_module(FAKE_ANTHROPIC)
    except ModuleNotFoundError as exc:
        if exc.name not in ("tests", FAKE_ANTHROPIC):
            raise  # the double is there but something it imports is not
        raise MamaError(
            "this benchmark drives real Claude Code against the scripted Messages API of a "
            "source checkout (tests/fake_anthropic.py), which is not importable here: run "
            f"`python -m benchmarks` from the checkout's root ({ROOT})"
        ) from exc
