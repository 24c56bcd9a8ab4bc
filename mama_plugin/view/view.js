// MAMA's page: its building blocks, the evolution chains, the timeline and the detail panel.
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
      const line = oneLine(v);
      if (line) return document.createTextNode(line);
      const keys = Object.keys(v).filter((k) => v[k] !== "" && v[k] !== null && !(Array.isArray(v[k]) && !v[k].length));
      if (!keys.length) return null;
      return el("dl", {}, keys.map((k) => [el("dt", {}, k.replace(/_/g, " ")), el("dd", {}, value(v[k]))]));
    }
    return document.createTextNode(String(v));
  }

  // The narrative's small records read as one line: evidence, alternatives, next steps.
  function oneLine(v) {
    const s = (k) => (typeof v[k] === "string" ? v[k] : "");
    if (s("source")) return s("source") + (s("detail") ? " — " + s("detail") : "") + (s("kind") ? ` (${s("kind")})` : "");
    if (s("option")) return s("option") + (s("rejected_because") ? " — rejected because " + s("rejected_because") : "");
    if (s("step")) return s("step") + (s("priority") ? ` (${s("priority")})` : "");
    return "";
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
    const moves = (DATA.history || {})[id];
    if (moves) {
      trust["confidence history"] = moves.map(([at, from, to, why]) =>
        `${day(at)}: ${from.toFixed(2)} → ${to.toFixed(2)} — ${why}`);
    }
    if ((DATA.staleness || {})[id]) trust.staleness = DATA.staleness[id];
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

  const CHAIN_SHOWN = 6; // a longer chain shows its first and last decisions, the rest folded

  function drawChain(chain, all) {
    const steps = [];
    const n = chain.ids.length;
    const folded = !all && n > CHAIN_SHOWN ? [1, n - (CHAIN_SHOWN - 1)] : null;
    chain.ids.forEach((id, i) => {
      if (folded && i >= folded[0] && i < folded[1]) {
        if (i === folded[0]) {
          const more = el("li", { class: "arrow folded" }, el("button", { type: "button", on: { click: () => {
            article.replaceWith(drawChain(chain, true)); } } }, `… ${folded[1] - folded[0]} more decisions`));
          steps.push(more);
        }
        return;
      }
      if (i > 0 && !(folded && i === folded[1])) steps.push(chainArrow(chain.steps[i - 1]));
      steps.push(chainCard(id));
    });
    const article = el("article", { class: "chain", "data-topic": chain.topic },
      el("h3", {}, chain.topic, el("small", {}, ` ${n} decision${n > 1 ? "s" : ""}`)),
      el("ol", { class: "steps" }, steps));
    return article;
  }

  function chains() {
    const list = document.getElementById("chain-list");
    const view = paged(list, document.getElementById("chain-pager"), DATA.chains, (c) => drawChain(c, false), 10);
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
        const label = t1 - t0 < 3 * DAY ? new Date(t).toISOString().slice(0, 16).replace("T", " ") : day(t);
        const anchor = k === 0 ? "start" : k === 6 ? "end" : "middle"; // the ends stay inside
        chart.appendChild(svg("text", { x: x(t), y: H - 8, class: "tick", "text-anchor": anchor }, label));
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

  function pct(x) {
    return x === null || x === undefined ? "—" : Math.round(x * 100) + "%";
  }

  function counts(obj) {
    return Object.entries(obj || {}).map(([k, v]) => `${k} ${v}`).join(", ") || "—";
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
  }

  return { DATA, byId, el, svg, tip, day, clip, clear, badge, paged, counts, memoryLink, openDetail, start, linksOf, OUTCOMES, pct };
})();
