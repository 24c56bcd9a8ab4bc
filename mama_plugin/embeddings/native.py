"""llama.cpp's ctypes bindings without the package's high-level half, until someone needs it.

``import llama_cpp`` runs the package's ``__init__``, which imports ``llama_cpp.llama`` too:
``Llama``, the chat formats, jinja2 and diskcache (~0.1 s of imports, 0.2 s under load). The
embedder drives the C API and needs only ``llama_cpp.llama_cpp`` (~0.03 s); in the MCP server
those imports ran beside the prompt lane's own, competing for the GIL, while the session's first
prompt waited for the model. :func:`bindings` registers the package without running its
``__init__`` and imports the bindings alone; the first lookup of a name the bare package lacks
(``llama_cpp.Llama``, ``from llama_cpp import LlamaGrammar``) runs the ``__init__`` then, so
every other importer still sees the whole package.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

PACKAGE = "llama_cpp"
_lock = threading.RLock()
_completing = False


def bindings() -> ModuleType:
    """``llama_cpp.llama_cpp``, importing no more of the package than it needs.

    Raises ImportError (with ``name``) when llama-cpp-python is not installed."""
    with _lock:
        if PACKAGE not in sys.modules:
            spec = importlib.util.find_spec(PACKAGE)
            if spec is None or spec.loader is None:
                raise ImportError(f"No module named {PACKAGE!r}", name=PACKAGE)
            package = importlib.util.module_from_spec(spec)
            package.__getattr__ = _completer(package)  # type: ignore[method-assign]
            sys.modules[PACKAGE] = package
            try:
                return importlib.import_module(f"{PACKAGE}.llama_cpp")
            except BaseException:
                sys.modules.pop(PACKAGE, None)
                raise
        return importlib.import_module(f"{PACKAGE}.llama_cpp")


def _completer(package: ModuleType) -> Any:
    def complete(name: str) -> Any:
        """The bare package's missing ``name``: its ``__init__`` runs first (once)."""
        global _completing
        if name.startswith("__") or _completing:
            raise AttributeError(f"module {PACKAGE!r} has no attribute {name!r}")
        with _lock:
            if package.__dict__.get("__getattr__") is complete:
                _completing = True
                try:
                    assert package.__spec__ is not None and package.__spec__.loader is not None
                    package.__spec__.loader.exec_module(package)
                finally:
                    _completing = False
                    package.__dict__.pop("__getattr__", None)
        try:
            return package.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {PACKAGE!r} has no attribute {name!r}") from None

    return complete
