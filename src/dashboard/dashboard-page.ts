// The dashboard: one static page and its script, served by the gateway itself on Node and Workers (no build step,
// no CDN). The page holds no data: its script reads the call records, the named keys, a key's usage per UTC day and
// its limit windows from the admin API with the admin key the operator gives it (in the form, or as `#key=…` in the
// address, which never reaches a server), and writes every value as text, never as markup.

/** `GET /promptgate/dashboard`. */
export const dashboardHtml = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>promptgate: calls against their window</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.5rem; color: #1d2330; }
  h1 { font-size: 1.3rem; margin: 0 0 1rem; }
  form { display: flex; gap: .75rem; align-items: end; margin-bottom: 1rem; flex-wrap: wrap; }
  label { display: flex; flex-direction: column; font-size: .8rem; gap: .2rem; }
  input { font: inherit; padding: .25rem .4rem; }
  table { border-collapse: collapse; width: 100%; margin-top: 1rem; font-size: .85rem; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e2e5ea; white-space: nowrap; }
  tbody tr { cursor: pointer; }
  tbody tr:hover, tbody tr.selected { background: #eef3fb; }
  .rejected { color: #b3261e; } .failed { color: #b3261e; }
  h2 { font-size: 1.1rem; margin: 2rem 0 .75rem; } h3 { font-size: .95rem; margin: 1.25rem 0 .5rem; }
  svg { border: 1px solid #e2e5ea; background: #fbfcfd; display: block; }
  svg text { font: 11px system-ui, sans-serif; fill: #3a4250; }
  svg .axis-title { font-weight: 600; } svg .grid { stroke: #e8ebf0; } svg .axis { stroke: #5b6473; }
  .target { stroke: #c98a00; stroke-dasharray: 4 3; } .limit { stroke: #b3261e; }
  .preflight { fill: #3366cc; } .provider { fill: #2e9e5b; }
  .bar-accepted { fill: #3366cc; } .bar-rejected { fill: #b3261e; } .bar-chars { fill: #2e9e5b; }
  .bar-tokens-in { fill: #3366cc; } .bar-tokens-out { fill: #c98a00; }
  #status, #key-status { color: #5b6473; font-size: .85rem; }
  td.number, th.number { text-align: right; }
  pre { background: #f4f6f8; padding: .75rem; overflow: auto; max-height: 24rem; }
</style>
<h1>promptgate: calls against their window</h1>
<form id="filters">
  <label>Admin key <input id="key" type="password" autocomplete="off"></label>
  <label>Case <input id="case" autocomplete="off"></label>
  <label>Policy <input id="policy" autocomplete="off" placeholder="name or name@hash"></label>
  <button type="submit">Show</button>
  <span id="status"></span>
</form>
<svg id="plot" width="960" height="320" role="img" aria-label="Each call's checked totals, in characters, against its target and limit, oldest call to newest"></svg>
<table>
  <thead><tr><th>time</th><th>ref</th><th>case</th><th>label</th><th>key</th><th>policy</th><th>surface</th><th>model</th><th>decision</th><th>code</th><th>validation</th></tr></thead>
  <tbody id="calls"></tbody>
</table>
<pre id="record" hidden></pre>
<section id="key-view">
<h2>Per named key</h2>
<form id="key-filters">
  <label>Named key <select id="key-id"><option value="">(show the calls first)</option></select></label>
  <label>Plot <select id="usage-metric">
    <option value="calls">calls per day</option>
    <option value="chars">characters per day</option>
    <option value="tokens">tokens per day</option>
  </select></label>
  <button type="submit">Show key</button>
  <span id="key-status"></span>
</form>
<h3>Use per UTC day, the last 30 days</h3>
<svg id="usage-plot" width="960" height="240" role="img" aria-label="The key's use per UTC day, oldest day to newest"></svg>
<table>
  <thead><tr><th>day (UTC)</th><th class="number">calls</th><th class="number">rejected</th><th class="number">chars (code points)</th><th class="number">tokens in</th><th class="number">tokens out</th></tr></thead>
  <tbody id="usage"></tbody>
</table>
<h3>Limit windows now</h3>
<table>
  <thead><tr><th>window</th><th>limits of</th><th class="number">used / limit</th><th>resets</th></tr></thead>
  <tbody id="windows"></tbody>
</table>
</section>
<script src="/promptgate/dashboard.js"></script>
</html>
`;

/** `GET /promptgate/dashboard.js`: the page's script, plain browser JavaScript. */
export const dashboardScript = `"use strict";
(() => {
  const svgNs = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  const keyFromHash = new URLSearchParams(location.hash.slice(1)).get("key");
  if (keyFromHash) sessionStorage.setItem("promptgate-admin-key", keyFromHash);
  $("key").value = sessionStorage.getItem("promptgate-admin-key") || "";
  const adminHeaders = () => ({ authorization: "Bearer " + $("key").value });

  // A named key's name, and its team in brackets where it has one; empty for an unnamed key or none.
  const keyOf = (record) => !record.key ? "" : record.key.team ? record.key.name + " (" + record.key.team + ")" : record.key.name;

  const clear = (element) => {
    while (element.firstChild) element.removeChild(element.firstChild);
  };
  const cell = (row, text, className) => {
    const td = document.createElement("td");
    td.textContent = text === undefined || text === null ? "" : String(text);
    if (className) td.className = className;
    row.appendChild(td);
  };
  const validationOf = (record) =>
    record.validation === null || record.validation === undefined
      ? ""
      : !record.validation.valid ? "invalid" : record.repair ? "repaired" : "valid";
  // An ISO time as "YYYY-MM-DD HH:MM:SS UTC".
  const utcTime = (iso) => {
    const time = new Date(iso);
    return Number.isNaN(time.getTime()) ? String(iso) : time.toISOString().slice(0, 19).replace("T", " ") + " UTC";
  };
  const grouped = (count) => Number(count).toLocaleString("en-US");
  // 950, 2.5k, 10k, 1.2M: short enough for an axis.
  const short = (count) => {
    for (const [size, suffix] of [[1e9, "G"], [1e6, "M"], [1e3, "k"]]) {
      if (Math.abs(count) >= size) return Number((count / size).toFixed(1)) + suffix;
    }
    return String(Number(count.toFixed(1)));
  };
  const units = {
    chars: (count) => short(count) + " chars",
    calls: (count) => short(count) + (count === 1 ? " call" : " calls"),
    tokens: (count) => short(count) + " tokens",
  };
  // A step of 1, 2 or 5 times a power of ten that cuts 0..max into about \`count\` parts (whole numbers when asked).
  const niceStep = (max, count, whole) => {
    const raw = max / count;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= raw);
    return whole ? Math.max(1, Math.round(step)) : step;
  };

  const svgElement = (parent, name, attributes, text) => {
    const element = document.createElementNS(svgNs, name);
    for (const [key, value] of Object.entries(attributes || {})) element.setAttribute(key, String(value));
    if (text !== undefined) element.textContent = text;
    parent.appendChild(element);
    return element;
  };

  // Clears \`svg\` and draws a chart's frame: the legend above, a y axis from 0 with labelled ticks in the chart's unit
  // and its title, an x axis with its title and the first and last slot's label. Answers the scale and the group the
  // chart's own marks go into. The plot area's edges are on the svg's data-top, -bottom, -left and -right, its top
  // value on data-y-max.
  function frame(svg, options) {
    clear(svg);
    const width = Number(svg.getAttribute("width"));
    const height = Number(svg.getAttribute("height"));
    const box = { left: 84, right: width - 16, top: 40, bottom: height - 48 };
    const step = niceStep(Math.max(options.max, options.whole ? 1 : 1e-9), 4, options.whole);
    const yMax = Math.max(step, Math.ceil(options.max / step) * step);
    Object.assign(svg.dataset, {
      yMax: String(yMax),
      top: String(box.top),
      bottom: String(box.bottom),
      left: String(box.left),
      right: String(box.right),
    });
    const y = (value) => box.bottom - (value / yMax) * (box.bottom - box.top);

    const yAxis = svgElement(svg, "g", { class: "y-axis" });
    for (let index = 0; index * step <= yMax * (1 + 1e-9); index++) {
      const value = index * step;
      svgElement(yAxis, "line", { class: "grid", x1: box.left, x2: box.right, y1: y(value), y2: y(value) });
      svgElement(yAxis, "line", { class: "axis", x1: box.left - 4, x2: box.left, y1: y(value), y2: y(value) });
      const label = svgElement(yAxis, "text", { class: "tick", x: box.left - 7, y: y(value) + 4, "text-anchor": "end" },
        options.unit(value));
      label.dataset.value = String(value);
    }
    svgElement(yAxis, "line", { class: "axis", x1: box.left, x2: box.left, y1: box.top, y2: box.bottom });
    const middle = (box.top + box.bottom) / 2;
    svgElement(yAxis, "text", { class: "axis-title", x: 14, y: middle, "text-anchor": "middle",
      transform: "rotate(-90 14 " + middle + ")" }, options.yTitle);

    const xAxis = svgElement(svg, "g", { class: "x-axis" });
    svgElement(xAxis, "line", { class: "axis", x1: box.left, x2: box.right, y1: box.bottom, y2: box.bottom });
    if (options.first !== undefined) {
      svgElement(xAxis, "text", { class: "first", x: box.left, y: box.bottom + 16, "text-anchor": "start" }, options.first);
    }
    if (options.last !== undefined) {
      svgElement(xAxis, "text", { class: "last", x: box.right, y: box.bottom + 16, "text-anchor": "end" }, options.last);
    }
    svgElement(xAxis, "text", { class: "axis-title", x: (box.left + box.right) / 2, y: height - 10, "text-anchor": "middle" },
      options.xTitle);

    // The legend: each mark as the chart draws it, and what it is.
    const legend = svgElement(svg, "g", { class: "legend" });
    let x = box.left;
    for (const item of options.legend) {
      const entry = svgElement(legend, "g", { class: "entry" });
      item.mark(entry, x, 18);
      const text = svgElement(entry, "text", { x: x + 22, y: 22 }, item.text);
      const length = typeof text.getComputedTextLength === "function" ? text.getComputedTextLength() : 0;
      x += 22 + (length || item.text.length * 6) + 18;
    }
    return { box, y, yMax, marks: svgElement(svg, "g", { class: "marks" }) };
  }

  const lineMark = (kind) => (parent, x, y) => svgElement(parent, "line", { class: kind, x1: x, x2: x + 16, y1: y, y2: y });
  const dotMark = (kind) => (parent, x, y) => svgElement(parent, "circle", { class: kind, cx: x + 8, cy: y, r: 4 });
  const barMark = (kind) => (parent, x, y) => svgElement(parent, "rect", { class: kind, x: x + 2, y: y - 6, width: 12, height: 12 });

  function showRecord(record, row) {
    for (const other of document.querySelectorAll("#calls tr.selected")) other.classList.remove("selected");
    row.classList.add("selected");
    const shown = $("record");
    shown.hidden = false;
    shown.textContent = JSON.stringify(record, null, 2);
  }

  // Each call (oldest first, one column each): its checked totals against its target and limit, in characters.
  function plot(calls) {
    const svg = $("plot");
    const sizes = calls.flatMap((call) => [call.preflight, call.provider_check].filter(Boolean));
    const { box, y, marks } = frame(svg, {
      max: Math.max(1, ...sizes.map((size) => Math.max(size.conservative_total_chars, size.limit_chars))),
      whole: true,
      unit: units.chars,
      yTitle: "characters (code points)",
      xTitle: calls.length === 0 ? "calls, oldest to newest (none)" : "calls, oldest to newest (" + calls.length + ", one column each)",
      first: calls.length === 0 ? undefined : "first: " + utcTime(calls[0].time),
      last: calls.length < 2 ? undefined : "last: " + utcTime(calls[calls.length - 1].time),
      legend: [
        { mark: dotMark("preflight"), text: "a call's preflight total" },
        { mark: dotMark("provider"), text: "a call's provider-check total" },
        { mark: lineMark("target"), text: "its target" },
        { mark: lineMark("limit"), text: "its limit" },
      ],
    });
    const slot = (box.right - box.left) / Math.max(1, calls.length);
    calls.forEach((call, index) => {
      const x = box.left + slot * (index + 0.5);
      const size = call.provider_check || call.preflight;
      if (size) {
        for (const [kind, chars] of [["target", size.target_chars], ["limit", size.limit_chars]]) {
          svgElement(marks, "line", { class: kind, x1: x - slot / 2 + 2, x2: x + slot / 2 - 2, y1: y(chars), y2: y(chars) });
        }
      }
      for (const [check, measured] of [["preflight", call.preflight], ["provider", call.provider_check]]) {
        if (!measured) continue;
        const point = svgElement(marks, "circle", {
          class: check,
          cx: check === "preflight" ? x - 3 : x + 3,
          cy: y(measured.conservative_total_chars),
          r: 4,
        });
        point.dataset.ref = call.ref;
        point.dataset.check = check;
        point.dataset.chars = String(measured.conservative_total_chars);
        svgElement(point, "title", {}, call.ref + " " + check + ": " + grouped(measured.conservative_total_chars) +
          " chars of a " + grouped(measured.limit_chars) + "-char limit, " + utcTime(call.time));
      }
    });
  }

  async function load() {
    const key = $("key").value;
    sessionStorage.setItem("promptgate-admin-key", key);
    const query = new URLSearchParams({ limit: "200" });
    if ($("case").value) query.set("case", $("case").value);
    if ($("policy").value) query.set("policy", $("policy").value);
    $("status").textContent = "loading…";
    const response = await fetch("/promptgate/admin/calls?" + query, { headers: adminHeaders() });
    const body = await response.json();
    if (!response.ok) {
      $("status").textContent = (body.error && body.error.message) || "The admin API refused the request.";
      return;
    }
    // Oldest first, left to right, as the plot reads.
    const calls = query.has("case") ? body.calls : body.calls.slice().reverse();
    const rows = $("calls");
    clear(rows);
    for (const record of calls) {
      const row = document.createElement("tr");
      row.dataset.ref = record.ref;
      row.className = record.decision;
      for (const value of [record.time, record.ref, record.case, record.call_label, keyOf(record), record.policy,
        record.surface, record.model, record.decision, record.error, validationOf(record)]) cell(row, value);
      row.addEventListener("click", () => showRecord(record, row));
      rows.appendChild(row);
    }
    plot(calls);
    $("status").textContent = calls.length + " calls";
    document.body.dataset.loaded = "true";
    await loadKeys();
  }

  // The named keys the admin API lists, in the key selector; the one chosen before stays chosen.
  async function loadKeys() {
    const select = $("key-id");
    const chosen = select.value;
    const response = await fetch("/promptgate/admin/keys", { headers: adminHeaders() });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      $("key-status").textContent = (body.error && body.error.message) || "The admin API refused to list the keys.";
      return;
    }
    clear(select);
    const keys = body.data || [];
    if (keys.length === 0) {
      const option = document.createElement("option");
      option.value = "";
      option.textContent = "(no named keys)";
      select.appendChild(option);
    }
    for (const key of keys) {
      const option = document.createElement("option");
      option.value = key.id;
      option.textContent = key.name + (key.team ? " (" + key.team + ")" : "") + " · " + key.id + (key.revoked_at ? " · revoked" : "");
      select.appendChild(option);
    }
    if (keys.some((key) => key.id === chosen)) select.value = chosen;
    $("key-status").textContent = keys.length + (keys.length === 1 ? " named key" : " named keys");
    document.body.dataset.keysLoaded = "true";
    if (select.value) await loadKey();
  }

  // Every UTC day from the first to the last of \`rows\`, those without a row as zeros.
  function everyDay(rows) {
    if (rows.length === 0) return [];
    const byDay = new Map(rows.map((row) => [row.day, row]));
    const days = [];
    const last = Date.parse(rows[rows.length - 1].day + "T00:00:00Z");
    for (let time = Date.parse(rows[0].day + "T00:00:00Z"); time <= last && days.length < 400; time += 86400000) {
      const day = new Date(time).toISOString().slice(0, 10);
      days.push(byDay.get(day) || { day, calls: 0, rejected: 0, chars: 0, tokens_in: 0, tokens_out: 0 });
    }
    return days;
  }

  const metrics = {
    calls: { unit: units.calls, yTitle: "calls", parts: [
      ["bar-accepted", "calls accepted", (row) => row.calls - row.rejected],
      ["bar-rejected", "calls rejected", (row) => row.rejected],
    ] },
    chars: { unit: units.chars, yTitle: "characters (code points)", parts: [
      ["bar-chars", "characters sent (provider check)", (row) => row.chars],
    ] },
    tokens: { unit: units.tokens, yTitle: "tokens", parts: [
      ["bar-tokens-in", "tokens in", (row) => row.tokens_in],
      ["bar-tokens-out", "tokens out", (row) => row.tokens_out],
    ] },
  };

  // One column per UTC day, its parts stacked, in the metric's unit.
  function plotUsage(rows) {
    const svg = $("usage-plot");
    const metric = metrics[$("usage-metric").value] || metrics.calls;
    const days = everyDay(rows);
    const total = (row) => metric.parts.reduce((sum, part) => sum + part[2](row), 0);
    svg.dataset.metric = $("usage-metric").value;
    const { box, y, marks } = frame(svg, {
      max: Math.max(1, ...days.map(total)),
      whole: true,
      unit: metric.unit,
      yTitle: metric.yTitle,
      xTitle: days.length === 0 ? "UTC days (no calls in the last 30 days)" : "UTC days, oldest to newest (" + days.length + ", one column each)",
      first: days.length === 0 ? undefined : days[0].day,
      last: days.length < 2 ? undefined : days[days.length - 1].day,
      legend: metric.parts.map(([kind, text]) => ({ mark: barMark(kind), text })),
    });
    const slot = (box.right - box.left) / Math.max(1, days.length);
    const barWidth = Math.max(2, Math.min(48, slot * 0.7));
    days.forEach((row, index) => {
      const x = box.left + slot * (index + 0.5) - barWidth / 2;
      let base = 0;
      for (const [kind, text, value] of metric.parts) {
        const amount = value(row);
        if (amount <= 0) continue;
        const bar = svgElement(marks, "rect", { class: kind, x, width: barWidth, y: y(base + amount), height: y(base) - y(base + amount) });
        bar.dataset.day = row.day;
        bar.dataset.value = String(amount);
        svgElement(bar, "title", {}, row.day + ": " + grouped(amount) + " " + text);
        base += amount;
      }
    });
  }

  let usageRows = [];
  let keyLoads = 0;
  async function loadKey() {
    const id = $("key-id").value;
    if (!id) return;
    const load = ++keyLoads;
    $("key-status").textContent = "loading…";
    const [usage, limits] = await Promise.all([
      fetch("/promptgate/admin/usage?" + new URLSearchParams({ key: id }), { headers: adminHeaders() }),
      fetch("/promptgate/admin/keys/" + encodeURIComponent(id) + "/limits", { headers: adminHeaders() }),
    ]);
    const usageBody = await usage.json().catch(() => ({}));
    const limitsBody = await limits.json().catch(() => ({}));
    if (load !== keyLoads) return; // another key was chosen meanwhile
    if (!usage.ok || !limits.ok) {
      const refused = !usage.ok ? usageBody : limitsBody;
      $("key-status").textContent = (refused.error && refused.error.message) || "The admin API refused the request.";
      return;
    }
    usageRows = (usageBody.data || []).filter((row) => row.key_id === id).sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
    const table = $("usage");
    clear(table);
    for (const row of usageRows) {
      const tr = document.createElement("tr");
      tr.dataset.day = row.day;
      cell(tr, row.day);
      for (const value of [row.calls, row.rejected, row.chars, row.tokens_in, row.tokens_out]) cell(tr, grouped(value), "number");
      table.appendChild(tr);
    }
    plotUsage(usageRows);

    const windows = $("windows");
    clear(windows);
    for (const status of limitsBody.windows || []) {
      const tr = document.createElement("tr");
      tr.dataset.window = status.window;
      if (status.policy) tr.dataset.policy = status.policy;
      if (status.used >= status.limit) tr.className = "rejected";
      cell(tr, status.window);
      cell(tr, status.policy ? "policy " + status.policy : "this key");
      cell(tr, grouped(status.used) + " / " + grouped(status.limit), "number");
      cell(tr, status.reset_at ? utcTime(status.reset_at) : "as calls in flight end");
      windows.appendChild(tr);
    }
    if ((limitsBody.windows || []).length === 0) {
      const tr = document.createElement("tr");
      cell(tr, "no limits apply to this key");
      windows.appendChild(tr);
    }
    const days = usageRows.length;
    $("key-status").textContent = days + (days === 1 ? " day with calls" : " days with calls");
    document.body.dataset.keyLoaded = id;
  }

  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    void load();
  });
  $("key-filters").addEventListener("submit", (event) => {
    event.preventDefault();
    void loadKey();
  });
  $("key-id").addEventListener("change", () => void loadKey());
  $("usage-metric").addEventListener("change", () => plotUsage(usageRows));
  plot([]);
  plotUsage([]);
  if ($("key").value) void load();
})();
`;
