// The dashboard: one static page and its script, served by the gateway itself on Node and Workers (no build step,
// no CDN). The page holds no data: its script reads the call records from the admin API with the admin key the
// operator gives it (in the form, or as `#key=…` in the address, which never reaches a server), and writes every
// value as text, never as markup.

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
  svg { border: 1px solid #e2e5ea; background: #fbfcfd; }
  .target { stroke: #c98a00; stroke-dasharray: 4 3; } .limit { stroke: #b3261e; }
  .preflight { fill: #3366cc; } .provider { fill: #2e9e5b; }
  #legend span { margin-right: 1rem; font-size: .8rem; }
  #status { color: #5b6473; font-size: .85rem; }
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
<div id="legend"><span style="color:#3366cc">● preflight</span><span style="color:#2e9e5b">● provider check</span><span style="color:#c98a00">- - target</span><span style="color:#b3261e">— limit</span></div>
<svg id="plot" width="960" height="260" role="img" aria-label="Each call's checked totals against its target and limit"></svg>
<table>
  <thead><tr><th>time</th><th>ref</th><th>case</th><th>label</th><th>key</th><th>policy</th><th>surface</th><th>model</th><th>decision</th><th>code</th><th>validation</th></tr></thead>
  <tbody id="calls"></tbody>
</table>
<pre id="record" hidden></pre>
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

  // A named key's name, and its team in brackets where it has one; empty for an unnamed key or none.
  const keyOf = (record) => !record.key ? "" : record.key.team ? record.key.name + " (" + record.key.team + ")" : record.key.name;

  const cell = (row, text) => {
    const td = document.createElement("td");
    td.textContent = text === undefined || text === null ? "" : String(text);
    row.appendChild(td);
  };
  const validationOf = (record) =>
    record.validation === null || record.validation === undefined
      ? ""
      : !record.validation.valid ? "invalid" : record.repair ? "repaired" : "valid";

  function showRecord(record, row) {
    for (const other of document.querySelectorAll("tbody tr.selected")) other.classList.remove("selected");
    row.classList.add("selected");
    const shown = $("record");
    shown.hidden = false;
    shown.textContent = JSON.stringify(record, null, 2);
  }

  function plot(calls) {
    const svg = $("plot");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const width = Number(svg.getAttribute("width"));
    const height = Number(svg.getAttribute("height"));
    const pad = 24;
    const sizes = calls.flatMap((call) => [call.preflight, call.provider_check].filter(Boolean));
    const yMax = Math.max(1, ...sizes.map((size) => Math.max(size.conservative_total_chars, size.limit_chars)));
    svg.dataset.yMax = String(yMax);
    svg.dataset.pad = String(pad);
    const slot = (width - 2 * pad) / Math.max(1, calls.length);
    const y = (chars) => height - pad - (chars / yMax) * (height - 2 * pad);
    const add = (name, attributes) => {
      const element = document.createElementNS(svgNs, name);
      for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
      svg.appendChild(element);
      return element;
    };
    calls.forEach((call, index) => {
      const x = pad + slot * (index + 0.5);
      const size = call.provider_check || call.preflight;
      if (size) {
        for (const [kind, chars] of [["target", size.target_chars], ["limit", size.limit_chars]]) {
          add("line", { class: kind, x1: x - slot / 2 + 2, x2: x + slot / 2 - 2, y1: y(chars), y2: y(chars) });
        }
      }
      for (const [check, measured] of [["preflight", call.preflight], ["provider", call.provider_check]]) {
        if (!measured) continue;
        const point = add("circle", {
          class: check,
          cx: check === "preflight" ? x - 3 : x + 3,
          cy: y(measured.conservative_total_chars),
          r: 4,
        });
        point.dataset.ref = call.ref;
        point.dataset.check = check;
        point.dataset.chars = String(measured.conservative_total_chars);
        const title = document.createElementNS(svgNs, "title");
        title.textContent = call.ref + " " + check + ": " + measured.conservative_total_chars + " of " + measured.limit_chars;
        point.appendChild(title);
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
    const response = await fetch("/promptgate/admin/calls?" + query, { headers: { authorization: "Bearer " + key } });
    const body = await response.json();
    if (!response.ok) {
      $("status").textContent = (body.error && body.error.message) || "The admin API refused the request.";
      return;
    }
    // Oldest first, left to right, as the plot reads.
    const calls = query.has("case") ? body.calls : body.calls.slice().reverse();
    const rows = $("calls");
    while (rows.firstChild) rows.removeChild(rows.firstChild);
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
  }

  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    void load();
  });
  if ($("key").value) void load();
})();
`;
