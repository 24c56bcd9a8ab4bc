"""The team store's encoders and validators, property-tested (no database needed)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.errors import TeamError
from mama_plugin.storage.team.outbox import digest, link_key, split_link_key

psycopg = pytest.importorskip("psycopg", reason="the team store's driver: pip install -e '.[team]'")

_part = st.text(min_size=1).filter(lambda t: "\x1f" not in t)


@given(_part, _part, _part)
def test_a_link_key_splits_back_into_its_ends(from_id: str, to_id: str, rel: str) -> None:
    assert split_link_key(link_key(from_id, to_id, rel)) == (from_id, to_id, rel)


@given(st.dictionaries(st.text(), st.one_of(st.text(), st.integers(), st.floats(allow_nan=False))))
def test_a_digest_does_not_depend_on_key_order(body: dict[str, object]) -> None:
    assert digest(dict(reversed(list(body.items())))) == digest(body)
    assert len(digest(body)) == 64


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=30))
def test_a_url_is_kept_without_its_password(password: str) -> None:
    from psycopg.conninfo import conninfo_to_dict

    from mama_plugin.team.connection import check_url

    kept, had = check_url(f"postgresql://alice:{password}@db.example:5432/mama")
    assert had
    assert conninfo_to_dict(kept) == {
        "user": "alice",
        "host": "db.example",
        "port": "5432",
        "dbname": "mama",
    }
    assert check_url("postgresql://alice@db.example/mama") == (
        "postgresql://alice@db.example/mama",
        False,
    )


@pytest.mark.parametrize("url", ["mysql://x/y", "db.example", "", "http://db/mama"])
def test_only_a_postgresql_url_is_taken(url: str) -> None:
    from mama_plugin.team.connection import check_url

    with pytest.raises(TeamError, match="is not a PostgreSQL URL"):
        check_url(url)
