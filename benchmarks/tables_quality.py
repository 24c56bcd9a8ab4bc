"""The tables of what the benchmarks judge (labelled sets, public data, leaks), from their JSON.

Each function takes the JSON as its benchmark wrote it and returns the Markdown table; the
co-author's benchmarks (``draft``, ``links``, ``stopped``) print Markdown themselves, so their
tables are their own report's, rendered again from the JSON.
"""

from __future__ import annotations

from typing import Any

from .tables_format import Renderer, markdown, num, pr, share

# -- truth, extraction, answers, exposure -------------------------------------------------


def truth(data: dict[str, Any]) -> str:
    def work(key: str) -> str:
        return f"{pr(data[key]['True'])}, {pr(data[key]['False'])}"

    def verdict(key: str) -> str:
        return ", ".join(pr(data[key][c]) for c in ("passed", "failed", "unknown"))

    def done(key: str) -> str:
        d = data[key]
        return f"{pr(d)}, {d['wrongly_dropped']} wrong, {d['stale']} stale"

    n_turns, n_bash, pairs = (
        data["work_turn_now"]["n"],
        data["verdict_now"]["n"],
        data["done_now"]["n"],
    )
    rows = [
        [f"carries work, per turn ({n_turns}): work P / R, looks P / R", work("work_turn_before"),
         work("work_turn_now")],
        [f"carries work, the session so far ({n_turns}): work P / R, looks P / R",
         work("work_session_before"), work("work_session_now")],
        [f"verdict per Bash call ({n_bash}): passed P / R, failed P / R, unknown P / R",
         verdict("verdict_before"), verdict("verdict_now")],
        [f"done ({pairs} pairs, {data['done_now']['steps']} steps): P / R, open steps dropped, "
         "stale", done("done_before"), done("done_now")],
    ]  # fmt: skip
    header = ["judgement", "before (exit status; any tool call is work)", "now (the product)"]
    return markdown(header, rows)


def extraction(data: dict[str, Any]) -> str:
    rows = []
    for key in ("before, all", "now, all", "before, held out", "now, held out"):
        d = data[key]
        rows.append([
            key, num(d["tension_precision"]), num(d["tension_recall"]),
            num(d["next_precision"]), num(d["next_recall"]), str(d["next_with_cue"]),
        ])  # fmt: skip
    header = ["rules, turns", "tension P", "tension R", "next step P", "next step R", "cue left"]
    return markdown(header, rows)


def extraction_quiet(data: dict[str, Any]) -> str:
    rows = []
    for key in ("moved_on, before (all moved)", "moved_on, now"):
        d = data[key]
        figures = ("quiet_precision", "quiet_recall", "moved_precision", "moved_recall")
        rows.append([key.removeprefix("moved_on, "), *(num(d[f]) for f in figures)])
    return markdown(["rules", "quiet P", "quiet R", "moved on P", "moved on R"], rows)


def answers_sessions(data: dict[str, Any]) -> str:
    def cell(before: dict[str, Any], after: dict[str, Any], part: str, whole: str) -> str:
        return f"{share(before[part], before[whole])} → {share(after[part], after[whole])}"

    rows = []
    for s in data["sessions"]:
        b, a = s["before"], s["after"]
        rows.append([
            f"{s['session']} {s['name']}",
            f"{b['tokens_median']} ({b['tokens_max']}) → {a['tokens_median']} ({a['tokens_max']})",
            cell(b, a, "auto_in_stands", "stands"), cell(b, a, "done_in_remains", "remains"),
            cell(b, a, "repeated", "listed"), cell(b, a, "stale", "entries"),
        ])  # fmt: skip
    header = ["session", "tokens median (max)", "auto in stands now", "done in remains",
              "repeated entries", "stale entries"]  # fmt: skip
    return markdown(header, rows)


def answers_done(part: str) -> Renderer:
    def render(data: dict[str, Any]) -> str:
        rows = []
        for rules, d in data["done_detection"][part].items():
            lines = len(d["lines_stale"])
            rows.append([rules, num(d["precision"]), num(d["recall"]),
                         f"{d['wrongly_dropped']} ({len(d['lines_wrongly_dropped'])})",
                         f"{d['stale']} ({lines}/{d['lines_done']})"])  # fmt: skip
        header = ["rules", "precision", "recall", "wrongly dropped (lines)", "stale (lines)"]
        return markdown(header, rows)

    return render


def exposure(data: dict[str, Any]) -> str:
    def col(d: dict[str, Any]) -> list[str]:
        turns = data["turns"]
        return [
            f"{d['turns_available']}/{turns} ({d['first_request_availability']:.1%})",
            f"{d['sessions_whole']}/{data['sessions']}",
            f"max {d['changes_max']}, mean {d['changes_mean']:.2f}",
            str(d["sessions_with_a_change"]),
            f"{d['tool_tokens_mean']:,} ({d['tool_tokens_saved']:.1%} saved)",
        ]

    labels = ["first-request availability", "sessions with every turn served",
              "list changes per session", "sessions whose list changed",
              "tool tokens per first request"]  # fmt: skip
    today, seeded = col(data["today"]), col(data["seeded"])
    rows = [[label, t, s] for label, t, s in zip(labels, today, seeded, strict=True)]
    header = ["", "before seeding (`baselines/exposure_before_seeding.py`)", "seeded (this build)"]
    return markdown(header, rows)


# -- graph, duplicates, share, secrets -------------------------------------------------------


