"""The tables of what the benchmarks time (start, hooks, search, saves, checks, sync), from JSON."""

from __future__ import annotations

from typing import Any

from .tables_format import markdown, num, pair

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


def latency(data: dict[str, Any]) -> str:
    rows = []
    for d in data["sizes"].values():
        rows.append([
            f"{d['memories']:,}", num(d["build_s"], 0), num(d["db_bytes"] / 1e6, 0),
            num(d["load_avg"], 1), pair(d, "search"), pair(d, "floor"),
            f"{num(d['floor_ratio_p95'])}×", pair(d, "retrieve"), pair(d, "traverse5", 2),
            pair(d, "save", 2),
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
        [f"{d['memories']:,}", pair(d, "knn_exact", 2), pair(d, "knn_quantised", 2),
         pair(d, "knn_sqlite_vec", 2), num(d["knn_recall_at_10"], 3),
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
        + [pair(d, key) for key, _ in INTEGRITY_STEPS]
        for d in data["sizes"]
    ]
    header = ["memories", "database MB"] + [f"{label} p50 / p95 ms" for _, label in INTEGRITY_STEPS]
    return markdown(header, rows)


# -- presence, team ---------------------------------------------------------------------------


def presence(data: dict[str, Any]) -> str:
    n, floor = data["runs"], data.get("floor")  # the floor's arm (--floor), when it ran
    rows = [
        ["MAMA's tools on the first model request", f"{data['tools_on_first_request']}/{n}", ""],
        ["UserPromptSubmit injected the seeded memory (by vectors)",
         f"{data['prompt_hook_injected']}/{n} ({data['prompt_by_vectors']}/{n})", ""],
        ["Stop wrote the rolling checkpoint", f"{data['stop_checkpoint_written']}/{n}", ""],
        ["wall time of a `claude -p` run, p50 / p95 s",
         f"{num(data['with_plugin_p50_s'])} / {num(data['with_plugin_p95_s'])}",
         f"{num(data['without_plugin_p50_s'])} / {num(data['without_plugin_p95_s'])}"],
        ["added over no plugin, p50 s", f"**+{num(data['added_p50_s'])}**", ""],
        ["CPU per run (Claude Code, the hook, the server), p50 s", num(data["cpu_with_p50_s"]),
         num(data["cpu_without_p50_s"])],
        ["`observe_prompt` as Claude Code saw it (of it, waiting for the warm-up), p50 ms",
         f"{num(data['observe_prompt_p50_ms'], 1)} "
         f"({num(data['observe_prompt_warm_up_wait_p50_ms'], 1)})", ""],
        ["failed runs", str(data["failed_runs"]), ""],
    ]  # fmt: skip
    header = [f"{n} runs each, taking turns", "with MAMA", "without"]
    if floor:
        floors = ["", "", "", f"{num(floor['p50_s'])} / {num(floor['p95_s'])}",
                  f"+{num(floor['added_p50_s'])} (MAMA +{num(floor['this_checkout_above_p50_s'])} "
                  "above it)", num(floor["cpu_p50_s"]), "", ""]  # fmt: skip
        rows = [[*row, extra] for row, extra in zip(rows, floors, strict=True)]
        header.append("floor (MAMA's shape, doing nothing)")
    return markdown(header, rows)


def presence_phases(data: dict[str, Any]) -> str:
    from statistics import median

    def p50(runs_detail: list[dict[str, Any]], plugin: bool, phase: str) -> str:
        runs = [r["phases"][phase] for r in runs_detail if r["plugin"] is plugin
                and r.get("phases", {}).get(phase) is not None]  # fmt: skip
        return num(median(runs), 1) if runs else "—"

    detail, floor = data["runs_detail"], (data.get("floor") or {}).get("runs_detail")
    phases = list(dict.fromkeys(p for r in detail for p in r.get("phases", {})))
    rows = [[phase, p50(detail, True, phase), p50(detail, False, phase),
             *([p50(floor, True, phase)] if floor else [])] for phase in phases]  # fmt: skip
    header = ["phase, p50 ms (from Claude Code's debug log)", "with MAMA", "without"]
    return markdown([*header, *(["floor"] if floor else [])], rows)


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


def fuzz(data: dict[str, Any]) -> str:
    rows = [[
        f"{data['calls']:,} random tool calls ({data['errors']:,} answered with a clear error) "
        f"and {data['garbage']:,} garbage lines", str(data["crashed"]), str(data["hangs"]),
        str(data["internal"]), str(len(data["problems"])), str(data["exit_code"]),
    ]]  # fmt: skip
    header = ["one stdio session of `mama serve`", "crashes", "hangs", "failed inside MAMA",
              "integrity problems", "exit code"]  # fmt: skip
    return markdown(header, rows)


def kills(data: dict[str, Any]) -> str:
    rows = [
        [kind, f"{row['kills']:,}", f"{row['acknowledged']:,}", str(row["lost"]),
         str(len(row["problems"]))]
        for kind, row in data.items()
    ]  # fmt: skip
    header = ["SIGKILLed at a random moment", "kills", "saves acknowledged", "lost",
              "integrity problems"]  # fmt: skip
    return markdown(header, rows)


def growth(data: dict[str, Any]) -> str:
    points = (
        ("first", "after the first session"),
        ("start", "once the start reads a full window"),
        ("end", f"after {data['sessions']:,} sessions"),
        ("after_gc", "after `mama gc`"),
    )
    rows = [
        [label, f"{data[key]['memories']:,}", num(data[key]["db_bytes"] / 1e6, 1),
         num(data[key]["free_bytes"] / 1e6, 1), f"{data[key]['backups']} "
         f"({num(data[key]['backups_bytes'] / 1e6, 1)} MB)",
         f"{num(data[key]['start_p50_ms'])} ({num(data[key]['start_min_ms'])}–"
         f"{num(data[key]['start_max_ms'])})"]
        for key, label in points if key in data
    ]  # fmt: skip
    header = ["when", "memories", "database MB", "free MB", "backups",
              "session start ms, p50 (min–max)"]  # fmt: skip
    return markdown(header, rows)


def warm(data: dict[str, Any]) -> str:
    n = data["runs"]
    rows = [
        ["decisions saved", f"{data['saved']}/{n}"],
        ["save → vector, p50 / p95 s", f"{num(data['save_to_vector_p50_s'], 3)} / "
         f"{num(data['save_to_vector_p95_s'], 3)} ({data['vectors_seen']} vectors seen)"],
        ["memories queued when `claude` exited / after the server exited",
         f"{data['queued_at_exit_total']} / {data['queued_after_server_total']}"],
        ["next session's first prompt (a paraphrase) matched with vectors",
         f"{data['first_prompt_matched_with_vectors']}/{n}"],
        ["… the decision recalled by them (of those, told at the session start already)",
         f"{data['first_prompt_by_vectors']}/{n} "
         f"({data['first_prompt_by_vectors_told_at_start']})"],
        ["the session start told the decision", f"{data['told_at_start']}/{n}"],
        ["first prompt by keywords / past the hook's deadline / no call logged",
         f"{data['first_prompt_by_keywords']} / {data['first_prompt_past_deadline']} / "
         f"{data['first_prompt_not_logged']}"],
        ["keywords alone on the same prompts and stores (baseline), recalled",
         f"{data['keyword_baseline_recalled']}/{n}"],
        ["`claude -p` wall time a session, p50 s", num(data["session_wall_p50_s"])],
    ]  # fmt: skip
    return markdown([f"{n} runs of two real `claude -p` sessions ({data['settings']})", ""], rows)


def turns(data: dict[str, Any]) -> str:
    rows = [
        [f"the Stop hook: `{arm}`", f"{d['missing']}/{d['total']}",
         str(d["missing"] - d["no_checkpoint"]), str(d["no_checkpoint"]),
         f"{num(d['turn_median_s'])} / {num(d['turn_p95_s'])}"]
        for arm, d in data.items() if isinstance(d, dict)
    ]  # fmt: skip
    header = [f"{data['turns']} turns an arm, {data['per_session']} a session",
              "failing command missing", "checkpoints without it", "turns without a checkpoint",
              "turn (prompt → result) median / p95 s"]  # fmt: skip
    return markdown(header, rows)


# -- view ------------------------------------------------------------------------------------

GRAPH_MODES = {"topics": "one node per topic", "memories": "one node per memory"}


def view(data: dict[str, Any]) -> str:
    rows = [
        [f"{d['memories']:,}", num(d["bytes"] / 1e6, 1, " MB"),
         num((d["gather_ms"] + d["write_ms"]) / 1000, 1, " s"),
         num(d["rendered_ms"] / 1000, 2, " s"), num(d["open_s"], 1, " s"),
         GRAPH_MODES.get(d["graph_mode"], d["graph_mode"]), num(d["topic_ms"], 0, " ms"),
         num(d["reset_ms"], 0, " ms"), num(d["next_page_ms"], 0, " ms")]
        for d in data["sizes"]
    ]  # fmt: skip
    header = ["memories", "page", "gather + write (Python)", "drawn", "opened", "graph",
              "a topic chosen", "filters reset", "chains' next page"]  # fmt: skip
    return markdown(header, rows)
