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


def bodies(data: dict[str, Any]) -> str:
    keys = ("session_start", "instructions", "prompt_memory", "tool_results", "errors")
    rows = [
        [s["label"], str(s["requests"]), f"{s['tools_first']:,} / {s['tools_max']:,}",
         *(str(s[k]) for k in keys)]
        for s in data["sessions"]
    ]  # fmt: skip
    t = data["totals"]
    lists = f"≤ {data['tool_list_first_max']:,} / ≤ {data['tool_list_max']:,}"
    rows.append(["all", str(t["requests"]), lists, *(str(t[k]) for k in keys)])
    header = ["session", "requests", "MAMA's tool list (first / largest request)",
              "session start", "server instructions", "prompt memory", "tool results",
              "tool errors"]  # fmt: skip
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
