"""The import contract: rooms, which room may import which, no cycles, small modules, a cold hook.

An import-linter contract written with the standard library: every module of ``mama_plugin``
is read with ``ast`` (imports at module level and inside functions, relative and absolute;
``if TYPE_CHECKING:`` blocks are exempt) and mapped to its room by the tables below. To move a
module or open a door, change the tables, then docs/architecture.md's "Rooms" table with them.

The benchmarks (``benchmarks/``, ``python -m benchmarks``) are outside the package: they may
import any room, and no module of ``mama_plugin`` may import them (nor the tests), so the
wheel, which ships ``mama_plugin`` alone, never misses one. They keep the line limit too.
"""

from __future__ import annotations

import ast
import contextlib
import json
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from rooms import (
    FORBIDDEN_STDLIB,
    MAY_IMPORT,
    MODULES,
    MOST_ROOT_MODULES,
    MOST_WING_MODULES,
    NEVER_IMPORTED,
    OUTSIDE,
    PACKAGE,
    RETIRED,
    ROOT,
    THIRD_PARTY,
    WINGS,
    render,
    rendered_section,
    room_of,
)
from rooms import _outside_files as outside_files

from mama_plugin.config import Config
from mama_plugin.hooks.session_start import session_start
from mama_plugin.server.warm_up import HOLD_S
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store

# SQL stays in storage: other rooms go through the store's API, never ``store.conn``. (The
# benchmarks, outside the package, may: they measure the store from outside.)
CONNECTION_ROOMS = ("storage",)

MAX_LINES = 400
# The MCP front answers initialize and tools/list before its warm-up imports anything heavy.
FRONT = "mama_plugin.server.front"
# What the SessionStart hook loads on a cold start: the entry point and the handler the runner
# imports for it. Neither may reach these packages at module level.
COLD_ROOTS = ("mama_plugin.hooks.__main__", "mama_plugin.hooks.session_start")
HEAVY = frozenset({"mcp", "mcp_types", "pydantic", "jinja2", "numpy", "llama_cpp"})
# What the front's hook calls run on (imported by its warm-up): neither pydantic, the schema,
# the SDK nor the tool table, which load only for a listed tool's call.
HOOK_LANE = ("mama_plugin.server.hook_lane", "mama_plugin.server.hook_tools")
NOT_ON_THE_LANE = frozenset(
    {"mcp", "mcp_types", "pydantic", "mama_plugin.schema", "mama_plugin.server.tools"}
)


@dataclass(frozen=True)
class Import:
    """One import statement's target as seen from ``source``."""

    source: str
    target: str  # a mama_plugin module, or a third-party / stdlib top-level name
    line: int
    top_level: bool  # runs when ``source`` is imported (not inside a function)

    @property
    def internal(self) -> bool:
        return self.target == PACKAGE or self.target.startswith(PACKAGE + ".")


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every node under ``node`` with whether it sits in a function, skipping TYPE_CHECKING."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for other in child.orelse:
                yield other, in_function
                yield from _walk(other, in_function)
            continue
        nested = in_function or isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
        )
        yield child, in_function
        yield from _walk(child, nested)


def _resolve(module: str, name: str | None, level: int) -> str:
    """The absolute module a ``from ... import`` reads from."""
    if level == 0:
        return name or ""
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{name}" if name else package


