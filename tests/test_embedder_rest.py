"""The embedder rests between calls: no llama.cpp context, none of the model file's pages.

Run in a child process each, so no other embedder of the test session maps the same file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mama_plugin.embeddings.process import drop_mapped_pages

ROOT = Path(__file__).resolve().parents[1]

# Prints, as JSON: the kB of the model file's mappings in memory after loading and after each
# call, the process's anonymous kB after the calls, and the vectors.
_PROBE = """
import json, os, sys
from mama_plugin.embeddings.embedder import Embedder

path, hold = os.path.realpath(sys.argv[1]), sys.argv[2] == "hold"

def file_kb():
    kb, inside = 0, False
    for line in open("/proc/self/smaps"):
        if "-" in line.split(" ", 1)[0] and len(line.split()) >= 5:
            inside = line.rstrip("\\n").endswith(path)
        elif inside and line.startswith("Rss:"):
            kb += int(line.split()[1])
    return kb

def anon_kb():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("RssAnon"))

e = Embedder(path, threads=1, hold=hold)
seen = {"loaded": file_kb()}
texts = ["which auth approach under heavy traffic?", "the queue retries " * 60]
vectors = [e.embed([text])[0] for text in texts] + e.embed_queries(texts)
seen["called"] = file_kb()
seen["anon"] = anon_kb()
print(json.dumps({"seen": seen, "vectors": vectors}))
"""


def _probe(model: Path, mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _PROBE, str(model), mode], env=env,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    return json.loads(done.stdout)


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads Linux's /proc")
def test_between_calls_the_model_holds_no_context_and_none_of_its_files_pages(
    built_model: Path,
) -> None:
    resting, holding = _probe(built_model, "rest"), _probe(built_model, "hold")
    size_kb = built_model.stat().st_size // 1024
    # Holding: the whole file mapped in (llama.cpp populates its mapping) and kept.
    assert holding["seen"]["loaded"] > size_kb * 0.9
    assert holding["seen"]["called"] > size_kb * 0.9
    # Resting: none of it after the load, none after a short and a 512-token call.
    assert resting["seen"]["loaded"] < size_kb * 0.05, resting["seen"]
    assert resting["seen"]["called"] < size_kb * 0.05, resting["seen"]
    # No full-size context kept: MiniLM's held ~36 MB more here (its compute buffers and the
    # touched part of its logits rows for 512 tokens).
    assert holding["seen"]["anon"] - resting["seen"]["anon"] > 10_000
    # The same vectors either way.
    assert resting["vectors"] == holding["vectors"]


def test_dropping_pages_of_a_file_not_mapped_does_nothing(tmp_path: Path) -> None:
    assert drop_mapped_pages(tmp_path / "absent.gguf") == 0
