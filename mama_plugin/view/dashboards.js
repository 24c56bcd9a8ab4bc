// MAMA's page: the outcomes dashboard and the health figures (mama stats, verify --list, gc).
"use strict";

MAMA.dashboards = (function () {
  const { DATA, byId, el, svg, tip, day, clip, badge, paged, counts, memoryLink, openDetail, OUTCOMES, pct } = MAMA;

  // -- outcomes ----------------------------------------------------------------------------

  function outcomes() {
    const months = new Map();
    const bump = (ms, key) => {
      const month = new Date(ms).toISOString().slice(0, 7);
      const row = months.get(month) || { month, SUCCESS: 0, PARTIAL: 0, FAILED: 0, SUPERSEDED: 0, PENDING: 0 };
      row[key]++;
      months.set(month, row);
    };
    const totals = { SUCCESS: 0, PARTIAL: 0, FAILED: 0, SUPERSEDED: 0, PENDING: 0 };
    const learned = [];
    for (const m of DATA.memories) {
      if (m.type !== "decision") continue;
      const o = m.outcome || {};
      const status = m.outcome_status;
      if (status === "PENDING" && m.status !== "current") continue;
      bump(status === "PENDING" ? m.created : o.recorded_at || m.updated, status);
      totals[status]++;
      for (const lesson of o.learned || []) learned.push({ lesson, m, at: o.recorded_at || m.updated });
    }
    const rows = [...months.values()].sort((a, b) => (a.month < b.month ? -1 : 1)).slice(-24);
    const box = document.getElementById("outcome-chart");
    box.appendChild(el("p", { class: "legend", id: "outcome-totals" }, OUTCOMES.map((k) =>
      el("span", { class: "key", "data-status": k }, badge(k === "PENDING" ? "PENDING" : k), ` ${totals[k]}` + (k === "PENDING" ? " awaiting" : "") + "  "))));
    if (rows.length) {
      const W = 1100, H = 220, left = 40, bottom = 30, barW = Math.min(60, (W - left) / rows.length - 6);
      const most = Math.max(1, ...rows.map((r) => OUTCOMES.reduce((s, k) => s + r[k], 0)));
      const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart" });
      rows.forEach((r, i) => {
        let y = H - bottom;
        const x0 = left + i * ((W - left) / rows.length);
        for (const k of OUTCOMES) {
          if (!r[k]) continue;
          const h = ((H - bottom - 10) * r[k]) / most;
          y -= h;
          chart.appendChild(svg("rect", { x: x0, y, width: barW, height: h, class: "bar o-" + k }, tip(`${r.month}: ${r[k]} ${k === "PENDING" ? "awaiting an outcome" : k}`)));
        }
        chart.appendChild(svg("text", { x: x0 + barW / 2, y: H - 10, class: "tick", "text-anchor": "middle" }, r.month));
      });
      box.appendChild(chart);
    }
    learned.sort((a, b) => b.at - a.at);
    paged(document.getElementById("learned-list"), document.getElementById("learned-pager"), learned, (item) =>
      el("li", { "data-id": item.m.id }, el("b", {}, item.lesson), el("span", { class: "muted" }, " — from "),
        el("a", { href: "#", on: { click: (e) => { e.preventDefault(); openDetail(item.m.id); } } }, clip(item.m.content, 100)),
        " ", badge(item.m.outcome_status)));
    if (!learned.length) document.getElementById("learned-list").appendChild(el("li", { class: "note" }, "No lessons recorded with an outcome yet."));
  }

  // -- health ------------------------------------------------------------------------------

  function health() {
    const s = DATA.stats;
    const table = document.getElementById("stats-table");
    [
      ["decisions", s.decisions],
      ["non-trivial reasoning (> 50 chars)", pct(s.non_trivial_reasoning)],
      ["narrative completeness (0-5)", s.completeness_mean === null ? "—" : s.completeness_mean.toFixed(1) + "  (by score: " + counts(s.completeness) + ")"],
      ["with an outcome", pct(s.with_outcome) + "  (" + counts(s.outcomes) + ")"],
      ["links", s.links],
      ["link reasons", counts(s.link_reasons)],
      ["links written by", counts(s.links_by)],
      ["link suggestions", counts(s.suggestions)],
      ["acceptance rate", pct(s.acceptance_rate)],
      ["suggestion reasons", counts(s.suggestion_reasons)],
    ].forEach(([k, v]) => table.appendChild(el("tr", {}, el("th", {}, k), el("td", {}, v))));
    graphHealth(s.graph);
    const flagged = Object.keys(DATA.flagged).map((id) => byId.get(id)).filter(Boolean);
    paged(document.getElementById("flagged-list"), document.getElementById("flagged-pager"), flagged, (m) =>
      el("li", { class: "flagged", "data-id": m.id }, el("a", { href: "#", on: { click: (e) => { e.preventDefault(); openDetail(m.id); } } }, clip(m.content, 90)),
        el("ul", {}, DATA.flagged[m.id].map((c) => el("li", {}, c))),
        el("code", {}, `mama verify ${m.id}`), " or ", el("code", {}, `mama forget ${m.id}`)), 8);
    if (!flagged.length) document.getElementById("flagged-list").appendChild(el("li", { class: "note" }, "Nothing flagged: the files the memories cite are as recorded."));
    const aged = Object.keys(DATA.staleness || {}).filter((id) => /^(stale|expired) /.test(DATA.staleness[id]))
      .map((id) => byId.get(id)).filter(Boolean);
    paged(document.getElementById("stale-list"), document.getElementById("stale-pager"), aged, (m) =>
      el("li", { class: "stale", "data-id": m.id }, el("a", { href: "#", on: { click: (e) => { e.preventDefault(); openDetail(m.id); } } }, clip(m.content, 90)),
        el("div", {}, DATA.staleness[m.id])), 8);
    if (!aged.length) document.getElementById("stale-list").appendChild(el("li", { class: "note" }, "Nothing stale: every current memory is within its kind's decay."));
    const g = DATA.gc, box = document.getElementById("gc-plan");
    const folded = g.folds.reduce((n, f) => n + f.folded.length, 0);
    box.appendChild(el("p", {}, `${folded} rolling checkpoints of ${g.folds.length} sessions would be folded into each session's newest`));
    box.appendChild(el("ul", {}, g.folds.slice(0, 20).map((f) => el("li", {}, `session ${f.session_id}: keep `, memoryLink(f.kept), ` fold ${f.folded.length}`))));
    box.appendChild(el("p", {}, `${g.backups.length} backups beyond the caps would be deleted`));
    box.appendChild(el("ul", {}, g.backups.map((b) => el("li", {}, `${b.path.split("/").pop()} taken ${b.taken} (${(b.bytes / 1e6).toFixed(1)} MB)`))));
    box.appendChild(el("p", {}, `rewrite ${g.vacuum ? "would" : "would not"} run; frees about ${(g.frees_bytes / 1e6).toFixed(1)} MB`));
  }

  // The figures `mama graph health` prints, and its recommendations with their commands.
  function graphHealth(g) {
    if (!g) return;
    const table = document.getElementById("graph-table");
    [
      ["isolated (≤ 1 link)", `${g.isolated} of ${g.memories}`],
      ["health (1 − isolated / memories)", pct(g.health)],
      ["connected components", String(g.components)],
      ["in the largest", pct(g.largest_share)],
      ["relationship words", `${g.words} (diversity ${pct(g.diversity)})`],
      ["canonical coverage", pct(g.canonical_coverage)],
      ["orphaned words", g.orphaned.length ? g.orphaned.join(", ") : "none"],
    ].forEach(([k, v]) => table.appendChild(el("tr", {}, el("th", {}, k), el("td", {}, v))));
    const advice = document.getElementById("graph-advice");
    g.recommendations.forEach((r) => advice.appendChild(el("li", { class: "advice" }, r.text, r.command ? " — " : "", r.command ? el("code", {}, r.command) : "")));
    if (!g.recommendations.length) advice.appendChild(el("li", { class: "note" }, "Nothing to do: the graph holds together."));
  }

  return { outcomes, health };
})();