def imports_of(module: str) -> list[Import]:
    """Every import in ``module``; ``from pkg import sub`` targets the submodule when it is one."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []
    for node, in_function in _walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = _resolve(module, node.module, node.level)
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            targets = subs if len(subs) == len(node.names) else [base, *subs]
        for target in targets:
            internal = target == PACKAGE or target.startswith(PACKAGE + ".")
            name = _known(target) if internal else target.partition(".")[0]
            if name and name != "__future__":
                found.append(Import(module, name, node.lineno, not in_function))
    return found


def _known(target: str) -> str:
    """The deepest module of the package that ``target`` names (``a.b.Name`` -> ``a.b``)."""
    while target not in MODULES and "." in target:
        target = target.rpartition(".")[0]
    return target


IMPORTS = {module: imports_of(module) for module in MODULES}


def _where(imp: Import) -> str:
    return f"{MODULES[imp.source].relative_to(ROOT.parent)}:{imp.line}"


def _report(title: str, problems: list[str]) -> None:
    if problems:
        pytest.fail(f"{len(problems)} {title}:\n  " + "\n  ".join(sorted(problems)))


def test_every_module_has_a_room() -> None:
    _report(
        "modules in no room (add them to ROOMS)",
        [m for m in MODULES if room_of(m) is None and m not in RETIRED],
    )


def _retired(module: str) -> str | None:
    """The entry of ``RETIRED`` that ``module`` is, or is under (a retired package's module)."""
    return next((r for r in RETIRED if module == r or module.startswith(r + ".")), None)


def test_retired_modules_are_gone() -> None:
    left = [f"{m} -> {RETIRED[r]}" for m in MODULES if (r := _retired(m)) is not None]
    for name, where in RETIRED.items():  # a retired package's data files too (not its bytecode)
        base = ROOT.parent.joinpath(*name.split("."))
        files = [base.with_suffix(".py")] if base.with_suffix(".py").exists() else []
        if base.is_dir():
            files += [f for f in base.rglob("*") if f.is_file() and "__pycache__" not in f.parts]
        left += [f"{f.relative_to(ROOT.parent)} -> {where}" for f in files]
    _report("modules or files still where they left (see RETIRED)", sorted(set(left)))


def test_the_product_never_imports_its_benchmarks_or_tests() -> None:
    _report(
        "imports of what the wheel does not ship (see NEVER_IMPORTED)",
        [
            f"{_where(imp)} {module} imports {imp.target}"
            for module, found in IMPORTS.items()
            for imp in found
            if imp.target in NEVER_IMPORTED
        ],
    )


def test_the_wheel_ships_the_product_alone() -> None:
    """No benchmark in the wheel, and no command it installs that needs a checkout to run."""
    project = tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [PACKAGE]
    scripts = project["project"]["scripts"]
    assert all(target.startswith(PACKAGE + ".") for target in scripts.values()), scripts


def test_imports_follow_the_layering() -> None:
    problems = []
    for module, found in IMPORTS.items():
        room = room_of(module)
        if room is None:
            continue
        for imp in found:
            if imp.internal:
                target_room = room_of(imp.target) or "no room"
                if target_room not in (room, *MAY_IMPORT[room]):
                    problems.append(
                        f"{_where(imp)} {module} ({room}) imports {imp.target} ({target_room})"
                    )
            elif imp.target in FORBIDDEN_STDLIB.get(room, ()):
                problems.append(f"{_where(imp)} {module} ({room}) imports {imp.target}")
            elif imp.target not in sys.stdlib_module_names:
                allowed = THIRD_PARTY[room]
                if allowed is not None and imp.target not in allowed:
                    problems.append(f"{_where(imp)} {module} ({room}) imports {imp.target}")
    _report("imports against the layering (see ROOMS / MAY_IMPORT in this file)", problems)


def test_sql_stays_in_storage() -> None:
    problems = []
    for module, path in MODULES.items():
        if room_of(module) in CONNECTION_ROOMS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "conn":
                problems.append(
                    f"{path.relative_to(ROOT.parent)}:{node.lineno} {module} uses .conn"
                )
    _report("uses of the store's connection outside storage", problems)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_no_import_cycles() -> None:
    """No two modules hold each other, by any import that runs: at module level or inside a
    function (a lazy import hides a circle from the interpreter, not from a reader)."""
    graph = {
        module: {i.target for i in found if i.internal and i.target != module}
        for module, found in IMPORTS.items()
    }
    _report(
        "import cycles between modules (imports at module level and in functions)",
        [" <-> ".join(component) for component in _cycles(graph)],
    )


def test_the_wings_keep_their_sizes() -> None:
    """The services' root keeps what every wing shares; no wing grows into a corridor."""
    counts = {wing: 0 for wing in WINGS}
    for module, path in MODULES.items():
        room = room_of(module)
        if room in counts and path.name != "__init__.py":
            counts[room] += 1
    problems = [
        f"{w}: {n} modules (at most {MOST_WING_MODULES})"
        for w, n in counts.items()
        if w != "services" and n > MOST_WING_MODULES
    ]
    if counts["services"] > MOST_ROOT_MODULES:
        problems.append(
            f"the services' root: {counts['services']} flat modules (at most {MOST_ROOT_MODULES})"
        )
    _report("wings over their size", problems)


def _defined(tree: ast.Module) -> set[str]:
    """The names a module binds itself at its top (definitions, assignments), not imports."""
    names: set[str] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.If | ast.Try | ast.With):
            todo += [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            todo += [s for h in getattr(node, "handlers", []) for s in h.body]
    return names


def test_no_module_re_exports() -> None:
    """A name is imported from the module that defines it; only a package's ``__init__`` may
    gather names (and declare ``__all__``), so no facade keeps an old path alive."""
    defined = {m: _defined(ast.parse(p.read_text(encoding="utf-8"))) for m, p in MODULES.items()}
    problems = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if path.name != "__init__.py" and "__all__" in defined[module]:
            problems.append(f"{path.relative_to(ROOT.parent)} declares __all__")
        for node, _ in _walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = _resolve(module, node.module, node.level)
            if base not in MODULES or MODULES[base].name == "__init__.py":
                continue
            for alias in node.names:
                if f"{base}.{alias.name}" not in MODULES and alias.name not in defined[base]:
                    problems.append(
                        f"{path.relative_to(ROOT.parent)}:{node.lineno} takes "
                        f"{alias.name} from {base}, which only imports it"
                    )
    _report("re-exports outside a package's __init__", problems)


def test_no_module_is_over_the_limit() -> None:
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in MODULES.items()}
    for folder in OUTSIDE.values():
        for path in outside_files(folder):
            if path.suffix == ".py":
                sizes[str(path.relative_to(ROOT.parent))] = len(path.read_text().splitlines())
    _report(
        f"modules over {MAX_LINES} lines",
        [f"{m} ({n} lines)" for m, n in sizes.items() if n > MAX_LINES],
    )


