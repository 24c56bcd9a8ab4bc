// MAMA's graph: memories as nodes by type, links by category, hubs emphasised, pending
// suggestions dashed; filters by topic, type, status, time and text. Above NODES_MAX
// memories in view it draws one node per topic (level of detail); a click on a topic
// narrows the filter to it. Filters can be given in the address: #graph&topic=X&type=decision.
"use strict";

(function () {
  const { DATA, byId, el, svg, tip, clip, clear, openDetail, linksOf } = MAMA;
  const NODES_MAX = 300; // memories drawn one by one; above it, one node per topic
  const TOPICS_MAX = 150; // topic nodes drawn in the clustered view
  const W = 1100, H = 700;
  const TYPES = ["decision", "checkpoint", "insight", "context"];
  const CATEGORIES = ["evolution", "implementation", "association", "temporal"];
  const $ = (id) => document.getElementById(id);

  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return (h >>> 0) / 4294967296;
  }

  // A small force layout (Fruchterman-Reingold): repulsion k²/d between all pairs, springs
  // d²/k on links, a pull to the centre; then scaled to fill the frame. Deterministic
  // (seeded by id); its cost bounded by n² × rounds.
  function layout(nodes, edges) {
    const n = nodes.length;
    nodes.forEach((p, i) => {
      const a = 2 * Math.PI * hash(p.key), r = 0.35 * Math.sqrt((i + 1) / n);
      p.x = 0.5 + r * Math.cos(a); p.y = 0.5 + r * Math.sin(a);
    });
    const index = new Map(nodes.map((p, i) => [p.key, i]));
    const springs = edges.map((e) => [index.get(e.a), index.get(e.b)]).filter(([a, b]) => a !== undefined && b !== undefined && a !== b);
    const rounds = Math.max(30, Math.min(250, Math.floor(2e7 / Math.max(1, n * n))));
    const k = 0.8 / Math.sqrt(Math.max(n, 1));
    for (let it = 0; it < rounds; it++) {
      const cool = 0.1 * (1 - it / rounds) + 0.002;
      const dx = new Float64Array(n), dy = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          let ex = nodes[i].x - nodes[j].x, ey = nodes[i].y - nodes[j].y;
          const d2 = ex * ex + ey * ey + 1e-9, f = (k * k) / d2;
          ex *= f; ey *= f;
          dx[i] += ex; dy[i] += ey; dx[j] -= ex; dy[j] -= ey;
        }
      }
      for (const [a, b] of springs) {
        const ex = nodes[a].x - nodes[b].x, ey = nodes[a].y - nodes[b].y;
        const f = Math.sqrt(ex * ex + ey * ey) / k;
        dx[a] -= ex * f; dy[a] -= ey * f; dx[b] += ex * f; dy[b] += ey * f;
      }
      for (let i = 0; i < n; i++) {
        const gx = 0.5 - nodes[i].x, gy = 0.5 - nodes[i].y;
        const g = 2 * Math.sqrt(gx * gx + gy * gy) / k; // gravity grows with distance, as a spring to the centre
        dx[i] += gx * g; dy[i] += gy * g;
        const len = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]) + 1e-12, step = Math.min(len, cool);
        nodes[i].x += (dx[i] / len) * step; nodes[i].y += (dy[i] / len) * step;
      }
    }
    const xs = nodes.map((p) => p.x), ys = nodes.map((p) => p.y);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    for (const p of nodes) {
      p.x = x1 > x0 ? 0.06 + (0.88 * (p.x - x0)) / (x1 - x0) : 0.5;
      p.y = y1 > y0 ? 0.06 + (0.88 * (p.y - y0)) / (y1 - y0) : 0.5;
    }
  }

  function filters() {
    const types = TYPES.filter((t) => $("f-type-" + t).checked);
    const from = $("f-from").value ? Date.parse($("f-from").value) : null;
    const to = $("f-to").value ? Date.parse($("f-to").value) + 86400000 : null;
    return { q: $("f-search").value.trim().toLowerCase(), topic: $("f-topic").value, types, status: $("f-status").value, from, to };
  }

  function matches(m, f) {
    if (f.topic && m.topic !== f.topic) return false;
    if (!f.types.includes(m.type)) return false;
    if (f.status === "current" || f.status === "superseded") { if (m.status !== f.status) return false; }
    else if (f.status && m.outcome_status !== f.status) return false;
    if (f.from !== null && m.created < f.from) return false;
    if (f.to !== null && m.created >= f.to) return false;
    if (f.q && !(m.content.toLowerCase().includes(f.q) || m.topic.toLowerCase().includes(f.q) || m.id.toLowerCase().includes(f.q))) return false;
    return true;
  }

  function draw() {
    const started = performance.now();
    const f = filters();
    const shown = DATA.memories.filter((m) => matches(m, f));
    const canvas = clear($("graph-canvas"));
    canvas.setAttribute("data-shown", shown.length);
    const topics = new Set(shown.map((m) => m.topic)).size;
    if (shown.length > NODES_MAX && topics > 1) drawTopics(canvas, shown);
    else if (shown.length > NODES_MAX) { // one topic, still too many: its newest ones
      drawMemories(canvas, shown.slice(-NODES_MAX));
      $("graph-note").textContent = `${shown.length} memories match: the newest ${NODES_MAX} are drawn. `
        + "Narrow by time or search to see older ones. " + $("graph-note").textContent;
    } else drawMemories(canvas, shown);
    canvas.setAttribute("data-draw-ms", (performance.now() - started).toFixed(0));
  }

  function drawMemories(canvas, shown) {
    const ids = new Set(shown.map((m) => m.id));
    const edges = DATA.links.filter((l) => ids.has(l.from) && ids.has(l.to)).map((l) => ({ a: l.from, b: l.to, link: l }));
    const pending = DATA.suggestions.filter((s) => ids.has(s.from) && ids.has(s.to)).map((s) => ({ a: s.from, b: s.to, suggestion: s }));
    const degree = new Map();
    for (const m of shown) degree.set(m.id, (linksOf.get(m.id) || []).length);
    const hubs = DATA.hubs || {}; // referenced by 5 or more memories: `mama hubs`
    const nodes = shown.map((m) => ({ key: m.id, m, degree: degree.get(m.id) }));
    layout(nodes, edges.concat(pending));
    const at = new Map(nodes.map((p) => [p.key, p]));
    $("graph-note").textContent = shown.length
      ? `${shown.length} memories, ${edges.length} links, ${pending.length} pending suggestions (dashed). Hubs (emphasised): memories 5 or more others reference. Click a node for its story.`
      : "No memory matches these filters.";
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart graph", "data-mode": "memories" });
    const line = (e, cls, title) => {
      const a = at.get(e.a), b = at.get(e.b);
      return svg("line", { x1: a.x * W, y1: a.y * H, x2: b.x * W, y2: b.y * H, class: cls, "data-from": e.a, "data-to": e.b }, tip(title));
    };
    edges.forEach((e) => chart.appendChild(line(e, "edge c-" + e.link.cat, `${e.link.rel} (${e.link.cat}): ${e.link.reason}`)));
    pending.forEach((e) => chart.appendChild(line(e, "edge pending", `proposed ${e.suggestion.rel} #${e.suggestion.id} (pending): ${e.suggestion.reason}`)));
    for (const p of nodes) {
      const hub = p.key in hubs;
      const m = p.m;
      const g = svg("g", { class: "node t-" + m.type + (hub ? " hub" : "") + (m.status === "superseded" ? " superseded" : ""),
        "data-id": m.id, transform: `translate(${(p.x * W).toFixed(1)},${(p.y * H).toFixed(1)})`, on: { click: () => openDetail(m.id) } },
        svg("circle", { r: (5 + 2.2 * Math.sqrt(p.degree)).toFixed(1) }),
        tip(`${m.type} · ${m.topic} · ${m.outcome_status} · ${m.status}\n${m.content}`));
      const west = p.x > 0.6; // labels on the right half read leftwards, inside the frame
      if (hub || shown.length <= 40) g.appendChild(svg("text", { x: west ? -10 : 10, y: 4, class: "label", "text-anchor": west ? "end" : "start" }, clip(m.content, hub ? 48 : 32)));
      chart.appendChild(g);
    }
    canvas.appendChild(chart);
  }

  function drawTopics(canvas, shown) {
    const topics = new Map();
    for (const m of shown) {
      const t = topics.get(m.topic) || { key: m.topic, n: 0, kinds: {} };
      t.n++; t.kinds[m.type] = (t.kinds[m.type] || 0) + 1;
      topics.set(m.topic, t);
    }
    const nodes = [...topics.values()].sort((a, b) => b.n - a.n || (a.key < b.key ? -1 : 1)).slice(0, TOPICS_MAX);
    const kept = new Set(nodes.map((t) => t.key));
    const shownIds = new Set(shown.map((m) => m.id));
    const pairs = new Map();
    for (const l of DATA.links) {
      if (!shownIds.has(l.from) || !shownIds.has(l.to)) continue;
      const a = byId.get(l.from).topic, b = byId.get(l.to).topic;
      if (a === b || !kept.has(a) || !kept.has(b)) continue;
      const key = a < b ? a + "\u0000" + b : b + "\u0000" + a;
      const e = pairs.get(key) || { a, b, n: 0 };
      e.n++; pairs.set(key, e);
    }
    const edges = [...pairs.values()];
    layout(nodes, edges);
    const most = Math.max(...nodes.map((t) => t.n));
    $("graph-note").textContent = `${shown.length} memories in ${topics.size} topics: too many to draw one by one, so each node is a topic`
      + ` (the ${nodes.length} largest shown). Click a topic, or narrow the filters below ${NODES_MAX} memories, to see its memories.`;
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart graph", "data-mode": "topics" });
    const at = new Map(nodes.map((t) => [t.key, t]));
    for (const e of edges) {
      const a = at.get(e.a), b = at.get(e.b);
      chart.appendChild(svg("line", { x1: a.x * W, y1: a.y * H, x2: b.x * W, y2: b.y * H, class: "edge cluster", "stroke-width": Math.min(6, 1 + Math.log2(e.n)) }, tip(`${e.n} links between ${e.a} and ${e.b}`)));
    }
    for (const [rank, t] of nodes.entries()) {
      const main = Object.entries(t.kinds).sort((a, b) => b[1] - a[1])[0][0];
      const r = 6 + 22 * Math.sqrt(t.n / most);
      const g = svg("g", { class: "node topic t-" + main + (t.n >= most / 2 ? " hub" : ""), "data-topic": t.key,
        transform: `translate(${(t.x * W).toFixed(1)},${(t.y * H).toFixed(1)})`,
        on: { click: () => { $("f-topic").value = t.key; draw(); } } },
        svg("circle", { r: r.toFixed(1) }), tip(`${t.key}: ${t.n} memories (${Object.entries(t.kinds).map(([k, v]) => k + " " + v).join(", ")})`));
      const west = t.x > 0.6;
      if (rank < 25 || r > 12) g.appendChild(svg("text", { x: west ? -r - 3 : r + 3, y: 4, class: "label", "text-anchor": west ? "end" : "start" }, `${clip(t.key, 28)} (${t.n})`));
      chart.appendChild(g);
    }
    canvas.appendChild(chart);
  }

  function controls() {
    const topics = [...new Set(DATA.memories.map((m) => m.topic))].sort();
    const select = $("f-topic");
    topics.forEach((t) => select.appendChild(el("option", { value: t }, t || "(no topic)")));
    const types = $("f-types");
    TYPES.forEach((t) => types.appendChild(el("label", { class: "t-" + t }, el("input", { type: "checkbox", id: "f-type-" + t, checked: "checked" }), " " + t)));
    const legend = $("graph-legend");
    TYPES.forEach((t) => legend.appendChild(el("span", { class: "key node-key t-" + t }, "● " + t)));
    CATEGORIES.forEach((c) => legend.appendChild(el("span", { class: "key c-" + c }, "— " + c)));
    legend.appendChild(el("span", { class: "key pending" }, "┄ pending suggestion"));
    for (const id of ["f-topic", "f-status", "f-from", "f-to", ...TYPES.map((t) => "f-type-" + t)]) $(id).addEventListener("change", draw);
    let timer = null;
    $("f-search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(draw, 150); });
    $("f-reset").addEventListener("click", () => {
      for (const id of ["f-search", "f-topic", "f-status", "f-from", "f-to"]) $(id).value = "";
      TYPES.forEach((t) => { $("f-type-" + t).checked = true; });
      draw();
    });
  }

  // "#graph&topic=auth_strategy&type=decision,insight&status=current&q=redis&from=2026-01-01"
  function fromAddress() {
    const parts = decodeURIComponent(location.hash.slice(1)).split("&");
    const given = {};
    for (const p of parts.slice(1)) { const i = p.indexOf("="); if (i > 0) given[p.slice(0, i)] = p.slice(i + 1); }
    if (given.topic !== undefined) $("f-topic").value = given.topic;
    if (given.status !== undefined) $("f-status").value = given.status;
    if (given.q !== undefined) $("f-search").value = given.q;
    if (given.from !== undefined) $("f-from").value = given.from;
    if (given.to !== undefined) $("f-to").value = given.to;
    if (given.type !== undefined) {
      const wanted = given.type.split(",");
      TYPES.forEach((t) => { $("f-type-" + t).checked = wanted.includes(t); });
    }
    if (given.show && byId.has(given.show)) openDetail(given.show);
    if (parts[0]) { const target = $(parts[0]); if (target) target.scrollIntoView(); }
  }

  MAMA.start();
  MAMA.dashboards.outcomes();
  MAMA.dashboards.health();
  controls();
  fromAddress();
  draw();
  window.addEventListener("hashchange", () => { fromAddress(); draw(); });
  document.body.setAttribute("data-rendered-ms", performance.now().toFixed(0));
})();
