"""The ``.mama/`` file format: the front-matter subset and a memory's file, written and read back."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.share import frontmatter as fm
from mama_plugin.share import scan
from mama_plugin.share.files import (
    KIND_DIRS,
    SharedLink,
    SharedMemory,
    from_iso,
    iso,
    parse,
    render,
)
from mama_plugin.share.frontmatter import ShareFormatError

_scalars = (
    st.text(max_size=40)
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.booleans()
    | st.none()
)
_keys = st.text(min_size=1, max_size=12)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(_keys, _values, max_size=6))
def test_front_matter_reads_back_what_it_wrote(value: dict[str, Any]) -> None:
    text = fm.dump(value)
    assert fm.load(text) == value
    assert fm.dump(fm.load(text)) == text  # one text for one value


@given(st.integers(min_value=0, max_value=4_102_444_800_000))
def test_times_read_back_to_the_millisecond(ms: int) -> None:
    assert from_iso(iso(ms), "created") == ms


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("reason: JWT failed: p99 307 ms\n", 'must be quoted as "…"'),
        ("topic: auth\ntopic: again\n", "'topic' is given twice"),
        ("a: &x [1]\nb: *x\n", "line 2: an alias (*name) is not read"),
        # A tag builds what no memory holds (a set, bytes), or fails in PyYAML's constructors.
        ("confidence: !!float abc\n", "line 1: a tag (tag:yaml.org,2002:float) is not read"),
        ("s: !!set {a, b}\n", "is not read"),
        ("b: !!binary aGk=\n", "is not read"),
        ("x: 1e999\n", "a number too large"),
        ('a: "\\q"\n', "unknown escape"),
        ("a: [1, 2\n", "line 2"),
        ("links:\n  - to: a\n   relationship: b\n", "line 3"),
        ('reason: "not closed\n', "not closed"),
        ("\ttopic: x\n", "tabs"),
    ],
)
def test_front_matter_a_yaml_reader_refuses_is_refused_with_its_line(text: str, says: str) -> None:
    with pytest.raises(ShareFormatError, match="line") as caught:
        fm.load(text)
    assert says in str(caught.value)


def test_yaml_a_person_writes_in_an_editor_reads() -> None:
    # Comments, flow lists and mappings, block scalars, single quotes, an empty value.
    text = (
        "# edited by hand in an editor\n"
        "topic: auth  # the subject\n"
        "tags: [auth, 'scale out']\n"
        'links: [{to: dec_1, relationship: refines, reason: "it narrows: the old one"}]\n'
        "note: |\n  first line\n  second line\n"
        "folded: >\n  one\n  two\n"
        "empty:\n"
    )
    assert fm.load(text) == {
        "topic": "auth",
        "tags": ["auth", "scale out"],
        "links": [{"to": "dec_1", "relationship": "refines", "reason": "it narrows: the old one"}],
        "note": "first line\nsecond line\n",
        "folded": "one two\n",
        "empty": None,
    }


def test_scalars_read_as_json_would_whatever_yaml_1_1_says() -> None:
    text = "a: yes\nb: 2026-12-01\nc: 0123\nd: 1_000\ne: 0x1F\nf: .inf\ng: -3\nh: 2.5e-3\ni: Null\n"
    assert fm.load(text) == {
        "a": "yes", "b": "2026-12-01", "c": "0123", "d": "1_000", "e": "0x1F", "f": ".inf",
        "g": -3, "h": 0.0025, "i": None,
    }  # fmt: skip


def test_half_a_character_is_written_as_the_replacement_character() -> None:
    assert fm.load(fm.dump({"k": "a\ud800b"})) == {"k": "a\ufffdb"}


def test_a_hand_edited_file_with_a_comment_imports() -> None:
    """A teammate who edited a decision in a pull request and added a comment line once got
    `line 4: expected key: value (got '# edited by hand in an editor')`."""
    text = render(_memory())
    edited = text.replace("topic: auth_strategy\n", "topic: auth_strategy\n# edited by hand\n")
    assert edited != text and parse(edited, where="x.md") == parse(text, where="x.md")


def _memory(**changes: Any) -> SharedMemory:
    fields: dict[str, Any] = {
        "id": "dec_abc123",
        "type": "decision",
        "topic": "auth_strategy",
        "status": "superseded",
        "outcome_status": "FAILED",
        "confidence": 0.8,
        "tags": ("auth", "scale"),
        "links": (SharedLink("dec_old", "refines", "it narrows: the old one, # kept"),),
        "created_at": 1_795_000_000_123,
        "updated_at": 1_795_000_100_000,
        "content": "Use JWT\n# not a heading\n\\ a backslash line\n\nsecond paragraph",
        "layers": {
            "specifics": ["307 ms p99 at 10K req/s"],
            "evidence": [{"source": "bench/auth.txt:89-142", "detail": "p99", "kind": "file"}],
            "reasoning": {
                "primary": "stateless: no DB",
                "alternatives_considered": [{"option": "sessions", "rejected_because": "state"}],
            },
            "tension": {"risks": ["revocation needs a store"]},
            "continuity": {"next_steps": [{"step": "load test", "priority": "HIGH"}]},
            "outcome": {"details": "refresh hit Postgres", "learned": ["tokens need state"]},
        },
    }
    fields.update(changes)
    return SharedMemory(**fields)


def test_a_memory_reads_back_from_its_file_and_renders_the_same_bytes() -> None:
    memory = _memory()
    text = render(memory)
    back = parse(text, where="x.md")
    assert back == memory
    assert render(back) == text
    assert "## Decision\n\nUse JWT\n\\# not a heading\n\\\\ a backslash line" in text


def test_a_tombstone_reads_back_as_a_deletion() -> None:
    grave = SharedMemory("ins_1", "insight", deleted_at=1_795_000_000_000)
    back = parse(render(grave), where="x.md")
    assert back.tombstone and back.id == "ins_1" and back.deleted_at == 1_795_000_000_000


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda t: t.replace("status: superseded", "status: gone"), "status must be"),
        (lambda t: t.replace("confidence: 0.8", "confidence: 3"), "confidence must be"),
        (lambda t: t.replace("primary: ", "secondary_note: "), "needs `primary:`"),
        (lambda t: t.replace("## Tension", "## Worries"), "unknown section ## Worries"),
        (lambda t: "<<<<<<< HEAD\n" + t + "=======\n>>>>>>> theirs\n", "merge conflict markers"),
        (lambda t: t.replace("id: dec_abc123", "id: ../etc"), "is not a memory id"),
    ],
)
def test_a_broken_file_is_refused_naming_what_to_fix(edit: Any, says: str) -> None:
    with pytest.raises(ShareFormatError) as caught:
        parse(edit(render(_memory())), where=".mama/decisions/dec_abc123.md")
    assert says in str(caught.value)
    assert str(caught.value).startswith(".mama/decisions/dec_abc123.md: ")


def test_the_session_start_scans_the_folders_files_are_written_to() -> None:
    assert sorted(KIND_DIRS.values()) == list(scan.KIND_FOLDERS)


def test_an_underline_and_an_empty_section_are_not_errors() -> None:
    text = render(_memory(content="Title\n=======\nbody"))
    text = text.replace("## Tension\n\nrisks:\n  - revocation needs a store\n", "## Tension\n\n")
    back = parse(text, where="x.md")
    assert back.content == "Title\n=======\nbody" and back.layers["tension"] == {}


def test_a_file_larger_than_a_memory_can_be_is_refused_before_it_is_read() -> None:
    """A 20 MB teammate's file once imported, and every matching prompt took 3 s after."""
    text = render(_memory())
    huge = text + "x" * 1_000_001
    with pytest.raises(ShareFormatError, match="a shared memory holds at most 1,000,000"):
        parse(huge, where=".mama/decisions/dec_abc123.md")
    assert parse(text, where="x").id == "dec_abc123"