def _cold_closure(roots: tuple[str, ...] = COLD_ROOTS) -> dict[str, tuple[str, ...]]:
    """Every module ``roots`` load at module level, with the chain of imports that got there.

    Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` too, so parents count.
    """
    chains: dict[str, tuple[str, ...]] = {}
    todo = [(root, (root,)) for root in roots]
    while todo:
        module, chain = todo.pop()
        if module in chains:
            continue
        chains[module] = chain
        if module not in MODULES:
            continue
        parents = [module.rsplit(".", n)[0] for n in range(1, module.count(".") + 1)]
        targets = [i.target for i in IMPORTS[module] if i.top_level] + parents
        todo.extend((t, (*chain, t)) for t in targets if t not in chains)
    return chains


def test_the_cold_session_start_path_stays_light() -> None:
    reached = _cold_closure()
    _report(
        "heavy imports on the cold SessionStart path",
        [" -> ".join(chain) for name, chain in reached.items() if name in HEAVY],
    )


REDIS = {
    "topic": "auth_strategy",
    "decision": "Server-side sessions in Redis",
    "reasoning": "refresh without a DB round trip",
}


def test_a_cold_session_start_loads_nothing_heavy_at_run_time(mama_home: Path) -> None:
    """The real entry point on a cached brief (``-X importtime`` lists every module loaded).

    tests/test_hooks.py checks the same through ``runner.run``; this one runs ``python -m``.
    """
    project = "/work/layers-project"
    with Store.open(config=Config(mama_home)) as store:
        save_decision(store, project, REDIS)
    event = json.dumps({"cwd": project, "source": "startup"})
    # The render fills the cache, as the server does after each turn.
    assert session_start(json.loads(event), Config(mama_home))
    command = [sys.executable, "-X", "importtime", "-m", "mama_plugin.hooks", "session-start"]
    proc = subprocess.run(
        command, input=event, capture_output=True, text=True, check=True, timeout=60
    )
    assert "Server-side sessions in Redis" in proc.stdout
    loaded = {
        line.rpartition("|")[2].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "apsw" in loaded
    assert not loaded & HEAVY, sorted(loaded & HEAVY)


def test_the_front_loads_nothing_heavy_at_module_level() -> None:
    reached = _cold_closure((FRONT,))
    _report(
        "heavy imports at module level under the MCP front",
        [" -> ".join(chain) for name, chain in reached.items() if name in HEAVY],
    )


def test_the_hook_lane_loads_no_pydantic_at_module_level() -> None:
    """The hook table, the lane that runs it and the hook handlers: what answers a prompt."""
    reached = _cold_closure(HOOK_LANE)
    _report(
        "pydantic, mcp or the tool table at module level under the hook lane",
        [" -> ".join(chain) for name, chain in reached.items() if name in NOT_ON_THE_LANE],
    )


def test_the_front_lists_tools_before_anything_heavy_loads(mama_home: Path) -> None:
    """The real front: ``-X importtime`` and the protocol share one pipe, in the order written.

    The warm-up imports pydantic and the rest right after the lines already sent are answered,
    so everything heavy must show up after the ``tools/list`` answer, and some of it does.
    """
    hello = {"protocolVersion": "2025-11-25", "capabilities": {},
             "clientInfo": {"name": "claude-code", "version": "1"}}  # fmt: skip
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]  # fmt: skip
    command = [sys.executable, "-X", "importtime", "-m", FRONT, "--project", str(mama_home)]
    proc = subprocess.run(command, input="".join(json.dumps(x) + "\n" for x in lines),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120, check=True)  # fmt: skip
    before, after, listed = set(), set(), False
    for line in proc.stdout.splitlines():
        if line.startswith("import time:"):
            (after if listed else before).add(line.rpartition("|")[2].strip().split(".")[0])
        elif line.startswith("{") and json.loads(line).get("id") == 2:
            listed = bool(json.loads(line)["result"]["tools"])
    assert listed, proc.stdout[-2000:]
    assert not before & HEAVY, sorted(before & HEAVY)
    assert "apsw" in after  # the warm-up (the hook tools' lane: the store) ran, after the answer


