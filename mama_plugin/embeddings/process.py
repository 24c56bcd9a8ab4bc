"""What llama.cpp shares across a process: its log, the cores it runs on, a model file's pages.

llama.cpp has one log callback per process (:func:`install_log_callback` keeps its last
warnings for error messages, :func:`log_tail`). It maps a model file with ``MAP_POPULATE``,
so a loaded model holds every page of its file in memory, even rows of a vocabulary-wide
table it never reads: :func:`drop_mapped_pages` lets them go (they are the file's, shared and
read back on demand).
"""

from __future__ import annotations

import collections
import ctypes
import os
import threading
from typing import Any

# ggml_log_level values (ggml.h)
_GGML_LOG_WARN, _GGML_LOG_ERROR, _GGML_LOG_CONT = 3, 4, 5
_recent_log: collections.deque[str] = collections.deque(maxlen=8)
_log_callback: Any = None
_log_lock = threading.Lock()
_DROP = 4  # MADV_DONTNEED, Linux's value (asm-generic/mman-common.h)
_madvise: Any = None
# Held while a model file's mappings are read and advised, and while an embedder frees its
# model (which unmaps its file): a range read from /proc/self/maps cannot be unmapped and
# reused by other memory (which MADV_DONTNEED would zero) before it is advised.
MAPPINGS_LOCK = threading.Lock()


def available_cores() -> int:
    """How many cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def install_log_callback(llama_cpp: Any) -> None:
    """Route llama.cpp's log into a small ring buffer instead of stderr (process-wide).

    Installed again on every call: importing ``llama_cpp.llama`` (which the embedder's bare
    bindings leave for later, :mod:`.native`) sets llama-cpp-python's own logger, which
    prints to stderr.
    """
    global _log_callback
    with _log_lock:
        if _log_callback is not None:
            llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
            return

        kept = [False]  # whether the previous message was kept (for continuation lines)

        def _collect(level: int, text: bytes, user_data: Any) -> None:
            line = text.decode("utf-8", errors="replace").strip()
            if level == _GGML_LOG_CONT:
                if kept[0] and _recent_log and line:
                    _recent_log[-1] += " " + line
                return
            kept[0] = level in (_GGML_LOG_WARN, _GGML_LOG_ERROR)
            if kept[0] and line:
                _recent_log.append(line)

        _log_callback = llama_cpp.llama_log_callback(_collect)
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))


def log_tail() -> str:
    """The last llama.cpp warnings, as a parenthesised suffix for an error message ("" if none)."""
    lines = [line for line in _recent_log if line]
    return f" (llama.cpp: {'; '.join(lines[-3:])})" if lines else ""


def forget_log() -> None:
    """Clear the kept warnings (before a load, so an error names only its own)."""
    _recent_log.clear()


def drop_mapped_pages(path: str | os.PathLike[str]) -> int:
    """Unmap from this process the pages of ``path``'s read-only mappings; return the bytes
    advised.

    ``madvise(MADV_DONTNEED)`` on a file's mapping leaves the mapping and its contents as
    they are: a page read again is the file's, faulted back from the page cache (about 10
    ms for the ~110 MB of EmbeddingGemma's layers a prompt reads). What was dropped stops
    counting in the process's memory and is the first the kernel may reclaim. Linux only
    (``/proc/self/maps``); elsewhere, or on any failure, nothing happens.
    """
    target = os.path.realpath(path)
    madvise = _libc_madvise()
    if madvise is None:
        return 0
    with MAPPINGS_LOCK:
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
                spans = [
                    [int(x, 16) for x in fields[0].split("-")]
                    for fields in (line.split(maxsplit=5) for line in maps)
                    if len(fields) == 6
                    and fields[5].rstrip("\n") == target
                    and "w" not in fields[1]
                ]
        except OSError:
            return 0
        return sum(end - start for start, end in spans if madvise(start, end - start, _DROP) == 0)


def _libc_madvise() -> Any:
    global _madvise
    if _madvise is None:
        try:
            function = ctypes.CDLL(None, use_errno=True).madvise
        except (OSError, AttributeError):
            return None
        function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        function.restype = ctypes.c_int
        _madvise = function
    return _madvise


def return_freed_heap() -> None:
    """``malloc_trim(0)``: free heap pages back to the system; nothing where libc lacks it."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl)
        return
    trim(0)
