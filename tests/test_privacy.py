"""The privacy filter: private spans dropped, credentials and personal data masked, prose left alone."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.secrets import _holds, false_positives, leak_run
from benchmarks.secrets_corpus import PRIVATE_VARIANTS, corpus
from benchmarks.secrets_paths import CLIPS, cut_at
from mama_plugin import personal
from mama_plugin.assist.draft import draft_narrative
from mama_plugin.config import Config
from mama_plugin.privacy import redact_text, redact_tree
from mama_plugin.schema.assist import DraftRequest
from mama_plugin.services.render import clip
from mama_plugin.storage import NewMemory, Store
from mama_plugin.transfer.dump import export_data

SECRETS = [
    ("api_key", "sk-ant-api03-" + "a1B2" * 8),
    ("api_key", "sk-proj-" + "Zx9" * 10),
    ("api_key", "AKIA" + "ABCDEFGHIJKLMNOP"),
    ("api_key", "ghp_" + "a" * 36),
    ("api_key", "xoxb-123456789012-abcdefghij"),
    ("bearer_token", "Authorization: Bearer abcdef0123456789abcdef"),
    ("url_password", "postgres://app:hunter22@db.internal:5432/main"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlX2hlcmU"),
    ("assigned_secret", "DB_PASSWORD=sup3rsecret"),
    ("assigned_secret", 'api_key: "letmein-please"'),
    (
        "private_key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
    ),
]


@pytest.mark.parametrize(("kind", "secret"), SECRETS)
def test_credentials_are_masked_and_counted(kind, secret) -> None:
    clean, counts = redact_text(f"before {secret} after")
    assert counts[kind] >= 1
    assert "REDACTED" in clean
    assert clean.startswith("before ") and clean.endswith(" after")
    for part in (
        "a1B2a1B2",
        "hunter22",
        "sup3rsecret",
        "letmein",
        "b3BlbnNzaC1rZXk",
        "c2lnbmF0dXJl",
    ):
        assert part not in clean


def test_private_spans_are_dropped_even_unclosed() -> None:
    clean, counts = redact_text("keep <private>drop me</private> keep <PRIVATE>and all the rest")
    assert clean == "keep  keep "
    assert counts["private_block"] == 2


@pytest.mark.parametrize("prose", [
    "JWT failed at 10K req/s: token refresh hit the DB",
    "password: required for the admin page",
    "the token: refresh path",
    "see https://example.com/docs/auth#tokens",
    "Bearer tokens are stateless",
])  # fmt: skip
def test_ordinary_prose_is_untouched(prose) -> None:
    assert redact_text(prose) == (prose, {})


@given(st.text(max_size=200))
def test_redaction_is_idempotent(text) -> None:
    once, _ = redact_text(text)
    twice, counts = redact_text(once)
    assert twice == once
    assert not counts


@given(st.recursive(st.text(max_size=20) | st.integers() | st.none(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=10))  # fmt: skip
def test_redact_tree_keeps_structure(value) -> None:
    clean, _ = redact_tree(value)

    def shape(v):
        if isinstance(v, dict):
            return {k: shape(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [shape(x) for x in v]
        return type(v).__name__

    assert shape(clean) == shape(value)


def test_redact_tree_counts_nested_secrets() -> None:
    clean, counts = redact_tree({"a": ["password=abc12345", {"b": "<private>x</private>y"}]})
    assert clean == {"a": ["password=[REDACTED]", {"b": "y"}]}
    assert dict(counts) == {"assigned_secret": 1, "private_block": 1}


# -- the scanner against the corpus ---------------------------------------------------------

CORPUS = corpus(7)


def test_the_corpus_has_forty_credential_kinds_and_personal_data() -> None:
    kinds = {case.kind for case in CORPUS if not case.personal}
    assert len(kinds) >= 40
    assert {"email", "phone_international", "phone_us", "card_visa", "card_amex"} <= {
        case.kind for case in CORPUS if case.personal
    }


@pytest.mark.parametrize("case", CORPUS, ids=lambda case: case.kind)
def test_every_corpus_kind_is_masked(case) -> None:
    clean, counts = redact_text(f"Earlier today: {case.text} — done.")
    assert counts, case.text
    assert not _holds(clean.encode(), case.secret), clean
    assert redact_text(clean) == (clean, {})  # idempotent


@pytest.mark.parametrize("seed", range(1, 6))
def test_other_draws_of_the_corpus_are_masked_too(seed) -> None:
    leaks = [c.kind for c in corpus(seed) if _holds(redact_text(c.text)[0].encode(), c.secret)]
    assert leaks == []


@pytest.mark.parametrize("limit", CLIPS)
def test_a_secret_cut_by_a_clip_is_masked_all_the_same(limit) -> None:
    # The rolling checkpoint clips commands and sentences; stored text from before masking
    # moved ahead of clipping is read through the filter again, so a cut token must still go.
    leaks = []
    for case in corpus(3):
        command = cut_at(case, limit)
        clipped = clip(command, limit)
        if command and _holds(redact_text(clipped)[0].encode(), case.secret):
            leaks.append((case.kind, clipped[-60:]))
    assert leaks == []


@pytest.mark.parametrize("variant", PRIVATE_VARIANTS)
def test_private_variants_are_dropped(variant) -> None:
    clean, counts = redact_text("keep " + variant.format(s="the customer's name") + " tail")
    assert "customer" not in clean and counts["private_block"] == 1
    assert clean.startswith("keep ")


@pytest.mark.parametrize("text", [
    "DB_PASSWORD=correcthorse", "DB_PASS=quietmeadow", "MYSQL_PWD=staplegun mysqldump",
    "redis://:bluebattery@cache:6379", "mysql -u root -priverlantern shop",
    "curl -u admin:correcthorse https://x", "docker login --password staplegun host",
    "machine h login bob password bluebattery", "  POSTGRES_PASSWORD: riverlantern29",
])  # fmt: skip
def test_passwords_without_digits_or_prefixes_are_masked(text) -> None:
    assert "staplegun" not in redact_text("--password staplegun")[0]
    clean, _ = redact_text(text)
    assert not any(
        w in clean
        for w in ("correcthorse", "quietmeadow", "staplegun", "bluebattery", "riverlantern")
    )


@pytest.mark.parametrize("prose", [
    "set DB_PASSWORD in the .env file, then restart",
    "sort_key=name and primary_key = id", "--password-stdin reads it from the pipe",
    "mkdir -p build && ssh -p 2222 deploy@host", "git clone git@github.com:acme/api.git",
    "see icon@2x.png", "commit 3e42b68f0c1d9a7e5b4c2f1e0d9c8b7a6f5e4d3c fixed it",
    "request 123e4567-e89b-12d3-a456-426614174000 timed out",
    "created_at 1700000000000, version 2.14.1, port 127.0.0.1:8080",
    "p99 307 ms at 10,000 req/s; 2,140 jobs/s", "on 2026-11-23 at 17:38",
    "password: required for the admin page", "token = request.headers['x-token']",
    "the secret: keep it short", "api_key = os.environ['API_KEY']", 'password = "${DB_PASSWORD}"',
    "the migration to users_table_v2…", "auth: oauth2",
])  # fmt: skip
def test_developer_prose_is_untouched(prose) -> None:
    assert redact_text(prose) == (prose, {})


# -- personal data ---------------------------------------------------------------------------


def test_personal_data_is_masked_unless_kept() -> None:
    text = "mail ada@example.org, call +44 20 7946 0991 or (555) 010-0199, card 4111 1111 1111 1111"
    clean, counts = redact_text(text)
    assert counts == {"email": 1, "phone": 2, "card": 1}
    assert "ada@" not in clean and "7946" not in clean and "4111" not in clean
    assert redact_text(text, personal=False) == (text, {})


def test_card_numbers_need_the_luhn_check_and_an_issuer() -> None:
    assert personal.is_card_number("4111 1111 1111 1111")
    assert not personal.is_card_number("4111 1111 1111 1112")  # Luhn fails
    assert not personal.is_card_number("1234 5678 9012 3452")  # no issuer starts with 1
    assert personal.luhn_valid("79927398713")


def test_keep_personal_data_is_a_setting_of_the_store(mama_home, project) -> None:
    config = Config(mama_home)
    config.set("keep_personal_data", "true")
    with Store.open(config=Config(mama_home)) as kept:
        record, found = kept.memories.insert(
            NewMemory(
                type="context",
                project=project,
                content="owner ada@example.org, key ghp_" + "Ab1" * 12,
            )
        )
        assert "ada@example.org" in record.content and "ghp_" not in record.content
        assert dict(found.counts) == {"api_key": 1}
    config.set("keep_personal_data", "false")
    with Store.open(config=Config(mama_home)) as masked:
        assert "ada@example.org" not in masked.memories.require(record.id).content


# -- at recall -------------------------------------------------------------------------------


def test_rows_written_before_a_rule_existed_are_masked_when_read(store, project) -> None:
    record, _ = store.memories.insert(NewMemory(type="context", project=project, content="plain"))
    other, _ = store.memories.insert(NewMemory(type="context", project=project, content="other"))
    link, _ = store.links.add(record.id, other.id, "relates_to", "a plain reason")
    assert store.links.of(record.id)[0].reason == "a plain reason"  # found clean, remembered
    old = "Deploy with DB_PASS=quietmeadow and hvs." + "Q" * 30 + "x1"
    store.conn.execute(  # what an older filter let through, written as it was
        "UPDATE memories SET content = ?, reasoning = ? WHERE id = ?",
        (old, json.dumps({"primary": old}), record.id),
    )
    store.conn.execute("UPDATE memory_links SET reason = ? WHERE id = ?", (old, link.id))
    read = store.memories.require(record.id)
    assert "quietmeadow" not in read.content and "QQQQ" not in read.reasoning["primary"]
    assert "quietmeadow" not in store.links.of(record.id)[0].reason
    exported = json.dumps(export_data(store))
    assert "quietmeadow" not in exported and "[REDACTED" in exported


def test_a_draft_quotes_no_secret() -> None:
    request = DraftRequest(
        decision="Use the staging database",
        context="We decided on staging because DB_PASSWORD=quietmeadow works and it was faster.",
        draft=True,
    )
    draft = draft_narrative(request)
    assert "quietmeadow" not in json.dumps(draft.proposal)


# -- every write path, every file (the bench) ------------------------------------------------


def test_no_secret_reaches_any_file_through_any_write_path() -> None:
    figures = leak_run(seed=11)
    assert figures["leaks"] == []
    assert figures["credential_kinds"] >= 40
    assert figures["tool_errors"] == figures["expected_tool_errors"]
    assert figures["memories_exported"] >= 4 * figures["cases"]  # the saves really happened
    assert figures["reason_characters_accepted"] > 0  # and suggested links got their reasons
    assert {"mama/mama.db", "mama/mama.db-wal"} <= set(figures["canary_found_in"])
    assert any(p.endswith("export.json") for p in figures["canary_found_in"])


def test_ordinary_transcripts_have_nothing_masked() -> None:
    figures = false_positives(None)
    assert figures, "the transcript fixtures are missing"
    for name, measured in figures.items():
        assert measured["texts"] > 1000, name
        assert measured["masked"] == 0, measured["examples"]


def test_mamas_own_settings_help_is_never_masked_as_a_secret() -> None:
    """`/mama:configure` shows `mama config list`: a package name before an ellipsis read as a
    clipped credential (found by the truth set's recording)."""
    import dataclasses

    from mama_plugin.settings import Settings

    helps = " ".join(f.metadata.get("help", "") for f in dataclasses.fields(Settings))
    assert "part-00N" in helps and redact_text(helps) == (helps, {})
