// The HTML page of the memory timeline: markup, CSS and the drawing script, all inline. The data
// (TimelineToJson) sits in <script type="application/json" id="timeline-data">.
#include <string>
#include <string_view>

#include "report/timeline_escape.h"
#include "report/timeline_html.h"

namespace memopt {

namespace {

constexpr std::string_view kHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="memopt">
<title>)HTML";

constexpr std::string_view kStyle = R"HTML(</title>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px 24px; color: #222; }
h1 { font-size: 18px; margin: 0 0 2px; }
h2 { font-size: 15px; margin: 18px 0 6px; }
.sub { color: #555; margin: 0; }
#toolbar { margin: 10px 0 4px; display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
#toolbar button { font: inherit; padding: 2px 10px; border: 1px solid #bbb; background: #f6f7f8; border-radius: 4px;
  cursor: pointer; }
#toolbar .hint { color: #777; font-size: 12px; margin-left: 8px; }
#legend { display: flex; gap: 14px; flex-wrap: wrap; margin: 6px 0; user-select: none; }
#legend .item { cursor: pointer; display: flex; align-items: center; gap: 5px; }
#legend .item.off { opacity: 0.35; }
#legend .swatch { width: 12px; height: 12px; display: inline-block; }
#legend .line { width: 16px; height: 3px; display: inline-block; }
#chart-wrap { position: relative; max-width: 1200px; }
#chart { width: 100%; height: auto; display: block; cursor: crosshair; border: 1px solid #e3e6ea; }
#chart.dragging { cursor: grabbing; }
#chart text { font-size: 12px; fill: #444; }
#chart .mark { font-size: 11px; fill: #222; }
#chart .grid { stroke: #e3e6ea; }
#tooltip { position: absolute; pointer-events: none; background: rgba(255,255,255,0.96); border: 1px solid #aaa;
  border-radius: 4px; padding: 6px 8px; font-size: 12px; max-width: 460px; box-shadow: 0 2px 6px rgba(0,0,0,0.15);
  white-space: nowrap; overflow: hidden; }
