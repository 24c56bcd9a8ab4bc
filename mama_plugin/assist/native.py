"""What MAMA does around llama.cpp's loads and closes that ``Llama()`` offers no argument for."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def without_weight_repacking(llama_cpp: Any) -> Iterator[None]:
    """Load with llama.cpp's extra CPU buffer types (weight repacking, AMX) switched off.

    On this project's CI machines (Xeon with AMX, sandboxed) the first decode of a Q4_K model
    segfaults inside those kernels; plain CPU buffers work everywhere. ``Llama()`` offers no
    argument for it, so its defaults are patched for the duration of one load.
    """
    module = llama_cpp.llama_cpp
    original = module.llama_model_default_params

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    module.llama_model_default_params = defaults
    try:
        yield
    finally:
        module.llama_model_default_params = original
