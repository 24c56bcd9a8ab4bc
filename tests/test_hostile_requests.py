"""Requests no client should send cannot end the MCP server: nesting past what Python's JSON
reader takes (it gave up at ~1,000 levels and the RecursionError ended the front; issue 50's
first High finding), in every shape, is answered with an error to its id and the session goes
on, through the real front Claude Code runs; the reader itself never raises on any line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_stdio import Wire

from mama_plugin.intake import MAX_DEPTH, nesting
from mama_plugin.jsonrpc import INVALID_REQUEST, Problem, Request, request

FRONT = [sys.executable, "-m", "mama_plugin.server.front"]


def _nested(shape: str, depth: int) -> str:
    return (
        "[" * depth + '"x"' + "]" * depth
        if shape == "array"
        else '{"a":' * depth + "1" + "}" * depth
    )


def _line(ident: object, arguments: str) -> str:
    """A tools/call line whose arguments are spliced in as text (too deep to json.dumps)."""
    head = json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                       "params": {"name": "search_by_context", "arguments": "@"}})  # fmt: skip
    return head.replace('"@"', arguments)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 100_000])
def test_deep_requests_get_an_error_and_the_session_goes_on(
    tmp_path: Path, mama_home: Path, depth: int
) -> None:
    wire = Wire(mama_home, tmp_path, [*FRONT, "--project", str(tmp_path)])
    try:
        shapes = {
            1: _nested("array", depth),  # the arguments themselves
            2: _nested("object", depth),
            3: '{"query": "auth", "extra": ' + _nested("array", depth) + "}",  # a value inside
            4: '{"query": ' + _nested("object", depth) + "}",
        }
        for ident, arguments in shapes.items():
            wire.send(_line(ident, arguments))
        answers = {}
        while len(answers) < len(shapes):
            line = wire.received().get(timeout=60)
            assert line, "the server exited"
            message = json.loads(line)
            answers[message.get("id")] = message
        for ident in shapes:
            assert answers[ident]["error"]["code"] == INVALID_REQUEST, answers[ident]
            assert f"more than {MAX_DEPTH} levels" in answers[ident]["error"]["message"]
        listed = wire.request("tools/list")
        assert "save_decision" in [t["name"] for t in listed["result"]["tools"]]
    finally:
        assert wire.close() == ""


def test_a_request_at_the_limit_is_read_and_one_past_it_refused() -> None:
    params = {"name": "x", "arguments": json.loads(_nested("array", MAX_DEPTH - 2))}
    line = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
    assert nesting(json.loads(line)) == MAX_DEPTH
    assert isinstance(request(line.encode()), Request)
    params["arguments"] = [params["arguments"]]
    line = json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": params})
    refused = request(line.encode())
    assert isinstance(refused, Problem) and refused.ident == 6, refused


def test_a_line_too_deep_to_parse_is_answered_to_its_id() -> None:
    deep = _nested("array", 5_000)
    for ident in (7, "seven", 'a"quoted\\\\"id'):
        line = '{"method": "tools/call", "params": ' + deep + ', "id": ' + json.dumps(ident) + "}"
        found = request(line.encode())
        assert isinstance(found, Problem) and found.ident == ident, found
    nameless = request(("[" * 5_000 + "]" * 5_000).encode())
    assert nameless == Problem(None, INVALID_REQUEST, found.message), nameless


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200) | JSON.map(lambda v: json.dumps(v).encode()))
def test_the_reader_never_raises(line: bytes) -> None:
    assert request(line) is None or isinstance(request(line), Request | Problem)
