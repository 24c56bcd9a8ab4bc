"""How each measurement table of benchmarks/README.md is rendered from its benchmark's JSON.

One function per table, named in :data:`TABLES` by the table's marker name (which is also its
JSON file's stem under ``benchmarks/results/``): it takes the JSON as the benchmark wrote it
and returns the Markdown table. Only figures the JSON holds are shown; a missing one is "–".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["TABLES", "markdown"]

Renderer = Callable[[dict[str, Any]], str]


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table: the header, its rule, one line a row."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def num(value: Any, digits: int = 2, unit: str = "") -> str:
    """A figure to ``digits`` decimals (thousands separated), or "–" when there is none."""
    if value is None:
        return "–"
    return f"{value:,.{digits}f}{unit}"


def pr(figures: dict[str, Any] | None, p: str = "precision", r: str = "recall") -> str:
    """ "P / R" of one class."""
    figures = figures or {}
    return f"{num(figures.get(p))} / {num(figures.get(r))}"


def share(part: int, whole: int) -> str:
    return f"{part}/{whole}" + (f" ({part / whole:.0%})" if whole else "")


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


def _answers_sessions(data: dict[str, Any]) -> str:
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


def _answers_done(part: str) -> Renderer:
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


# -- startup ---------------------------------------------------------------------------

STARTUP_SERVERS = (
    ("front", "what Claude Code runs (`sh bin/mama-server`, the front), no store yet"),
    ("front_store", "the front over a store of 1,000 memories"),
    ("bridge", "the standard-library bridge (a fresh install's first start)"),
    ("sdk", "`mama serve --sdk`"),
    ("bare_stdio", "a bare Python answering stdio"),
    ("bare_python", "`python -c pass` (process start to exit)"),
)


def startup(data: dict[str, Any]) -> str:
    def ms(key: str) -> str:
        p50, p95 = data.get(f"{key}_p50_ms"), data.get(f"{key}_p95_ms")
        return "–" if p50 is None else f"{num(p50, 0)} / {num(p95, 0)}"

    rows = []
    for key, label in STARTUP_SERVERS:
        if key == "bare_python":
            rows.append([label, ms(key), ""])
        elif f"{key}_initialize_p50_ms" in data:
            rows.append([label, ms(f"{key}_initialize"), ms(f"{key}_tools_list")])
    header = [f"server ({data['runs']} cold starts each, taking turns)",
              "`initialize` p50 / p95 ms", "`tools/list` p50 / p95 ms"]  # fmt: skip
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


# -- hooks ---------------------------------------------------------------------------------

SPAWN, CALL = "process spawn", "`tools/call` round trip"
HOOK_ROWS = (
    ("session_start_cached_ms", "SessionStart, cliffhanger cached", SPAWN, "session_start"),
    ("session_start_rendered_ms", "SessionStart, rendered in the hook", SPAWN, "session_start"),
    ("bare_python_ms", "bare `python -c pass` (baseline)", SPAWN, None),
    ("user_prompt_submit_ms", "UserPromptSubmit (`observe_prompt`)", CALL, "user_prompt_submit"),
    ("stop_ms", "Stop (`checkpoint_turn`)", CALL, "stop"),
)


def hooks(data: dict[str, Any]) -> str:
    targets = data.get("targets_p95_ms", {})
    rows = []
    for key, label, how, target in HOOK_ROWS:
        t = data[key]
        limit = f"≤ {targets[target]}" if target in targets else ""
        rows.append([label, how, num(t["p50"], 1), num(t["p95"], 1), limit])
    header = [f"hook ({data['memories']:,} memories, {data['runs']} runs, {data['embedder']})",
              "how timed", "p50 ms", "p95 ms", "target p95"]  # fmt: skip
    return markdown(header, rows)


def hooks_tokens(data: dict[str, Any]) -> str:
    start, prompt, bar = data["tokens_session_start"], data["tokens_per_prompt"], data["relevance"]
    rows = [
        ["session start (startup / resume or compact)", f"{start['startup']} / {start['resume']}"],
        ["per prompt: median, p95, silent", f"{num(prompt['median'], 0)}, {num(prompt['p95'], 0)}, "
         f"{prompt['silent_share']:.0%} of prompts"],
        ["the relevance bar on `recall_prompts.json`: related recalled, unrelated silent",
         f"{bar['recalled']}/{bar['related']}, {bar['silent']}/{bar['unrelated']}"],
    ]  # fmt: skip
    return markdown(["tokens injected (≈ characters / 4)", ""], rows)


# -- latency, writers ------------------------------------------------------------------------


def _pair(d: dict[str, Any], key: str, digits: int = 1) -> str:
    return f"{num(d[f'{key}_p50_ms'], digits)} / {num(d[f'{key}_p95_ms'], digits)}"


def latency(data: dict[str, Any]) -> str:
    rows = []
    for d in data["sizes"].values():
        rows.append([
            f"{d['memories']:,}", num(d["build_s"], 0), num(d["db_bytes"] / 1e6, 0),
            num(d["load_avg"], 1), _pair(d, "search"), _pair(d, "floor"),
            f"{num(d['floor_ratio_p95'])}×", _pair(d, "retrieve"), _pair(d, "traverse5", 2),
            _pair(d, "save", 2),
        ])  # fmt: skip
    header = ["memories", "build s", "database MB", "load", "search p50 / p95 ms",
              "floor p50 / p95 ms", "search ÷ floor, p95", "ranking alone p50 / p95 ms",
              "depth-5 traversal p50 / p95 ms", "save p50 / p95 ms"]  # fmt: skip
    return (
        markdown(header, rows) + f"\nEmbedding: {num(data['embed_texts_per_s'], 1)} short "
        "texts/s in batches of 64.\n"
    )


def latency_vectors(data: dict[str, Any]) -> str:
    rows = [
        [f"{d['memories']:,}", _pair(d, "knn_exact", 2), _pair(d, "knn_quantised", 2),
         _pair(d, "knn_sqlite_vec", 2), num(d["knn_recall_at_10"], 3),
         num(d["knn_recall_at_depth"], 3)]
        for d in data["sizes"].values()
    ]  # fmt: skip
    header = ["memories", "exact p50 / p95 ms", "bits + rerank p50 / p95 ms",
              "sqlite-vec p50 / p95 ms", "R@10", "R@400"]  # fmt: skip
    return markdown(header, rows)


def writers(data: dict[str, Any]) -> str:
    rows = [
        [label] + [num(data[f"{who}_{q}_ms"], 1) for q in ("p50", "p95", "p99", "max")]
        for label, who in (("one writer alone", "alone"),
                           (f"{data['writers']} writers at once", "together"))
    ]  # fmt: skip
    header = [f"save latency ms ({data['saves_per_writer']} saves a writer)", "p50", "p95", "p99",
              "max"]  # fmt: skip
    return (
        markdown(header, rows) + f"\np95 under {data['writers']} writers: "
        f"×{num(data['p95_ratio'], 1)} the p95 alone.\n"
    )


INTEGRITY_STEPS = (
    ("open", "open (no check: the baseline)"),
    ("sanity", "header + schema"),
    ("structure", "b-tree walk"),
    ("quick_check", "`quick_check`"),
    ("integrity_check", "`integrity_check`"),
    ("backup", "backup"),
    ("backup_checked", "backup + check"),
)


def integrity(data: dict[str, Any]) -> str:
    rows = [
        [f"{d['memories']:,}", num(d["db_bytes"] / 1e6, 1)]
        + [_pair(d, key) for key, _ in INTEGRITY_STEPS]
        for d in data["sizes"]
    ]
    header = ["memories", "database MB"] + [f"{label} p50 / p95 ms" for _, label in INTEGRITY_STEPS]
    return markdown(header, rows)


# -- presence, team ---------------------------------------------------------------------------


def presence(data: dict[str, Any]) -> str:
    n = data["runs"]
    rows = [
        ["MAMA's tools on the first model request", f"{data['tools_on_first_request']}/{n}", ""],
        ["UserPromptSubmit injected the seeded memory (by vectors)",
         f"{data['prompt_hook_injected']}/{n} ({data['prompt_by_vectors']}/{n})", ""],
        ["Stop wrote the rolling checkpoint", f"{data['stop_checkpoint_written']}/{n}", ""],
        ["wall time of a `claude -p` run, p50 / p95 s",
         f"{num(data['with_plugin_p50_s'])} / {num(data['with_plugin_p95_s'])}",
         f"{num(data['without_plugin_p50_s'])} / {num(data['without_plugin_p95_s'])}"],
        ["added by MAMA, p50 s", f"**+{num(data['added_p50_s'])}**", ""],
        ["CPU per run (Claude Code, the hook, the server), p50 s", num(data["cpu_with_p50_s"]),
         num(data["cpu_without_p50_s"])],
        ["`observe_prompt` as Claude Code saw it (of it, waiting for the warm-up), p50 ms",
         f"{num(data['observe_prompt_p50_ms'], 1)} "
         f"({num(data['observe_prompt_warm_up_wait_p50_ms'], 1)})", ""],
        ["failed runs", str(data["failed_runs"]), ""],
    ]  # fmt: skip
    return markdown([f"{n} runs each, taking turns", "with MAMA", "without"], rows)


def presence_phases(data: dict[str, Any]) -> str:
    from statistics import median

    def p50(plugin: bool, phase: str) -> str:
        runs = [r["phases"][phase] for r in data["runs_detail"] if r["plugin"] is plugin
                and r.get("phases", {}).get(phase) is not None]  # fmt: skip
        return num(median(runs), 1) if runs else "—"

    phases = list(dict.fromkeys(p for r in data["runs_detail"] for p in r.get("phases", {})))
    rows = [[phase, p50(True, phase), p50(False, phase)] for phase in phases]
    return markdown(["phase, p50 ms (from Claude Code's debug log)", "with MAMA", "without"], rows)


def team(data: dict[str, Any]) -> str:
    lag = data["lag_ms"]
    rows = [
        [f"push {data['memories']:,} memories", f"{num(data['push_seconds'])} s",
         f"{num(data['push_per_s'], 0)} memories/s"],
        [f"pull {data['pulled']:,} memories into an empty store", f"{num(data['pull_seconds'])} s",
         f"{num(data['pull_per_s'], 0)} memories/s"],
        [f"a save on one developer → in the other's store ({lag['runs']} saves, the outbox "
         f"looked at every {data['poll_s']} s)", f"p50 {num(lag['p50'], 0)} ms, p95 "
         f"{num(lag['p95'], 0)} ms", f"max {num(lag['max'], 0)} ms"],
    ]  # fmt: skip
    return markdown(["team store on PostgreSQL + pgvector", "time", "rate"], rows)


# table name (its marker) -> the JSON it is rendered from (``benchmarks/results/STEM.json``), how.
TABLES: dict[str, tuple[str, Renderer]] = {
    "truth": ("truth", truth),
    "extraction": ("extraction", extraction),
    "extraction-quiet": ("extraction", extraction_quiet),
    "answers": ("answers-keyword-only", _answers_sessions),
    "answers-done-story": ("answers-keyword-only", _answers_done("story")),
    "answers-done-split": ("answers-keyword-only", _answers_done("split")),
    "exposure": ("exposure", exposure),
    "startup": ("startup", startup),
    "graph-words": ("graph", graph_words),
    "graph-size": ("graph", graph_size),
    "duplicates": ("duplicates", duplicates),
    "share": ("share", share_sizes),
    "secrets": ("secrets", secrets),
    "hooks": ("hooks", hooks),
    "hooks-tokens": ("hooks", hooks_tokens),
    "latency": ("latency", latency),
    "latency-vectors": ("latency", latency_vectors),
    "writers": ("writers", writers),
    "integrity": ("integrity", integrity),
    "presence": ("presence", presence),
    "presence-phases": ("presence", presence_phases),
    "team": ("team", team),
}