@contextlib.contextmanager
def _front_importing(home: Path, lines: list[dict[str, object]]) -> Iterator[subprocess.Popen[str]]:
    """The real front under ``-X importtime`` (imports and answers on one pipe, in order),
    ``lines`` written to it; it must exit 0 once the caller closes its stdin (120 s at most)."""
    command = [sys.executable, "-X", "importtime", "-m", FRONT, "--project", str(home)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc:  # fmt: skip
        assert proc.stdin is not None
        watchdog = threading.Timer(120, proc.kill)  # a hung server ends the read loop
        watchdog.start()
        try:
            proc.stdin.write("".join(json.dumps(x) + "\n" for x in lines))
            proc.stdin.flush()
            yield proc
        finally:
            watchdog.cancel()
        assert proc.wait(timeout=120) == 0


def test_the_first_prompt_is_answered_before_pydantic_loads(mama_home: Path) -> None:
    """The hook tools' lane: ``observe_prompt`` is answered from the store and the services
    alone; pydantic, the schema and the handler table load after it (for a listed tool)."""
    hello = {"protocolVersion": "2025-11-25", "capabilities": {},
             "clientInfo": {"name": "claude-code", "version": "1"}}  # fmt: skip
    prompt = {"name": "observe_prompt", "arguments": {"prompt": "which auth?", "session_id": "s"}}
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": prompt}]  # fmt: skip
    phase, imported = 0, [set(), set(), set()]  # before the list, before the prompt, after
    with _front_importing(mama_home, lines) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("import time:"):
                imported[phase].add(line.rpartition("|")[2].strip().split(".")[0])
            elif line.startswith("{") and json.loads(line).get("id") in (2, 3, 4):
                phase = min(2, phase + 1)
                if json.loads(line)["id"] == 3:  # a listed tool's call: the rest must load
                    call = {"name": "search_recent", "arguments": {}}
                    proc.stdin.write(
                        json.dumps(
                            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}
                        )
                        + "\n"
                    )
                    proc.stdin.close()
    assert phase == 2, "observe_prompt was not answered"
    assert not imported[0] & HEAVY, sorted(imported[0] & HEAVY)
    assert not imported[1] & {"pydantic", "mcp", "mcp_types"}, sorted(imported[1] & HEAVY)
    assert "pydantic" in imported[2]  # the rest of the warm-up, for the listed tool


def test_what_only_the_stop_hook_and_hits_need_loads_after_the_first_answer(
    mama_home: Path,
) -> None:
    """The first prompt's call never waits for the Stop hook's modules (the rolling
    checkpoint's writer) or Jinja (a recall with hits loads it itself): the warm-up loads both
    once a hook call is answered, before any Stop can come."""
    hello = {"protocolVersion": "2025-11-25", "capabilities": {},
             "clientInfo": {"name": "claude-code", "version": "1"}}  # fmt: skip
    prompt = {"name": "observe_prompt",
              "arguments": {"prompt": "Which queue library should the worker use?"}}  # fmt: skip
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": prompt}]  # fmt: skip
    writer, template = "mama_plugin.services.story.autosave", "jinja2"
    before, after, answered, took = set(), set(), 0.0, 0.0
    with _front_importing(mama_home, lines) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("import time:"):
                (after if answered else before).add(line.rpartition("|")[2].strip())
                if {writer, template} <= after and not took:
                    took = time.monotonic() - answered
                    proc.stdin.close()  # loaded with no Stop and no listed call: the end
            elif line.startswith("{") and json.loads(line).get("id") == 3:
                answered = time.monotonic()
    assert answered, "observe_prompt was not answered"
    assert "mama_plugin.services.recall.context" in before  # the prompt's own lane
    assert not {writer, template} & before, sorted({writer, template} & before)
    assert {writer, template} <= after
    # Because of the answer, not HOLD_S after the lanes (which would load them too).
    assert took < HOLD_S / 2, took


