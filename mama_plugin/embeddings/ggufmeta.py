"""Read the key/value metadata at the head of a GGUF file with the standard library only.

Resolution uses it to learn a model's architecture, name and dimension without importing numpy
or llama.cpp. Only scalar values are returned; arrays (the token list, …) are skipped. Raises
``ValueError`` when the file is not a little-endian GGUF file of a version this reader knows.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from .errors import EmbeddingError

GGUF_MAGIC = b"GGUF"
_VERSIONS = (2, 3)
# Read beside a model other than BERT: its task prompts and its file type (quantized or not).
_PROMPT_KEYS = ("mama.prompt.query", "mama.prompt.document", "general.file_type")

# GGUF value types: id -> struct format of a fixed-size scalar.
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING = 8
_ARRAY = 9

Scalar = int | float | bool | str


def read_metadata(path: Path, keys: Iterable[str] | None = None) -> dict[str, Scalar]:
    """Return the scalar metadata of the GGUF file at ``path``.

    With ``keys``, reading stops as soon as all of them were seen (missing ones are simply
    absent from the result). Raises ``ValueError`` for a file that is not GGUF and ``OSError``
    when it cannot be read.
    """
    wanted = set(keys) if keys is not None else None
    found: dict[str, Scalar] = {}
    with path.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ValueError(f"{path} is not a GGUF file (no GGUF magic)")
        version = _read_int(handle, "<I")
        if version not in _VERSIONS:
            raise ValueError(f"{path}: unsupported GGUF version {version}")
        _read_int(handle, "<Q")  # tensor count
        n_kv = _read_int(handle, "<Q")
        for _ in range(n_kv):
            key = _read_string(handle)
            value_type = _read_int(handle, "<I")
            if value_type == _ARRAY:
                _skip_array(handle)
                continue
            value = _read_scalar(handle, value_type)
            if wanted is None or key in wanted:
                found[key] = value
                if wanted is not None and wanted <= found.keys():
                    break
    return found


def is_model_file(path: Path) -> bool:
    """Return True when ``path`` is a readable GGUF file that names its architecture."""
    try:
        meta = read_metadata(path, ["general.architecture"])
    except (OSError, ValueError):
        return False
    return isinstance(meta.get("general.architecture"), str)


def read_model_keys(
    path: Path, general: Iterable[str], per_arch: Iterable[str]
) -> dict[str, Scalar]:
    """``general.architecture`` and the ``general`` and ``<arch>.<per_arch>`` keys of ``path``.

    Reading stops at the last of them instead of walking the vocabulary's arrays after them
    (30K strings, 15–30 ms a server's first prompt waited for). A file naming no
    architecture gets its ``general`` keys only. Raises ``ValueError`` for a file that is not
    GGUF, ``OSError`` when it cannot be read.
    """
    arch = read_metadata(path, ["general.architecture"]).get("general.architecture")
    named = [f"{arch}.{key}" for key in per_arch] if isinstance(arch, str) else []
    return read_metadata(path, ["general.architecture", *general, *named])


def _unpack(handle: BinaryIO, fmt: str) -> tuple[int | float | bool, ...]:
    size = struct.calcsize(fmt)
    data = handle.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack(fmt, data)


def _read_int(handle: BinaryIO, fmt: str) -> int:
    return int(_unpack(handle, fmt)[0])


def _read_string(handle: BinaryIO) -> str:
    length = _read_int(handle, "<Q")
    data = handle.read(length)
    if len(data) != length:
        raise ValueError("truncated GGUF header")
    return data.decode("utf-8", errors="replace")


def _read_scalar(handle: BinaryIO, value_type: int) -> Scalar:
    if value_type == _STRING:
        return _read_string(handle)
    fmt = _SCALARS.get(value_type)
    if fmt is None:
        raise ValueError(f"unknown GGUF value type {value_type}")
    return _unpack(handle, fmt)[0]


def _skip_array(handle: BinaryIO) -> None:
    item_type = _read_int(handle, "<I")
    count = _read_int(handle, "<Q")
    if item_type == _STRING:
        for _ in range(count):
            handle.seek(_read_int(handle, "<Q"), 1)
    elif item_type == _ARRAY:
        for _ in range(count):
            _skip_array(handle)
    else:
        fmt = _SCALARS.get(item_type)
        if fmt is None:
            raise ValueError(f"unknown GGUF array item type {item_type}")
        handle.seek(struct.calcsize(fmt) * count, 1)


def read_embedding_header(path: Path) -> dict[str, Any]:
    """What an embedding model's GGUF says of itself: architecture, name, pooling, context
    length, file type and, beside a model other than BERT, its task prompts; raises
    :class:`.errors.EmbeddingError` saying what to fix."""
    if not path.is_file():
        raise EmbeddingError(
            f"embedding model {path} does not exist; fix the config key embedding_model_path "
            "or clear it to use the built-in all-MiniLM-L6-v2"
        )
    try:
        meta = read_model_keys(path, ["general.name"], ["pooling_type", "context_length"])
        if meta.get("general.architecture") not in (None, "bert"):
            # Prompts ride with models other than BERT (EmbeddingGemma). Not looked for in a
            # BERT file: a key it lacks would make the read walk its whole vocabulary.
            meta.update(read_metadata(path, _PROMPT_KEYS))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot read embedding model {path}: {exc}") from exc
    if not isinstance(meta.get("general.architecture"), str):
        raise EmbeddingError(f"{path} names no architecture; is it a llama.cpp GGUF model?")
    return meta
