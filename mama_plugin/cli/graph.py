"""``mama graph``: the graph's health, its relationship words tidied, merged, compared by meaning.

Its weak links pruned into the archive, listed and restored (``prune``, ``archived``,
``restore``; ``tidy`` prunes too, and ``--dry-run`` only lists): :func:`.link.link_upkeep`.

Also the two link queries ``mama links`` hands over: ``--relationship WORD`` (the word and its
synonyms) and ``--after ID`` (what followed a memory). Nothing heavy is imported until a
command runs.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import MamaError
from .link import link_upkeep
from .options import argument, command, flag, json_option, project_option
from .shared import open_store, optional_embedder, print_json, project_of, told

if TYPE_CHECKING:
    from ..services.graph.queries import RelationshipMatches, TaggedLinks


@command("graph", "graph health, relationship words by meaning: health, tidy, merge, synonyms")
@argument(
    "action",
    nargs="?",
    default="health",
    choices=("health", "tidy", "merge", "synonyms", "prune", "archived", "restore"),
    help="health (default); tidy (cluster the words, prune weak links); merge WORD INTO; "
    "synonyms WORD; prune (archive weak links only); archived (list them); restore ID",
)
@argument("words", nargs="*", help="merge: WORD INTO; synonyms: WORD; restore: ID")
@flag("--dry-run", "tidy, prune: list the links that would be archived and change nothing")
@argument(
    "--threshold",
    type=float,
    help="synonyms, tidy: cosine similarity at least this (default 0.75)",
)
@project_option()
@json_option()
def cmd_graph(args: argparse.Namespace) -> int:
    """Show the graph's health or tidy, merge and compare its relationship words."""
    with open_store(args) as store:
        if args.action == "health":
            return _health(store, args)
        if args.action == "merge":
            return _merge(store, args)
        if args.dry_run and args.action not in ("tidy", "prune"):
            raise MamaError("--dry-run goes with tidy or prune (it lists the links they archive)")
        if args.action in ("prune", "archived", "restore") or args.dry_run:
            return link_upkeep(store, args)
        embedder = optional_embedder(args, without="relationship words need it")
        if embedder is None:
            raise MamaError(
                f"graph {args.action} compares words by meaning and needs the embedding model "
                "(`mama models` says why it is missing)"
            )
        if args.action == "synonyms":
            return _synonyms(store, embedder, args)
        return _tidy(store, embedder, args)


def _threshold(args: argparse.Namespace) -> float:
    from ..services.graph.synonyms import SYNONYM_THRESHOLD

    value = SYNONYM_THRESHOLD if args.threshold is None else args.threshold
    if not 0.0 <= value <= 1.0:
        raise MamaError(f"--threshold must be between 0 and 1 (got {value})")
    return float(value)


def _health(store: Any, args: argparse.Namespace) -> int:
    from ..services.graph.health import graph_health

    health = graph_health(store, project_of(args))
    if args.json:
        print_json(health.as_dict())
        return 0
    print(f"Graph health for {health.project}")
    for line in health.lines():
        print(f"  {line}")
    if health.recommendations:
        print("Recommendations:")
    for r in health.recommendations:
        print(f"  - {r.text}" + (f"\n      {r.command}" if r.command else ""))
    return 0


def _merge(store: Any, args: argparse.Namespace) -> int:
    from ..services.graph.synonyms import checked_word
    from ..storage.relationship_words import RelationshipWords

    if len(args.words) != 2:
        raise MamaError("graph merge needs two words: WORD INTO (e.g. motivated_by inspired_by)")
    word, into = (checked_word(w) for w in args.words)
    if word == into:
        raise MamaError(f"cannot merge {word!r} into itself")
    known = set(RelationshipWords(store).words())
    for w in (word, into):
        if w not in known:
            raise MamaError(f"no link uses {w!r}: `mama graph health` lists the words in use")
    count = RelationshipWords(store).merge(word, into)
    if args.json:
        print_json({"merged": word, "into": into, "words": count})
    else:
        print(
            f"`{word}` now stands for `{into}` ({count} words do); its links keep their word "
            f"and `mama links --relationship {into}` finds them."
        )
    return 0


