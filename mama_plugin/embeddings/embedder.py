"""Sentence embeddings on llama.cpp: load a GGUF embedding model, embed batches of texts.

``llama_cpp``'s bindings (:mod:`.native`) are imported when an :class:`Embedder` is created,
never when this module is imported; numpy never is (the batch is ctypes arrays, a vector is
normalised in float32 by ``array``), so a short-lived process that embeds one prompt does not
pay numpy's import (~50 ms) for it. The model is driven through llama.cpp's C API
rather than ``llama_cpp.Llama``: ``Llama(verbose=False)`` silences the library by pointing
file descriptors 1 and 2 at ``/dev/null`` while it loads, which would swallow whatever another
thread writes to stdout meanwhile (an MCP server's protocol stream). Instead llama.cpp's log
goes to a callback that keeps the last warnings for error messages and prints nothing.

An :class:`Embedder` is safe to share between threads: calls are serialised by a lock.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import EmbeddingError
from .ggufmeta import read_embedding_header
from .native import bindings
from .process import (
    MAPPINGS_LOCK,
    available_cores,
    drop_mapped_pages,
    forget_log,
    install_log_callback,
    log_tail,
    return_freed_heap,
)

# Tokens per llama.cpp call. A BERT sees the whole call at once (attention spans the batch,
# masked per text), so the cost grows with its square: 512 packs dozens of short texts per
# call without paying much for the masked-out pairs. Raised to the model's context if larger.
DEFAULT_BATCH_TOKENS = 512
# Longest text, in tokens, a call may hold. Models trained on longer contexts (8K for some) are
# cut here: non-causal attention over one micro-batch needs memory growing with its square.
MAX_TEXT_TOKENS = 2048
# llama.cpp keeps a vocabulary-wide row of logits for every token of a call, even when it
# only pools embeddings, and never shrinks it: a call's tokens are capped so that buffer stays
# under this. MiniLM's 30K words allow 1,099 (its 512 stand); EmbeddingGemma's 262K words 128
# tokens per call and per text (each row is 1 MB: a 2,048-token call held 2.2 GB).
OUTPUT_BYTES = 128 << 20
MIN_BATCH_TOKENS = 128
# Smallest context a call opens: a call's context is sized to its tokens (a power of two from
# here up to the batch), so a short prompt's costs EmbeddingGemma 32 MB and ~20 ms, not 128 MB
# and ~80 ms.
MIN_CALL_TOKENS = 32

_POOLING = {"mean": 1, "cls": 2, "last": 3}
_UNQUANTIZED = (None, 0, 1)  # general.file_type: unknown, all F32, mostly F16


class Embedder:
    """A GGUF embedding model loaded in llama.cpp, producing L2-normalised vectors.

    ``threads=0`` uses every core available to the process. Raises :class:`EmbeddingError`
    when the file is missing, is not GGUF, cannot be loaded or is not an embedding model.
    Call :meth:`close` (or use it as a context manager) to free the model early.

    Between calls it rests: each call opens a llama.cpp context sized to its tokens and frees
    it, and lets go of the model file's pages (:func:`.process.drop_mapped_pages`), so a
    long-lived process (the MCP server) holds little more than the weights' bookkeeping
    between prompts: EmbeddingGemma ~60 MB instead of ~510, MiniLM ~50 instead of ~125. A
    call pays for it: a prompt's embedding takes MiniLM ~9 ms more, EmbeddingGemma ~20–40.
    The vectors are the same. ``hold=True`` keeps one full-size context and the pages
    between calls, for a process that embeds in bulk and exits.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        threads: int = 0,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        hold: bool = False,
    ) -> None:
        self.path = Path(path)
        self.hold = hold
        self._lock = threading.Lock()
        self._model: Any = None
        self._ctx: Any = None
        self._ctx_tokens = 0
        meta = read_embedding_header(self.path)
        arch = str(meta["general.architecture"])
        self.name = str(meta.get("general.name") or self.path.stem)
        pooling = _pooling_of(meta.get(f"{arch}.pooling_type"))
        # A model trained with task prompts (EmbeddingGemma) carries them: one for what is
        # searched (memories), one for what searches (a prompt, a query).
        self.document_prompt = str(meta.get("mama.prompt.document") or "")
        self.query_prompt = str(meta.get("mama.prompt.query") or "")
        context = meta.get(f"{arch}.context_length")
        n_ctx_train = context if isinstance(context, int) and context > 0 else batch_tokens

        try:
            llama_cpp = bindings()  # the C API alone: not Llama and its imports
        except ImportError as exc:
            raise _missing(exc) from exc
        self._llama = llama_cpp
        install_log_callback(llama_cpp)
        llama_cpp.llama_backend_init()

        n_batch = max(min(int(n_ctx_train), MAX_TEXT_TOKENS), int(batch_tokens))
        quantized = meta.get("general.file_type") not in _UNQUANTIZED
        self._threads = threads or available_cores()
        self._pooling = pooling
        self._load(n_batch, quantized)
        self.dim = int(llama_cpp.llama_model_n_embd(self._model))
        # One text may not exceed the positions the model was trained on (or one llama call).
        self.max_tokens = min(int(llama_cpp.llama_model_n_ctx_train(self._model)), self._n_batch)
        self._n_seq_max = int(llama_cpp.llama_n_seq_max(self._ctx))
        self._vocab = llama_cpp.llama_model_get_vocab(self._model)
        self._init_batch(self._n_batch)
        self._n_tail = self._count_tail_specials()
        self._rest()

    # -- public API -------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one unit-length vector per text, in order.

        Several texts go into each llama.cpp call. A text longer than the model's context is
        cut to its first ``max_tokens`` tokens (keeping the closing separator); an empty text
        is embedded like any other (BERT sees ``[CLS] [SEP]``). Only a text that yields no token
        at all, possible with models that add no special tokens, gets the zero vector. Raises
        :class:`EmbeddingError` if llama.cpp fails.
        """
        return self._embed(texts, self.document_prompt)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """As :meth:`embed`, for texts that search (a prompt, a query) rather than texts that
        are searched: the same unless the model carries a query prompt."""
        return self._embed(texts, self.query_prompt)

    def _embed(self, texts: Sequence[str], prompt: str) -> list[list[float]]:
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts; use embed_one() for a single text")
        if not texts:
            return []
        with self._lock:
            self._check_open()
            token_lists = [self._tokenize(prompt + text) for text in texts]
            vectors = [[0.0] * self.dim for _ in texts]
            calls: list[list[int]] = []
            n_pending = longest = 0
            for index, tokens in enumerate(token_lists):
                if not tokens:
                    continue  # nothing to embed: the zero vector stands
                if (
                    not calls
                    or n_pending + len(tokens) > self._n_batch
                    or len(calls[-1]) >= self._n_seq_max
                ):
                    calls.append([])
                    n_pending = 0
                calls[-1].append(index)
                n_pending += len(tokens)
                longest = max(longest, n_pending)
            if not calls:
                return vectors
            try:
                self._open_context(longest)
                for call in calls:
                    self._run(call, token_lists, vectors)
            finally:
                self._rest()
        return vectors

    def embed_one(self, text: str) -> list[float]:
        """Return the unit-length vector of one text (see :meth:`embed`)."""
        return self.embed([text])[0]

    def tokenize(self, text: str) -> list[int]:
        """Return the model's token ids for ``text``, special tokens included, untruncated."""
        with self._lock:
            self._check_open()
            return self._tokenize(text, truncate=False)

    def close(self) -> None:
        """Free the llama.cpp context and model; later calls raise :class:`EmbeddingError`."""
        with self._lock:
            self._free_context()
            if self._model is not None:
                with MAPPINGS_LOCK:  # unmaps the file: not while its pages are being dropped
                    self._llama.llama_model_free(self._model)
                self._model = None

    def __enter__(self) -> Embedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        # Best effort: at interpreter exit the bindings may already be gone.
        if getattr(self, "_llama", None) is not None:
            with contextlib.suppress(Exception):
                self.close()

    def __repr__(self) -> str:
        return f"Embedder({self.name!r}, dim={getattr(self, 'dim', '?')}, path={str(self.path)!r})"

    # -- loading ----------------------------------------------------------------------------

    def _load(self, n_batch: int, quantized: bool) -> None:
        """Load the model and a full-size context; set the tokens a call may hold."""
        llama = self._llama
        forget_log()
        model_params = llama.llama_model_default_params()
        model_params.n_gpu_layers = 0
        # No repacked copies of quantized weights (AMX, CPU repack): they are anonymous memory
        # each server holds apart, where the file's pages are shared; and on this machine
        # AMX's Q8_0 matrix product died of an illegal instruction. An F16 model (MiniLM)
        # keeps llama.cpp's defaults, and its vectors as they were.
        if quantized and hasattr(model_params, "use_extra_bufts"):
            model_params.use_extra_bufts = False
        self._model = llama.llama_model_load_from_file(str(self.path).encode(), model_params)
        if not self._model:
            self._model = None
            raise EmbeddingError(
                f"llama.cpp cannot load {self.path}{log_tail()}; if it is MAMA's cached model, "
                "delete it and it is rebuilt, otherwise fix the config key embedding_model_path"
            )
        n_vocab = int(llama.llama_vocab_n_tokens(llama.llama_model_get_vocab(self._model)))
        n_batch = max(MIN_BATCH_TOKENS, min(n_batch, OUTPUT_BYTES // (4 * max(n_vocab, 1))))
        self._n_batch = n_batch
        try:
            self._open_context(n_batch)
        except EmbeddingError:
            self.close()
            raise
        if llama.llama_pooling_type(self._ctx) not in _POOLING.values():
            self.close()
            raise EmbeddingError(
                f"{self.path} does not pool token vectors into one embedding; "
                "set embedding_model_path to a sentence-embedding GGUF model"
            )

    def _open_context(self, tokens: int) -> None:
        """Have a context that holds a call of ``tokens`` (sized to a power of two from
        :data:`MIN_CALL_TOKENS` to the batch; the full batch when holding)."""
        size = MIN_CALL_TOKENS
        while size < tokens:
            size *= 2
        size = self._n_batch if self.hold else min(size, self._n_batch)
        if self._ctx is not None and self._ctx_tokens >= size:
            return
        self._free_context()
        llama = self._llama
        params = llama.llama_context_default_params()
        params.n_ctx = size
        params.n_batch = size
        # Non-causal attention needs every text of a call in one micro-batch.
        params.n_ubatch = size
        params.n_seq_max = min(size, int(llama.llama_max_parallel_sequences()))
        params.kv_unified = True
        params.n_threads = self._threads
        params.n_threads_batch = self._threads
        params.embeddings = True
        params.pooling_type = self._pooling
        params.no_perf = True
        self._ctx = llama.llama_init_from_model(self._model, params)
        if not self._ctx:
            self._ctx = None
            raise EmbeddingError(f"llama.cpp cannot create a context for {self.path}{log_tail()}")
        self._ctx_tokens = size

    def _free_context(self) -> None:
        if self._ctx is not None:
            self._llama.llama_free(self._ctx)
            self._ctx = None
            self._ctx_tokens = 0

    def _rest(self) -> None:
        """Between calls: free the context and the file's pages, unless holding them."""
        if not self.hold:
            self._free_context()
            return_freed_heap()
            drop_mapped_pages(self.path)

    def _init_batch(self, capacity: int) -> None:
        # The batch lives in ctypes arrays this object owns: filling it is a few slice
        # assignments instead of five ctypes writes per token.
        llama = self._llama
        int32_p = ctypes.POINTER(ctypes.c_int32)
        self._tok = (ctypes.c_int32 * capacity)()
        self._pos = (ctypes.c_int32 * capacity)()
        self._n_seq_id = (ctypes.c_int32 * capacity)(*([1] * capacity))
        self._seq = (ctypes.c_int32 * capacity)()
        self._logits = (ctypes.c_int8 * capacity)(*([1] * capacity))
        base, size = ctypes.addressof(self._seq), ctypes.sizeof(ctypes.c_int32)
        self._seq_ptrs = (int32_p * capacity)(
            *(ctypes.cast(base + size * i, int32_p) for i in range(capacity))
        )
        batch = llama.llama_batch()
        batch.token = ctypes.cast(self._tok, int32_p)
        batch.pos = ctypes.cast(self._pos, int32_p)
        batch.n_seq_id = ctypes.cast(self._n_seq_id, int32_p)
        batch.seq_id = self._seq_ptrs
        batch.logits = ctypes.cast(self._logits, ctypes.POINTER(ctypes.c_int8))
        self._batch = batch

    def _count_tail_specials(self) -> int:
        """How many special tokens the tokenizer appends after the text (1 for BERT's [SEP])."""
        empty = self._tokenize("", truncate=False)
        bos = self._llama.llama_vocab_bos(self._vocab)
        return len(empty) - (1 if empty and empty[0] == bos else 0)

    # -- embedding --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._model is None:
            raise EmbeddingError(f"the embedder for {self.path} was closed")

    def _tokenize(self, text: str, *, truncate: bool = True) -> list[int]:
        llama = self._llama
        data = text.encode("utf-8", errors="replace")
        capacity = len(data) + 8
        for _ in range(2):
            buffer = (llama.llama_token * capacity)()
            n = llama.llama_tokenize(self._vocab, data, len(data), buffer, capacity, True, False)
            if n >= 0:
                break
            capacity = -n
        else:
            raise EmbeddingError("llama.cpp could not tokenize a text")
        tokens = list(buffer[:n])
        if truncate and len(tokens) > self.max_tokens:
            keep = self.max_tokens - self._n_tail
            tokens = tokens[:keep] + tokens[len(tokens) - self._n_tail :]
        return tokens

    def _run(
        self, indices: list[int], token_lists: list[list[int]], out: list[list[float]]
    ) -> None:
        llama = self._llama
        lengths = [len(token_lists[i]) for i in indices]
        n = sum(lengths)
        self._tok[:n] = [t for i in indices for t in token_lists[i]]
        self._pos[:n] = [p for length in lengths for p in range(length)]
        self._seq[:n] = [s for s, length in enumerate(lengths) for _ in range(length)]
        self._batch.n_tokens = n
        memory = llama.llama_get_memory(self._ctx)
        if memory:
            llama.llama_memory_clear(memory, True)
        # A model without memory (BERT) is routed to llama_encode by llama_decode.
        status = llama.llama_decode(self._ctx, self._batch)
        if status != 0:
            raise EmbeddingError(f"llama.cpp failed to embed a batch (status {status}){log_tail()}")
        for seq, index in enumerate(indices):
            pointer = llama.llama_get_embeddings_seq(self._ctx, seq)
            if not pointer:
                raise EmbeddingError("llama.cpp returned no pooled embedding")
            out[index] = unit(array("f", pointer[: self.dim]))


def unit(vector: array[float]) -> list[float]:
    """``vector`` scaled to length 1 (its norm summed exactly), each component rounded to
    float32 as the store keeps it; a zero vector stays zero."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if norm <= 0:
        return vector.tolist()
    return array("f", (x / norm for x in vector)).tolist()


def _missing(exc: ImportError) -> EmbeddingError:
    return EmbeddingError(
        f"embeddings need {exc.name}: install MAMA's local extra "
        "(`pip install 'mama-plugin[local]'`, or run scripts/setup.sh)"
    )


def _pooling_of(value: Any) -> int:
    """The model's own pooling (mean / CLS / last token); mean when it declares none."""
    return int(value) if value in _POOLING.values() else _POOLING["mean"]
