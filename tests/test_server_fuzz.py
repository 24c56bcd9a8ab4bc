"""Every tool driven with random arguments: no exception escapes, the database stays whole."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
from conftest import connect
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mama_plugin.config import Config
from mama_plugin.server.state import State
from mama_plugin.server.tool_table import TOOLS

DESKTOP = types.Implementation(name="fuzz", version="1")

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-10, 10**6)
    | st.floats(allow_nan=True)
    | st.text(max_size=40)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3)
    ),
    max_leaves=8,
)


def _field_names(tool) -> list[str]:
    return list(tool.model.model_fields)


@st.composite
def arguments(draw, tool) -> dict:
    """Mostly the tool's own field names (so validation goes deep), sometimes strangers."""
    fields = [*_field_names(tool), "zzz", "reasoning", "to_id"]
    keys = draw(st.lists(st.sampled_from(fields), max_size=6, unique=True))
    out = {}
    for key in keys:
        if key in {"reasoning"}:
            out[key] = draw(values | st.fixed_dictionaries({"primary": st.text(max_size=30)}))
        elif key in {"links"}:
            out[key] = draw(
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "to_id": st.text(max_size=8),
                            "relationship": st.text(max_size=8),
                            "reason": st.text(max_size=8),
                        }
                    ),
                    max_size=2,
                )
                | values
            )
        else:
            out[key] = draw(values)
    return out


calls = st.lists(
    st.sampled_from(TOOLS).flatmap(lambda t: st.tuples(st.just(t.name), arguments(t))),
    min_size=1,
    max_size=6,
)


def _consistent(state: State) -> None:
    conn = state.store.conn
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    memories = conn.execute("SELECT count(*) FROM memories").fetchall()[0][0]
    assert conn.execute("SELECT count(*) FROM memories_fts").fetchall()[0][0] == memories
    bad = conn.execute("SELECT count(*) FROM memory_links WHERE trim(reason) = ''").fetchall()[0][0]
    assert bad == 0


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=calls)
def test_random_calls_never_crash_the_server(
    tmp_path: Path, mama_home: Path, project: str, sequence
) -> None:
    state = State(
        Config(mama_home), project, tmp_path / f"fuzz-{abs(hash(str(sequence))) % 10**9}.db"
    )

    async def drive() -> None:
        async with connect(state, DESKTOP) as client:
            for name, args in sequence:
                result = await client.call_tool(name, args)
                assert result.content, "every answer carries text"
                if result.is_error:
                    message = result.content[0].text
                    assert "failed inside MAMA" not in message, message  # validation, never a crash

    try:
        anyio.run(drive)
        _consistent(state)
        saved = state.store.memories.counts()["memories"]
        event("saved something" if saved else "saved nothing")
    finally:
        state.close()
