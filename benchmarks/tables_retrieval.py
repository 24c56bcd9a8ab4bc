"""The retrieval, recall, decay and relevance tables of benchmarks/README.md, from their JSON."""

from __future__ import annotations

from typing import Any

from .tables_format import markdown, num

# -- retrieval: LoCoMo-10 through the save and search paths ----------------------------------

LOCOMO_SYSTEMS = (
    ("full", "MAMA (BM25 + {model} + session context)"),
    ("keyword", "keyword retriever only (with session context)"),
    ("vector", "vector retriever only (with session context)"),
    ("bm25", "FTS5 BM25 alone (no fusion, session context or ranking)"),
)
LOCOMO_CATEGORIES = (("1", "multi-hop"), ("2", "temporal"), ("3", "open-domain"),
                     ("4", "single-hop"), ("1-4", "the headline set"),
                     ("5", "adversarial"))  # fmt: skip


def _r(d: dict[str, Any], *keys: str) -> str:
    return " / ".join(num(d[k], 3) for k in keys)


def retrieval(data: dict[str, Any]) -> str:
    original, model = data["figures"]["original"], data["embedding_model"] or "no model"
    rows = []
    for key, label in LOCOMO_SYSTEMS:
        if key in original:
            t, s = original[key]["turn"]["1-4"], original[key]["session"]["1-4"]
            rows.append([label.format(model=model)] + [num(t[m], 3) for m in
                        ("r5", "r10", "r25", "mrr", "ndcg10")] + [num(s["r1"], 3),
                        num(s["r10"], 3)])  # fmt: skip
    header = [f"system ({data['headline_questions']:,} questions, categories 1–4)", "turn R@5",
              "turn R@10", "turn R@25", "MRR", "nDCG@10", "session R@1",
              "session R@10"]  # fmt: skip
    audited = data["figures"]["audited"]["full"]
    return markdown(header, rows) + (
        f"\nAudit-corrected evidence, MAMA: turn R@10 {num(audited['turn']['1-4']['r10'], 3)}, "
        f"session R@10 {num(audited['session']['1-4']['r10'], 3)}.\n"
    )


def retrieval_categories(data: dict[str, Any]) -> str:
    original = data["figures"]["original"]
    full, bm25 = original["full"], original.get("bm25")
    rows = []
    for group, name in LOCOMO_CATEGORIES:
        if group in full["turn"]:
            t, s = full["turn"][group], full["session"][group]
            floor = num(bm25["turn"][group]["r10"], 3) if bm25 else "–"
            rows.append([f"{group} ({name})", f"{t['n']:,}", _r(t, "r5", "r10"),
                         _r(s, "r5", "r10"), floor])  # fmt: skip
    header = ["category", "questions", "MAMA turn R@5 / R@10", "MAMA session R@5 / R@10",
              "FTS5 BM25 alone, turn R@10"]  # fmt: skip
    return markdown(header, rows)


def _changes(options: Any, dated: bool) -> str:
    """What a ranking option changes from the default: its fields that differ, and "now"."""
    from dataclasses import fields

    from mama_plugin.services.search.options import DEFAULT

    changed = [f"`{f.name}` {getattr(options, f.name)}" for f in fields(options)
               if getattr(options, f.name) != getattr(DEFAULT, f.name)]  # fmt: skip
    if not dated:
        changed.append("now is the wall clock")
    return ", ".join(changed) or "the default"


def retrieval_options(data: dict[str, Any]) -> str:
    from .locomo import ABLATION, SYSTEMS

    original = data["figures"]["original"]
    ranked = {"full": ("`search_by_context`", *SYSTEMS["full"][1:])}
    ranked |= {"today": ("`search_by_context`", *SYSTEMS["today"][1:])}
    ranked |= {name: ("`retrieve`", *option) for name, option in ABLATION.items()}
    rows = [
        [f"`{name}`", how, _changes(options, dated), _r(original[name]["turn"]["1-4"], "r5", "r10"),
         _r(original[name]["session"]["1-4"], "r5", "r10")]
        for name, (how, options, dated) in ranked.items() if name in original
    ]  # fmt: skip
    header = ["ranking", "through", "changed from the default", "turn R@5 / R@10",
              "session R@5 / R@10"]  # fmt: skip
    return markdown(header, rows)


# -- recall ------------------------------------------------------------------------------------

RECALL_GROUPS = ("en", "ko", "tech")


def _rs(d: dict[str, Any]) -> str:
    return f"{num(d['recall'], 3)} / {num(d['silence'], 3)}"


