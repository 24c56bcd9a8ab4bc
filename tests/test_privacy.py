"""The privacy filter: private spans dropped, credentials masked, prose left alone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.privacy import redact_text, redact_tree

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