def test_the_architecture_doc_shows_the_rooms() -> None:
    """docs/architecture.md's Rooms section is the render of this contract and the modules'
    docstrings (``python tests/rooms.py`` rewrites it)."""
    doc = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert rendered_section(doc) == render(), "the Rooms section is stale: python tests/rooms.py"


def test_every_module_says_what_it_is() -> None:
    """The Rooms section names each module by its docstring's first paragraph."""
    _report(
        "modules without a docstring",
        [
            str(p.relative_to(ROOT.parent))
            for m, p in MODULES.items()
            if p.name != "__main__.py" and not ast.get_docstring(ast.parse(p.read_text("utf-8")))
        ],
    )


# Module-level state in services: what a module may hold at its top is constants and
# compiled patterns; caches and per-session records live in the store's warm state
# (services/warm.py) or the server's Session. A memo of a pure function of its argument is
# not state: each one is listed here with why it is pure.
STATEFUL_FACTORIES = frozenset({
    "dict", "list", "set", "OrderedDict", "defaultdict", "deque", "WeakKeyDictionary",
    "WeakValueDictionary", "Lock", "RLock", "local", "Event", "Queue", "ViewCache", "Sessions",
})  # fmt: skip
PURE_MEMOS = {
    "mama_plugin.services.story.words.bag": "the stemmed words of a text: a function of it",
    "mama_plugin.services.render._environment": "a Jinja environment for one set of override files",
}


def _held(node: ast.stmt, value: ast.expr | None) -> bool:
    """A mutable display bound at module level: an empty one (``_CACHE = {}``, a table is never
    empty) or one bound to a name that does not read as a constant (``seen = [...]``)."""
    displays = ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp
    if not isinstance(value, displays):
        return False
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    empty = isinstance(value, ast.Dict | ast.List | ast.Set) and not ast.unparse(value)[1:-1]
    return empty or any(not (n.lstrip("_").isupper() or n.startswith("__")) for n in names)


def _name_of(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def test_services_hold_no_module_level_mutable_state() -> None:
    problems = []
    for module, path in MODULES.items():
        if room_of(module) not in WINGS:
            continue
        body = ast.parse(path.read_text(encoding="utf-8")).body
        # Names as imported: ``from collections import OrderedDict as _OD`` is OrderedDict.
        real = {a.asname: a.name for n in body if isinstance(n, ast.ImportFrom)
                for a in n.names if a.asname}  # fmt: skip
        for node in body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            called = _name_of(value) if isinstance(value, ast.Call) else ""
            if real.get(called, called) in STATEFUL_FACTORIES or _held(node, value):
                problems.append(f"{module}:{node.lineno} {ast.unparse(node)[:80]}")
            if isinstance(node, ast.FunctionDef):
                memo = [d for d in node.decorator_list if _name_of(d) in ("lru_cache", "cache")]
                if memo and f"{module}.{node.name}" not in PURE_MEMOS:
                    problems.append(f"{module}:{node.lineno} @{_name_of(memo[0])} {node.name}")
    _report("module-level state in services (keep it in services/warm.py)", problems)


# `# fmt: skip` keeps a data table's one-entry-a-line layout; it is never a way under the
# line cap. The budget only goes down.
FMT_SKIP_BUDGET = 12


def test_fmt_skip_stays_within_its_budget() -> None:
    count = sum(p.read_text(encoding="utf-8").count("# fmt: skip") for p in MODULES.values())
    assert count <= FMT_SKIP_BUDGET, f"{count} `# fmt: skip` markers (budget {FMT_SKIP_BUDGET})"


# The environment is read where a process starts: its composition root builds the Config (which
# reads MAMA_HOME and the overrides, config.OVERRIDES) and passes it down.
ENVIRONMENT_READERS = {
    "mama_plugin.server.process": "the server's composition root (CLAUDE_PROJECT_DIR)",
    "mama_plugin.server.preload": "hands the whole environment to the builder it spawns",
}


def test_the_environment_is_read_only_at_the_roots() -> None:
    problems = []
    for module, path in MODULES.items():
        if room_of(module) not in (*WINGS, "server") or module in ENVIRONMENT_READERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                problems.append(f"{module}:{node.lineno} os.{node.attr}")
            # $MAMA_HOME is the Config's home: config.mama_home() reads the environment.
            if isinstance(node, ast.Name) and node.id == "mama_home":
                problems.append(f"{module}:{node.lineno} mama_home (use config.home)")
    _report("environment reads below the composition roots (read them into Config)", problems)