def graph_words(data: dict[str, Any]) -> str:
    shown = (0.2, 0.3, 0.5, 0.75)
    rows = []
    for run in data["labelled"]:
        by = {r["threshold"]: r for r in run["rows"]}
        cells = [
            "{synonyms_found} / {others_claimed} / {opposites_claimed}".format(**by[t])
            if t in by else "–"
            for t in shown
        ]  # fmt: skip
        rows.append([f"{run['model']} ({run['chance']:.3f})", *cells])
    header = ["model (chance cosine)"] + [
        f"score ≥ {t}: synonyms / others / opposites" if i == 0 else f"≥ {t}"
        for i, t in enumerate(shown)
    ]
    return markdown(header, rows)


def graph_size(data: dict[str, Any]) -> str:
    g = data["size"]
    h = g["health"]
    rows = [
        ["store", f"{g['memories']:,} memories, {g['words']} words, {g['links']:,} links "
         f"(built in {g['build_s']} s), {g['model']}"],
        ["`mama graph tidy`", f"{g['tidy_first_ms']:,} ms the first pass (embeds the words), "
         f"{g['tidy_cached_ms']} ms from the cache; {g['clusters']} clusters"],
        ["`mama graph health`", f"{g['health_ms']} ms: isolated {h['isolated']:,}, health "
         f"{h['health']:.3f}, components {h['components']}, largest {h['largest_share']:.3f}"],
        ["`find_synonyms`", f"{g['find_synonyms_ms']} ms"],
        ["a relationship query", f"{g['relationship_query_ms']} ms ({g['query_words']} word, "
         f"{g['query_links']} links)"],
        ["word parameters of `link_memories` (read as `tools/list` does)",
         f"{g['parameter_words_ms']} ms, {len(g['parameter_words'])} words"],
        [f"{g['walks']} walks of depth 5", f"{g['walks_cold_ms']} ms cold, "
         f"{g['walks_cached_ms']} ms from the walk cache"],
    ]  # fmt: skip
    return markdown(["step", "time"], rows)


def duplicates(data: dict[str, Any]) -> str:
    rows = []
    for run in data["runs"]:
        if not run["read"]:
            rows.append([run["model"], run["source"], "not claimed: the model cannot read it",
                         "", "", "", ""])  # fmt: skip
            continue
        for bar in run["bars"]:
            product = " (the product's bar)" if bar["bar"] == run.get("product_bar") else ""
            rows.append([run["model"], run["source"], f"{bar['bar']:.3f}{product}",
                         str(bar["claims"]), num(bar["precision"], 3), num(bar["recall"], 3),
                         num(bar["false_claims"], 3)])  # fmt: skip
    header = ["model", "pairs", "bar", "claims", "precision", "recall", "false claims"]
    return markdown(header, rows)


def share_sizes(data: dict[str, Any]) -> str:
    rows = [
        [f"{s['memories']:,}", num(s["bytes"] / 1e6, 1), num(s["first_share_s"]),
         num(s["first_share_per_s"], 0), num(s["share_again_ms"], 0), num(s["notice_ms"], 1),
         num(s["import_s"]), num(s["import_per_s"], 0), num(s["import_again_ms"], 0),
         str(s["problems"])]
        for s in data["sizes"]
    ]  # fmt: skip
    header = ["memories", "MB", "first share s", "files/s", "share again ms",
              "session start's check ms", "teammate's import s", "memories/s",
              "import again ms", "problems"]  # fmt: skip
    return markdown(header, rows)


def secrets(data: dict[str, Any]) -> str:
    leaks = data["leaks"]
    rows = [[
        f"{leaks['credential_kinds']} credential kinds, {leaks['personal_kinds']} personal-data "
        f"kinds, {leaks['private_variants']} `<private>` variants through {leaks['calls']} calls",
        f"{len(leaks['leaks'])} leaks in {len(leaks['files_searched'])} files and every tool "
        f"answer (the canary found in {len(leaks['canary_found_in'])} files)",
    ]]  # fmt: skip
    for source, fp in data["false_positives"].items():
        rows.append([f"false positives: {source}", f"{fp['masked']} spans masked in "
                     f"{fp['texts']:,} texts ({fp['characters']:,} characters), "
                     f"{fp['us_per_text']} µs a text"])  # fmt: skip
    return markdown(["what", "found"], rows)


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


# -- the co-author's: each benchmark's own report, rendered from its JSON -------------------


def tables_in(text: str) -> list[str]:
    """The Markdown tables of a report, in order (runs of lines that start with ``|``)."""
    found, table = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            found.append("\n".join(table) + "\n")
            table = []
    return found


def report_table(module: str, index: int, function: str = "render") -> Renderer:
    """Table ``index`` of ``benchmarks.<module>.<function>(data)``: the report the run printed."""

    def render(data: dict[str, Any]) -> str:
        from importlib import import_module

        text: str = getattr(import_module(f"benchmarks.{module}"), function)(data)
        return tables_in(text)[index]

    return render


def links_alone(data: dict[str, Any]) -> str:
    """The model's own verdicts before the rules (``links``' report prints them as lines)."""
    rows = []
    for name, f in data["configurations"].items():
        if name != "rules":
            alone, profile = f["model_alone"], name.removeprefix("rules + ")
            earned = {True: "yes", False: "no", None: "–"}[data["earned"].get(profile)]
            rows.append([name, f"{alone['said_link']} of {data['pairs']}",
                         num(alone["precision"]), num(alone["recall"]),
                         str(alone["relationship_right"]), earned])  # fmt: skip
    header = [f"the model alone ({data['links']} links among the pairs)", "said link",
              "precision", "recall", "right relationship", "earned link judging"]  # fmt: skip
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