#tooltip table { border-collapse: collapse; }
#tooltip td { padding: 0 6px 0 0; }
#tooltip .num { text-align: right; font-variant-numeric: tabular-nums; }
#tooltip .dim { color: #666; }
table.peak { border-collapse: collapse; font-size: 13px; }
table.peak th, table.peak td { border-bottom: 1px solid #e3e6ea; padding: 3px 10px 3px 0; text-align: left; }
table.peak td.num { text-align: right; font-variant-numeric: tabular-nums; }
.notes { color: #555; font-size: 12px; max-width: 1200px; }
</style>
</head>
<body data-render="pending" data-series-count="0" data-errors="0">
<h1 id="title"></h1>
<p class="sub" id="subtitle"></p>
<p class="sub" id="summary"></p>
<div id="toolbar">
<button id="zoom-in" type="button">Zoom in</button><button id="zoom-out" type="button">Zoom out</button>
<button id="zoom-peak" type="button">Zoom to peak</button><button id="zoom-reset" type="button">Reset</button>
<span class="hint">wheel: zoom &middot; drag: pan &middot; double-click: reset &middot; click a legend entry to hide
it</span>
</div>
<div id="legend"></div>
<div id="chart-wrap"><svg id="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1100 460"
role="img" aria-label="memory timeline"></svg><div id="tooltip" hidden></div></div>
<h2>Largest tensors live at the peak</h2>
<table class="peak" id="peak-table"></table>
<p class="notes" id="notes"></p>
<script type="application/json" id="timeline-data">)HTML";

constexpr std::string_view kScript = R"HTML(</script>
<script>
"use strict";
window.addEventListener("error", function () {
  document.body.dataset.errors = String(Number(document.body.dataset.errors) + 1);
});
(function () {
  const data = JSON.parse(document.getElementById("timeline-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.getElementById("chart");
  const tip = document.getElementById("tooltip");
  const W = 1100, H = 460, M = { l: 86, r: 20, t: 18, b: 42 };
  const PW = W - M.l - M.r, PH = H - M.t - M.b;
  const tls = data.timelines;
  const base = tls[0];
  const nk = data.kinds.length;
  const hidden = new Array(nk).fill(false);
  let totalSteps = 1;
  for (const t of tls) {
    totalSteps = Math.max(totalSteps, t.steps);
    t.n = t.first.length;
    t.last = t.first.map((f, i) => (i + 1 < t.n ? t.first[i + 1] - 1 : t.steps - 1));
    t.total = t.first.map((_, i) => { let s = 0; for (let k = 0; k < nk; k++) s += t.kinds[k][i]; return s; });
  }
  const minSpan = Math.min(totalSteps, Math.max(8, 8 * (base.n ? Math.ceil(base.steps / base.n) : 1)));
  let view = { x0: 0, x1: totalSteps };

  function grouped(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function human(b) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let v = Math.abs(b), u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    const s = u === 0 ? String(v) : v.toFixed(2);
    return (b < 0 ? "-" : "") + s + " " + units[u];
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }
  function el(name, attrs, parent, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function niceStep(raw) {
    if (!(raw > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw * (1 - 1e-9)) return m * p;
    return 10 * p;
  }
  function byteTicks(max) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let unit = 1, u = 0;
    while (u < 5 && max >= unit * 1024) { unit *= 1024; u++; }
    let step = niceStep(max / unit / 5);
    if (u === 0) step = Math.max(step, 1);
    return { step: step * unit, unit: unit, name: units[u] };
  }
  // Buckets of timeline t overlapping [x0, x1).
  function visible(t, x0, x1) {
    let lo = 0, hi = t.n;
    while (lo < hi) { const m = (lo + hi) >> 1; if (t.last[m] + 1 <= x0) lo = m + 1; else hi = m; }
    let end = lo;
    while (end < t.n && t.first[end] < x1) end++;
    return [lo, end];
  }
  function bucketAt(t, step) {
    let lo = 0, hi = t.n - 1;
    if (hi < 0 || step < 0 || step > t.last[hi]) return -1;
    while (lo < hi) { const m = (lo + hi + 1) >> 1; if (t.first[m] <= step) lo = m; else hi = m - 1; }
    return lo;
  }
  function stackedTop(t, i) {
    let s = 0;
    for (let k = 0; k < nk; k++) if (!hidden[k]) s += t.kinds[k][i];
    return s;
  }

  let sx = x => x, sy = y => y;
  function render() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const span = view.x1 - view.x0;
    const ranges = tls.map(t => visible(t, view.x0, view.x1));
    let ymax = 1;
    for (let i = ranges[0][0]; i < ranges[0][1]; i++) ymax = Math.max(ymax, stackedTop(base, i));
    for (let j = 1; j < tls.length; j++) {
      for (let i = ranges[j][0]; i < ranges[j][1]; i++) ymax = Math.max(ymax, tls[j].total[i]);
    }
    const ticks = byteTicks(ymax * 1.08);
    ymax = Math.ceil(ymax * 1.08 / ticks.step) * ticks.step;
    sx = x => M.l + (x - view.x0) / span * PW;
    sy = y => M.t + PH - y / ymax * PH;
    const defs = el("defs", {}, svg);
    const clip = el("clipPath", { id: "plot-clip" }, defs);
    el("rect", { x: M.l, y: M.t - 2, width: PW, height: PH + 2 }, clip);
    el("rect", { x: 0, y: 0, width: W, height: H, fill: "#fff" }, svg);
    const axis = el("g", {}, svg);
    for (let v = 0; v <= ymax * (1 + 1e-9); v += ticks.step) {
      el("line", { class: "grid", x1: M.l, x2: M.l + PW, y1: sy(v), y2: sy(v) }, axis);
      const label = v === 0 ? "0" : +(v / ticks.unit).toFixed(3) + " " + ticks.name;
      el("text", { x: M.l - 6, y: sy(v) + 4, "text-anchor": "end" }, axis, label);
    }
    const xs = Math.max(1, niceStep(span / 8));
    for (let s = Math.ceil(view.x0 / xs) * xs; s <= view.x1 + 1e-9; s += xs) {
      el("line", { x1: sx(s), x2: sx(s), y1: M.t + PH, y2: M.t + PH + 4, stroke: "#888" }, axis);
      el("text", { x: sx(s), y: M.t + PH + 17, "text-anchor": "middle" }, axis, String(Math.round(s)));
    }
    el("line", { x1: M.l, x2: M.l + PW, y1: M.t + PH, y2: M.t + PH, stroke: "#888" }, axis);
    el("text", { x: M.l + PW / 2, y: H - 6, "text-anchor": "middle" }, axis, "execution order (step)");
    el("text", { transform: "translate(16," + (M.t + PH / 2) + ") rotate(-90)", "text-anchor": "middle" }, axis,
       "live bytes");

    const plot = el("g", { "clip-path": "url(#plot-clip)" }, svg);
    let drawn = 0;
    const [b0, b1] = ranges[0];
    const px = v => v.toFixed(1);
    if (b1 > b0) {
      const lower = new Array(b1 - b0).fill(0);
      for (let k = 0; k < nk; k++) {
        if (hidden[k]) continue;
        const top = [], bottom = [];
        for (let i = b0; i < b1; i++) {
          const lo = lower[i - b0], hi = lo + base.kinds[k][i];
          top.push(px(sx(base.first[i])) + "," + px(sy(hi)), px(sx(base.last[i] + 1)) + "," + px(sy(hi)));
          bottom.push(px(sx(base.first[i])) + "," + px(sy(lo)), px(sx(base.last[i] + 1)) + "," + px(sy(lo)));
          lower[i - b0] = hi;
        }
        bottom.reverse();
        el("path", { class: "series " + data.kinds[k].key, fill: data.kinds[k].color,
                     d: "M" + top.join("L") + "L" + bottom.join("L") + "Z" }, plot);
        drawn++;
      }
      if (base.aggregated) {
        let d = "";
        for (let i = b0; i < b1; i++) {
          d += "L" + px(sx(base.first[i])) + "," + px(sy(base.min[i])) + "L" + px(sx(base.last[i] + 1)) + "," +
               px(sy(base.min[i]));
        }
        el("path", { class: "envelope", fill: "none", stroke: "#333", "stroke-width": 0.6, "stroke-opacity": 0.6,
                     d: "M" + d.slice(1) }, plot);
      }
    }
    for (let j = 1; j < tls.length; j++) {
      const t = tls[j];
      const [c0, c1] = ranges[j];
      if (c1 <= c0) continue;
      let d = "";
      for (let i = c0; i < c1; i++) {
        d += "L" + px(sx(t.first[i])) + "," + px(sy(t.total[i])) + "L" + px(sx(t.last[i] + 1)) + "," +
             px(sy(t.total[i]));
      }
      el("path", { class: "series overlay", fill: "none", stroke: data.overlay_color, "stroke-width": 2,
                   d: "M" + d.slice(1) }, plot);
      drawn++;
    }
    // Forward/backward boundary and peaks.
    const lf = base.last_forward;
    if (lf >= 0 && lf + 1 < base.steps && lf + 1 >= view.x0 && lf + 1 <= view.x1) {
      const x = sx(lf + 1);
      el("line", { class: "boundary", x1: x, x2: x, y1: M.t, y2: M.t + PH, stroke: "#555", "stroke-dasharray": "6,4" },
         plot);
      el("text", { x: x - 6, y: M.t + 12, "text-anchor": "end", class: "mark" }, plot, "forward");
      el("text", { x: x + 6, y: M.t + 12, class: "mark" }, plot, "backward");
    }
    tls.forEach((t, j) => {
      const p = t.peak;
      if (p.step < 0 || p.step + 1 <= view.x0 || p.step >= view.x1) return;
      const color = j === 0 ? "#222" : data.overlay_color;
      const x = sx(p.step + 0.5), y = sy(p.bytes);
      const g = el("g", { class: "peak" }, plot);
      el("line", { x1: x, x2: x, y1: y, y2: M.t + PH, stroke: color, "stroke-dasharray": "3,3" }, g);
      el("circle", { cx: x, cy: y, r: 4, fill: color, stroke: "#fff" }, g);
      const right = x > M.l + PW / 2;
      const name = p.node.length > 48 ? p.node.slice(0, 45) + "..." : p.node;
      const label = (tls.length > 1 ? t.label + " peak " : "peak ") + human(p.bytes) + " at " + name + " (" + p.op + ")";
      el("text", { x: right ? x - 8 : x + 8, y: Math.max(y - 8, M.t + 26), "text-anchor": right ? "end" : "start",
                   class: "mark" }, g, label);
    });
    el("line", { id: "cursor", x1: -10, x2: -10, y1: M.t, y2: M.t + PH, stroke: "#000", "stroke-opacity": 0.35 }, svg);
    svg.setAttribute("data-series-count", String(drawn));
    document.body.dataset.seriesCount = String(drawn);
  }

  function setView(x0, x1) {
    let span = Math.max(minSpan, Math.min(totalSteps, x1 - x0));
    x0 = Math.max(0, Math.min(x0, totalSteps - span));
    view = { x0: x0, x1: x0 + span };
    render();
  }
  function zoom(factor, center) {
    const span = view.x1 - view.x0;
    if (center === undefined) center = view.x0 + span / 2;
    const ns = span * factor;
    setView(center - (center - view.x0) / span * ns, center - (center - view.x0) / span * ns + ns);
  }
  function stepAt(evt) {
    const r = svg.getBoundingClientRect();
    const x = (evt.clientX - r.left) * W / r.width;
    return { x: x, step: view.x0 + (x - M.l) / PW * (view.x1 - view.x0), inside: x >= M.l && x <= M.l + PW };
  }

  function tooltipHtml(step) {
    let html = "";
    tls.forEach((t, j) => {
      const i = bucketAt(t, Math.floor(step));
      if (i < 0) return;
      const node = data.nodes[t.node[i]];
      const range = t.last[i] > t.first[i] ? "steps " + (t.first[i] + 1) + "-" + (t.last[i] + 1) +
                    " (showing step " + (t.rep[i] + 1) + ", the most live bytes)" : "step " + (t.rep[i] + 1);
      const phase = t.rep[i] <= t.last_forward ? "forward" : "backward";
      if (tls.length > 1) html += "<b>" + esc(t.label) + "</b> ";
      html += esc(range) + " of " + t.steps + " &middot; " + phase + "<br>";
      html += "node <b>" + esc(node[0]) + "</b> (" + esc(node[1]) + ")<table>";
      for (const o of node[2]) {
        html += "<tr><td>" + esc(o[0]) + "</td><td class='dim'>" + esc(o[1]) + "</td><td class='num'>" +
                human(o[2]) + "</td><td class='dim'>" + esc(data.kinds[o[3]].label) + "</td></tr>";
      }
      if (node[3] > node[2].length) html += "<tr><td class='dim'>+" + (node[3] - node[2].length) + " more outputs</td></tr>";
      html += "</table><table>";
      for (let k = nk - 1; k >= 0; k--) {
        html += "<tr><td><span style='color:" + data.kinds[k].color + "'>&#9632;</span> " + esc(data.kinds[k].label) +
                "</td><td class='num'>" + human(t.kinds[k][i]) + "</td></tr>";
      }
      html += "<tr><td><b>total live</b></td><td class='num'><b>" + human(t.total[i]) + "</b></td></tr>";
      if (t.last[i] > t.first[i]) html += "<tr><td class='dim'>lowest in these steps</td><td class='num'>" +
                                          human(t.min[i]) + "</td></tr>";
      html += "</table>";
    });
    return html;
  }

  let drag = null;
  svg.addEventListener("wheel", evt => {
    evt.preventDefault();
    const p = stepAt(evt);
    zoom(evt.deltaY < 0 ? 0.8 : 1.25, p.inside ? p.step : undefined);
  }, { passive: false });
  svg.addEventListener("mousedown", evt => {
    drag = { x: stepAt(evt).x, x0: view.x0, x1: view.x1 };
    svg.classList.add("dragging");
  });
  window.addEventListener("mouseup", () => { drag = null; svg.classList.remove("dragging"); });
  svg.addEventListener("mousemove", evt => {
    const p = stepAt(evt);
    if (drag) {
      const shift = (p.x - drag.x) / PW * (drag.x1 - drag.x0);
      setView(drag.x0 - shift, drag.x1 - shift);
      return;
    }
    const cursor = document.getElementById("cursor");
    if (!p.inside) { tip.hidden = true; cursor.setAttribute("x1", -10); cursor.setAttribute("x2", -10); return; }
    cursor.setAttribute("x1", p.x);
    cursor.setAttribute("x2", p.x);
    tip.innerHTML = tooltipHtml(p.step);
    tip.hidden = false;
    const wrap = svg.parentNode.getBoundingClientRect();
    const left = evt.clientX - wrap.left + 14;
    tip.style.left = (left + tip.offsetWidth > wrap.width ? left - tip.offsetWidth - 28 : left) + "px";
    tip.style.top = Math.max(0, evt.clientY - wrap.top - tip.offsetHeight / 2) + "px";
  });
  svg.addEventListener("mouseleave", () => { tip.hidden = true; });
  svg.addEventListener("dblclick", () => setView(0, totalSteps));
  document.getElementById("zoom-in").onclick = () => zoom(0.5);
  document.getElementById("zoom-out").onclick = () => zoom(2);
  document.getElementById("zoom-reset").onclick = () => setView(0, totalSteps);
  document.getElementById("zoom-peak").onclick = () => {
    const c = base.peak.step + 0.5, span = Math.max(minSpan, totalSteps / 50);
    setView(c - span / 2, c + span / 2);
  };

  // Header, legend, peak table, notes.
  document.getElementById("title").textContent = data.title;
  document.getElementById("subtitle").textContent = data.subtitle;
  document.getElementById("summary").textContent = tls.map(t => (tls.length > 1 ? t.label + " " : "") + "peak " +
    t.peak.text).join("; ");
  const legend = document.getElementById("legend");
  data.kinds.forEach((k, i) => {
    const item = document.createElement("span");
    item.className = "item";
    item.innerHTML = "<span class='swatch' style='background:" + k.color + "'></span>" +
                     esc((tls.length > 1 ? tls[0].label + ": " : "") + k.label);
    item.onclick = () => { hidden[i] = !hidden[i]; item.classList.toggle("off", hidden[i]); render(); };
    legend.appendChild(item);
  });
  for (let j = 1; j < tls.length; j++) {
    const item = document.createElement("span");
    item.className = "item";
    item.innerHTML = "<span class='line' style='background:" + data.overlay_color + "'></span>" +
                     esc(tls[j].label + " (total)");
    legend.appendChild(item);
  }
  const table = document.getElementById("peak-table");
  let rows = "<tr><th>tensor</th><th>kind</th><th>type</th><th>bytes</th><th>producer</th></tr>";
  for (const r of base.live_at_peak) {
    rows += "<tr><td>" + esc(r.tensor) + "</td><td>" + esc(data.kinds[r.kind].label) + "</td><td>" + esc(r.type) +
            "</td><td class='num'>" + esc(human(r.bytes)) + " (" + grouped(r.bytes) + ")</td><td>" +
            esc(r.producer ? r.producer + " (" + r.producer_op + ")" : "graph input / initializer") + "</td></tr>";
  }
  table.innerHTML = rows;
  const notes = [];
  if (base.aggregated) {
    notes.push("Each point stands for " + Math.ceil(base.steps / base.n) + " consecutive steps and shows the step " +
               "with the most live bytes (so the peak is exact); the thin dark line is the lowest total in each " +
               "group. Zoom in for detail.");
  }
  if (!base.sized) notes.push("Dims " + base.unbound_dims.join(", ") + " are unbound and counted as 1024.");
  if (base.unsized_values > 0) notes.push(base.unsized_values + " values of unknown size are counted as 0 bytes.");
  notes.push("Live bytes at each step: the node's outputs allocated, before the inputs it was the last reader of " +
             "are freed (the rules of memopt's peak estimate, docs/scan.md).");
  document.getElementById("notes").textContent = notes.join(" ");
  render();
  document.body.dataset.render = "ok";
})();
</script>
</body>
</html>
)HTML";

}  // namespace

std::string TimelineHtmlPage(const std::string& title, const std::string& data_json) {
  std::string page;
  page.reserve(kHead.size() + kStyle.size() + kScript.size() + title.size() + data_json.size());
  page += kHead;
  page += XmlEscape(title);
  page += kStyle;
  page += data_json;
  page += kScript;
  return page;
}

}  // namespace memopt
