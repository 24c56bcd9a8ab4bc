// MAMA's page: evolution chains, timeline, outcomes, health and the detail panel.
// Plain DOM and SVG, no library, nothing fetched. Memory text is data: it is only ever set
// with textContent / createTextNode / setAttribute, never parsed as markup.
"use strict";

const MAMA = (function () {
  const DATA = JSON.parse(document.getElementById("mama-data").textContent);
  const SVGNS = "http://www.w3.org/2000/svg";
  const DAY = 86400000;
  const PER_PAGE = 15;
  const byId = new Map(DATA.memories.map((m) => [m.id, m]));
  const OUTCOMES = ["SUCCESS", "PARTIAL", "FAILED", "SUPERSEDED", "PENDING"];

  // -- building blocks ---------------------------------------------------------------------

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
      else node.setAttribute(key, String(value));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === undefined || kid === null || kid === false) continue;
      node.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  function svg(tag, attrs, ...kids) {
    const node = document.createElementNS(SVGNS, tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null) continue;
      if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
      else node.setAttribute(key, String(value));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === undefined || kid === null) continue;
      node.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  function tip(text) {
    return svg("title", {}, text);
  }

  function day(ms) {
    return ms ? new Date(ms).toISOString().slice(0, 10) : "";
  }

  function clip(text, n) {
    const s = String(text || "");
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }

  function badge(status) {
    return el("span", { class: "badge b-" + status, title: "outcome" }, status);
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  // A list shown a page at a time: 10k items never become 10k elements.
  function paged(list, pagerNode, items, draw, perPage) {
    const per = perPage || PER_PAGE;
    let page = 0;
    function show() {
      const pages = Math.max(1, Math.ceil(items.length / per));
      page = Math.min(page, pages - 1);
      clear(list);
      items.slice(page * per, page * per + per).forEach((item) => list.appendChild(draw(item)));
      clear(pagerNode);
      if (items.length > per) {
        pagerNode.appendChild(el("button", { type: "button", disabled: page === 0, on: { click: () => { page--; show(); } } }, "‹ newer"));
        pagerNode.appendChild(el("span", { class: "page-of" }, ` page ${page + 1} of ${pages} (${items.length}) `));
        pagerNode.appendChild(el("button", { type: "button", disabled: page >= pages - 1, on: { click: () => { page++; show(); } } }, "older ›"));
      }
    }
    show();
    return { set(newItems) { items = newItems; page = 0; show(); } };
  }

  // Any narrative value (string, list, object) as nested text.
  function value(v) {
    if (v === null || v === undefined || v === "") return null;
    if (Array.isArray(v)) {
      if (!v.length) return null;
      return el("ul", {}, v.map((x) => el("li", {}, value(x))));
    }
    if (typeof v === "object") {
      const keys = Object.keys(v).filter((k) => v[k] !== "" && v[k] !== null && !(Array.isArray(v[k]) && !v[k].length));
      if (!keys.length) return null;
      return el("dl", {}, keys.map((k) => [el("dt", {}, k.replace(/_/g, " ")), el("dd", {}, value(v[k]))]));
    }
    return document.createTextNode(String(v));
  }

  function overdue(m) {
    return m.type === "decision" && m.status === "current" && m.outcome_status === "PENDING"
      && m.created < DATA.generated - DATA.followup_days * DAY;
  }

  // -- detail panel ------------------------------------------------------------------------

  const linksOf = new Map();
  for (const ln of DATA.links) {
    for (const end of [ln.from, ln.to]) {
      if (!linksOf.has(end)) linksOf.set(end, []);
      linksOf.get(end).push(ln);
    }
  }

  function memoryLink(id) {
    const m = byId.get(id);
    return el("a", { href: "#", "data-id": id, on: { click: (e) => { e.preventDefault(); openDetail(id); } } },
      m ? clip(m.content, 90) : id);
  }

  function layer(title, v) {
    const body = value(v);
    return body ? el("section", { class: "layer", "data-layer": title }, el("h4", {}, title), body) : null;
  }

  function openDetail(id) {
    const m = byId.get(id);
    if (!m) return;
    const body = clear(document.getElementById("detail-body"));
    body.setAttribute("data-id", id);
    body.appendChild(el("p", { class: "meta" },
      el("span", { class: "type t-" + m.type }, m.type), " ", m.outcome_status ? badge(m.outcome_status) : null,
      " ", el("span", { class: "status s-" + m.status }, m.status), " ", el("code", {}, m.id)));
    body.appendChild(el("h3", { class: "content" }, m.content));
    body.appendChild(el("p", { class: "meta" }, `topic ${m.topic || "—"} · decided ${day(m.created)} · updated ${day(m.updated)}`
      + (m.session ? ` · session ${m.session}` : "")));
    const o = m.outcome || {};
    const outcome = m.outcome_status && m.outcome_status !== "PENDING"
      ? Object.assign({ status: m.outcome_status, recorded: day(o.recorded_at) }, o, { recorded_at: undefined })
      : (m.type === "decision" ? { status: "PENDING — no outcome recorded yet" + (overdue(m) ? ` (past ${DATA.followup_days} days)` : "") } : null);
    if (outcome) delete outcome.recorded_at;
    const trust = { confidence: m.confidence.toFixed(2) };
    if (DATA.flagged[id]) trust["changed since decided"] = DATA.flagged[id];
    [
      ["Specifics", m.specifics], ["Evidence", m.evidence], ["Reasoning", m.reasoning],
      ["Tension", m.tension], ["Continuity", m.continuity], ["Outcome", outcome],
      ["Trust", trust], ["Tags", m.tags],
    ].forEach(([title, v]) => { const part = layer(title, v); if (part) body.appendChild(part); });
    const links = linksOf.get(id) || [];
    if (links.length) {
      body.appendChild(el("section", { class: "layer", "data-layer": "Links" }, el("h4", {}, "Links"),
        el("ul", {}, links.map((ln) => el("li", { class: "c-" + ln.cat },
          ln.from === id ? ["→ ", el("b", {}, ln.rel), " ", memoryLink(ln.to)] : ["← ", memoryLink(ln.from), " ", el("b", {}, ln.rel)],
          el("div", { class: "reason" }, "because: " + ln.reason))))));
    }
    const panel = document.getElementById("detail");
    panel.hidden = false;
    panel.scrollTop = 0;
  }

  // -- evolution chains --------------------------------------------------------------------

  function chainCard(id) {
    const m = byId.get(id);
    const o = m.outcome || {};
    const failed = (m.outcome_status === "FAILED" || m.outcome_status === "PARTIAL") && o.details;
    return el("li", { class: "step" + (m.status === "current" ? " current" : ""), "data-id": id, tabindex: 0,
      on: { click: () => openDetail(id), keydown: (e) => { if (e.key === "Enter") openDetail(id); } } },
      el("div", { class: "step-head" }, badge(m.outcome_status), " ",
        el("span", { class: "status s-" + m.status }, m.status === "current" ? "CURRENT" : m.status), " ",
        el("span", { class: "date" }, day(m.created))),
      el("p", { class: "content" }, m.content),
      failed ? el("p", { class: "why" }, (m.outcome_status === "FAILED" ? "failed: " : "fell short: ") + o.details) : null,
      (o.learned || []).length ? el("p", { class: "learned" }, "learned: " + o.learned.join("; ")) : null,
      DATA.flagged[id] ? el("p", { class: "flag" }, "⚠ " + DATA.flagged[id][0]) : null);
  }

  function chainArrow(step) {
    if (!step) return el("li", { class: "arrow none" }, el("span", { class: "rel" }, "→"), el("span", { class: "reason" }, "no link recorded"));
    return el("li", { class: "arrow", title: `${step.newer} ${step.rel} ${step.older}` },
      el("span", { class: "rel" }, "→ " + step.rel.replace(/_/g, " ")), el("span", { class: "reason" }, step.reason));
  }

  function drawChain(chain) {
    const steps = [];
    chain.ids.forEach((id, i) => {
      if (i > 0) steps.push(chainArrow(chain.steps[i - 1]));
      steps.push(chainCard(id));
    });
    return el("article", { class: "chain", "data-topic": chain.topic },
      el("h3", {}, chain.topic, el("small", {}, ` ${chain.ids.length} decision${chain.ids.length > 1 ? "s" : ""}`)),
      el("ol", { class: "steps" }, steps));
  }

  function chains() {
    const list = document.getElementById("chain-list");
    const view = paged(list, document.getElementById("chain-pager"), DATA.chains, drawChain, 10);
    const search = document.getElementById("chain-search");
    search.addEventListener("input", () => {
      const q = search.value.trim().toLowerCase();
      view.set(q ? DATA.chains.filter((c) => c.topic.toLowerCase().includes(q)
        || c.ids.some((id) => byId.get(id).content.toLowerCase().includes(q))) : DATA.chains);
    });
    if (!DATA.chains.length) list.appendChild(el("p", { class: "note" }, "No decisions in this project yet."));
  }

  // -- timeline ----------------------------------------------------------------------------

  const LANES = ["sessions", "checkpoints", "decisions", "outcomes"];
  const MARKERS_MAX = 1500; // above this the lanes are drawn as counts per time bin

  function timelineEvents() {
    const events = [];
    const sessions = new Map();
    for (const m of DATA.memories) {
      if (m.session) {
        const s = sessions.get(m.session) || { id: m.session, start: m.created, end: m.created, n: 0 };
        s.start = Math.min(s.start, m.created); s.end = Math.max(s.end, m.created); s.n++;
        sessions.set(m.session, s);
      }
      if (m.type === "decision") {
        events.push({ lane: "decisions", at: m.created, m, late: overdue(m) });
        const at = (m.outcome || {}).recorded_at;
        if (m.outcome_status !== "PENDING" && at) events.push({ lane: "outcomes", at, m, status: m.outcome_status });
      } else if (m.type === "checkpoint") {
        events.push({ lane: "checkpoints", at: m.created, m });
      }
    }
    for (const s of sessions.values()) events.push({ lane: "sessions", at: s.start, end: s.end, session: s });
    return events;
  }

  function timeline() {
    const box = document.getElementById("timeline-chart");
    const events = timelineEvents();
    if (!events.length) { box.appendChild(el("p", { class: "note" }, "Nothing to place on the timeline yet.")); }
    else {
      const W = 1100, left = 90, right = 20, laneH = 44, top = 10;
      let t0 = Math.min(...events.map((e) => e.at)), t1 = Math.max(...events.map((e) => e.end || e.at), DATA.generated);
      if (t1 - t0 < DAY) { t0 -= DAY / 2; t1 += DAY / 2; }
      const x = (t) => left + ((t - t0) / (t1 - t0)) * (W - left - right);
      const H = top + laneH * LANES.length + 30;
      const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", "data-events": events.length,
        "data-lanes": events.length > MARKERS_MAX ? "bins" : "markers" });
      LANES.forEach((lane, i) => {
        const y = top + i * laneH;
        chart.appendChild(svg("rect", { x: left, y, width: W - left - right, height: laneH - 6, class: "lane" }));
        chart.appendChild(svg("text", { x: left - 8, y: y + laneH / 2, class: "lane-label", "text-anchor": "end" }, lane));
      });
      for (let k = 0; k <= 6; k++) {
        const t = t0 + ((t1 - t0) * k) / 6;
        chart.appendChild(svg("text", { x: x(t), y: H - 8, class: "tick", "text-anchor": "middle" }, day(t)));
      }
      const laneY = (lane) => top + LANES.indexOf(lane) * laneH + (laneH - 6) / 2;
      if (events.length > MARKERS_MAX) drawBins(chart, events, t0, t1, x, laneY, laneH);
      else drawMarkers(chart, events, x, laneY);
      const nowX = x(DATA.generated);
      chart.appendChild(svg("line", { x1: nowX, x2: nowX, y1: top, y2: H - 24, class: "now" }, tip("now: " + day(DATA.generated))));
      box.appendChild(chart);
      if (events.length > MARKERS_MAX) box.appendChild(el("p", { class: "note" }, `${events.length} events: each lane is drawn as counts per time bin (red: decisions awaiting an outcome past ${DATA.followup_days} days); the list below names them.`));
    }
    const late = DATA.memories.filter(overdue).sort((a, b) => a.created - b.created);
    document.getElementById("overdue-title").textContent =
      `Awaiting an outcome for more than ${DATA.followup_days} days (outcome_followup_days): ${late.length}`;
    paged(document.getElementById("overdue-list"), document.getElementById("overdue-pager"), late, (m) =>
      el("li", { class: "overdue", "data-id": m.id }, el("span", { class: "date" }, day(m.created)), " ",
        el("a", { href: "#", on: { click: (e) => { e.preventDefault(); openDetail(m.id); } } }, m.content),
        el("span", { class: "muted" }, ` — ${Math.floor((DATA.generated - m.created) / DAY)} days, no outcome yet (${m.topic})`)));
  }

  function drawMarkers(chart, events, x, laneY) {
    for (const e of events) {
      const y = laneY(e.lane);
      if (e.lane === "sessions") {
        const x0 = x(e.at), x1 = Math.max(x(e.end), x0 + 4);
        chart.appendChild(svg("rect", { x: x0, y: y - 6, width: x1 - x0, height: 12, rx: 3, class: "ev session" },
          tip(`session ${e.session.id}: ${e.session.n} memories, ${day(e.at)} → ${day(e.end)}`)));
        continue;
      }
      const m = e.m;
      const cls = "ev " + (e.lane === "outcomes" ? "o-" + e.status : "t-" + m.type) + (e.late ? " overdue" : "");
      chart.appendChild(svg("circle", { cx: x(e.at), cy: y, r: e.late ? 7 : 5, class: cls, "data-id": m.id,
        on: { click: () => openDetail(m.id) } },
        tip(`${day(e.at)} ${e.lane === "outcomes" ? e.status + ": " : ""}${m.content}${e.late ? " — awaiting an outcome" : ""}`)));
    }
  }

  function drawBins(chart, events, t0, t1, x, laneY, laneH) {
    const bins = 160, width = (t1 - t0) / bins;
    for (const lane of [...LANES, "late"]) {
      const counts = new Array(bins).fill(0);
      for (const e of events) {
        if (lane === "late" ? !e.late : e.lane !== lane) continue;
        counts[Math.min(bins - 1, Math.floor((e.at - t0) / width))]++;
      }
      const most = Math.max(1, ...counts);
      const base = laneY(lane === "late" ? "decisions" : lane) + (laneH - 6) / 2;
      counts.forEach((n, i) => {
        if (!n) return;
        const h = Math.max(2, ((laneH - 10) * n) / most) * (lane === "late" ? 0.5 : 1);
        chart.appendChild(svg("rect", { x: x(t0 + i * width), y: base - h, width: Math.max(1, x(t0 + width) - x(t0) - 1), height: h,
          class: "bin " + (lane === "late" ? "overdue" : "l-" + lane) }, tip(`${day(t0 + i * width)}: ${n} ${lane === "late" ? "decisions awaiting an outcome" : lane}`)));
      });
    }
  }

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

  function pct(x) {
    return x === null || x === undefined ? "—" : Math.round(x * 100) + "%";
  }

  function counts(obj) {
    return Object.entries(obj || {}).map(([k, v]) => `${k} ${v}`).join(", ") || "—";
  }

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
    const flagged = Object.keys(DATA.flagged).map((id) => byId.get(id)).filter(Boolean);
    paged(document.getElementById("flagged-list"), document.getElementById("flagged-pager"), flagged, (m) =>
      el("li", { class: "flagged", "data-id": m.id }, el("a", { href: "#", on: { click: (e) => { e.preventDefault(); openDetail(m.id); } } }, clip(m.content, 90)),
        el("ul", {}, DATA.flagged[m.id].map((c) => el("li", {}, c))),
        el("code", {}, `mama verify ${m.id}`), " or ", el("code", {}, `mama forget ${m.id}`)), 8);
    if (!flagged.length) document.getElementById("flagged-list").appendChild(el("li", { class: "note" }, "Nothing flagged: the files the memories cite are as recorded."));
    const g = DATA.gc, box = document.getElementById("gc-plan");
    const folded = g.folds.reduce((n, f) => n + f.folded.length, 0);
    box.appendChild(el("p", {}, `${folded} rolling checkpoints of ${g.folds.length} sessions would be folded into each session's newest`));
    box.appendChild(el("ul", {}, g.folds.slice(0, 20).map((f) => el("li", {}, `session ${f.session_id}: keep `, memoryLink(f.kept), ` fold ${f.folded.length}`))));
    box.appendChild(el("p", {}, `${g.backups.length} backups beyond the caps would be deleted`));
    box.appendChild(el("ul", {}, g.backups.map((b) => el("li", {}, `${b.path.split("/").pop()} taken ${b.taken} (${(b.bytes / 1e6).toFixed(1)} MB)`))));
    box.appendChild(el("p", {}, `rewrite ${g.vacuum ? "would" : "would not"} run; frees about ${(g.frees_bytes / 1e6).toFixed(1)} MB`));
  }

  function start() {
    const name = DATA.project.split("/").filter(Boolean).pop() || DATA.project;
    document.getElementById("title").textContent = "MAMA — " + name;
    const kinds = {};
    for (const m of DATA.memories) kinds[m.type] = (kinds[m.type] || 0) + 1;
    document.getElementById("subtitle").textContent =
      `${DATA.project} · ${DATA.memories.length} memories (${counts(kinds)}) · ${DATA.links.length} links · written ${new Date(DATA.generated).toISOString().slice(0, 16).replace("T", " ")} UTC`;
    document.getElementById("detail-close").addEventListener("click", () => { document.getElementById("detail").hidden = true; });
    chains();
    timeline();
    outcomes();
    health();
  }

  return { DATA, byId, el, svg, tip, day, clip, clear, badge, openDetail, start, linksOf };
})();