def recall_rows(data: dict[str, Any]) -> str:
    rows = []
    for name, row in data["rows"].items():
        for half in ("held-out", "calibration"):
            h = row[half]
            ms = f"{num(row['ms_p50'], 1)} / {num(row['ms_p95'], 1)}" if half == "held-out" else ""
            rows.append([name, half, _rs(h["all"])] + [_rs(h[g]) for g in RECALL_GROUPS] + [ms])
    header = ["row", "half", "recall / silence", "en (LoCoMo)", "ko (KLUE-STS)",
              "tech (Stack Overflow)", "p50 / p95 ms"]  # fmt: skip
    return markdown(header, rows)


def recall_tiers(data: dict[str, Any]) -> str:
    rows = []
    for model, halves in data["tiers"].items():
        for group in ("all", *RECALL_GROUPS):
            d = halves["held-out"][group]
            rows.append([model, group, f"{d['related']} / {d['unrelated']}", num(d["reach"], 3),
                         num(d["chain"], 3), num(d["noise_chain"], 3), num(d["noise_pointer"], 3),
                         f"{num(d['tokens_mean'], 1)} / {d['tokens_p95']}"])  # fmt: skip
    header = ["model", "set", "prompts related / unrelated", "reach", "chain",
              "unrelated given a chain", "unrelated given a pointer",
              "tokens on unrelated, mean / p95"]  # fmt: skip
    return markdown(header, rows)


def recall_sweep(data: dict[str, Any]) -> str:
    rows = []
    for name, sweep in data["sweeps"].items():
        for bar, halves in sweep.items():
            rows.append([name, bar, _rs(halves["calibration"]), _rs(halves["held-out"])])
    return markdown(["row", "relevance_bar", "calibration", "held-out"], rows)


def recall_rankings(data: dict[str, Any]) -> str:
    rows = []
    for model, rankings in data["rankings"].items():
        for name, figures in rankings.items():
            for group in RECALL_GROUPS:
                top = figures["ceiling"]["held-out"][group]
                d = figures["tiers"]["held-out"][group]
                rows.append([
                    model, f"`{name}`", group, f"{num(top['top1'], 3)} / {num(top['top2'], 3)}",
                    num(d["reach"], 3), num(d["chain"], 3),
                    f"{num(d['noise_chain'], 3)} / {num(d['noise_pointer'], 3)}",
                ])  # fmt: skip
    header = ["model", "ranking (held-out)", "set", "memory meant first / in the first two",
              "reach", "chain", "unrelated given a chain / a pointer"]  # fmt: skip
    return markdown(header, rows)


# -- decay -------------------------------------------------------------------------------------


def decay_locomo(data: dict[str, Any]) -> str:
    part = data["locomo"]
    rows = []
    for system, units in part["figures"]["original"].items():
        turn, session = units["turn"]["1-4"], units["session"]["1-4"]
        followed = part["followed_share"].get(system.removeprefix("+links, "))
        rows.append([system, num(turn["r5"], 3), num(turn["r10"], 3), num(session["r5"], 3),
                     num(session["r10"], 3), "" if followed is None else f"{followed / 10:.1f}%",
                     num(part["search_ms_p50"][system], 1)])  # fmt: skip
    header = ["system (categories 1–4, original evidence)", "turn R@5", "turn R@10",
              "session R@5", "session R@10", "links followed (≥ 0.5 at the date)",
              "p50 ms"]  # fmt: skip
    return markdown(header, rows)


def decay_aged(data: dict[str, Any]) -> str:
    aged = data["aged"]
    cats = sorted(aged["links"])
    rows = [
        [name] + [num(shares[c], 3) for c in cats]
        for name, shares in aged["archived_share"].items()
    ]
    header = ["share archived, by rate table"] + [f"{c} ({aged['links'][c]:,} links)" for c in cats]
    return markdown(header, rows) + (
        f"\nThe pass at the documented rates: {aged['pruned']:,} links, dry run "
        f"{aged['dry_run_ms']} ms, archiving {aged['prune_ms']} ms.\n"
    )


LOCOMO_KEYS = ("r5", "r10", "mrr", "ndcg10")


def relevance(data: dict[str, Any]) -> str:
    locomo, recall = data.get("locomo"), data.get("recall")
    rows = []
    for system in locomo or recall or {}:
        if system == "hubs":
            continue
        cells = [f"`{system}`"]
        for part, keys in ((locomo, LOCOMO_KEYS), (recall, ("recall", "silence"))):
            for key in keys:
                halves = part[system] if part else None
                both = (
                    (num(halves[h][key], 3) for h in ("calibration", "held-out")) if halves else ()
                )
                cells.append(" / ".join(both) or "–")
        rows.append(cells)
    header = ["ranking (calibration / held-out)", "LoCoMo turn R@5", "turn R@10", "MRR",
              "nDCG@10", "recall", "silence"]  # fmt: skip
    return markdown(header, rows)