def _synonyms(store: Any, embedder: Any, args: argparse.Namespace) -> int:
    from ..services.graph.synonyms import find_synonyms

    if len(args.words) != 1:
        raise MamaError("graph synonyms needs one word, e.g. `mama graph synonyms inspired_by`")
    found = find_synonyms(store, embedder, args.words[0], _threshold(args))
    if args.json:
        print_json([s.as_dict() for s in found])
        return 0
    if not found:
        print(f"No relationship word within {_threshold(args)} of {args.words[0]!r}.")
    for s in found:
        print(f"{s.score:.3f}  {s.word}")
    return 0


def _tidy(store: Any, embedder: Any, args: argparse.Namespace) -> int:
    import time

    from ..services.graph.tidy import tidy
    from ..services.graph.upkeep import prune

    began = time.perf_counter()
    result = tidy(store, embedder, threshold=_threshold(args))
    result.seconds = time.perf_counter() - began
    if args.json:
        pruned = prune(store)
        print_json({**result.as_dict(), "links": pruned.as_dict()})
        return 0
    print(
        f"Tidied {result.words} relationship words in {result.seconds * 1000:.0f} ms: "
        f"{len(result.clusters)} cluster(s)."
    )
    for head, group in sorted(result.clusters.items()):
        print(f"  {head}: {', '.join(w for w in group if w != head)}")
    if result.promoted:
        print(f"Promoted to canonical: {', '.join(result.promoted)}")
    for word, n, days in result.archive:
        print(f"Proposed for archiving: {word} ({n} link{'s' * (n != 1)}, {days:.0f} days)")
    for word, category in sorted(result.recategorised.items()):
        print(f"Category by meaning: {word} is {category} now")
    return link_upkeep(store, args)


def list_links(store: Any, args: argparse.Namespace) -> int:
    """``mama links --relationship WORD`` / ``--after ID`` / ``--tag TAG``: the links asked
    for."""
    if args.after:
        return _after(store, args)
    if args.tag:
        return _tagged(store, args)
    from ..services.graph.queries import links_by_relationship

    embedder = optional_embedder(args, without="matching the word and its merged forms only")
    found = links_by_relationship(
        store, embedder, args.relationship, project=project_of(args), limit=args.limit
    )
    words = ", ".join(f"{w.word} ({w.score:.2f})" for w in found.words)
    return _links_told(args, found, f"Links by {found.asked} — matching {words}:")


def _tagged(store: Any, args: argparse.Namespace) -> int:
    from ..services.graph.queries import links_by_tag

    found = links_by_tag(store, args.tag, project=project_of(args), limit=args.limit)
    return _links_told(args, found, f"Links tagged {found.tag}:")


def _links_told(
    args: argparse.Namespace, found: RelationshipMatches | TaggedLinks, heading: str
) -> int:
    """The links found under ``heading``, each with its tags, or as JSON."""
    from ..services.graph.upkeep import shown

    lines = [f"  {shown(ln).line(found.tags.get(ln.id, ()))}" for ln in found.links]
    text = "\n".join([heading, *(lines or ["  none in this project."])])
    return told(args, found.as_dict(), text)


def _after(store: Any, args: argparse.Namespace) -> int:
    from ..services.graph.queries import what_happened_after

    after = what_happened_after(store, args.after, window_days=args.window)
    if args.json:
        print_json(after.as_dict())
        return 0
    print(
        f"After {after.start.id} ({after.start.content[:80]}), within {after.window_days:g} days:"
    )
    if not after.steps:
        print("  nothing linked to it by implementation or time.")
    for step, m in after.steps:
        print(
            f"  {'  ' * (step.depth - 1)}{m.id} ({m.type}) --{step.link.relationship}-- "
            f"(#{step.link.id}, strength {step.confidence:.2f}) {m.content[:80]}"
        )
    return 0
