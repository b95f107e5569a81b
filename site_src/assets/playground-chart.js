// The distribution check's chart for one position: per character a solid bar for the target's probability p,
// a dot for the speculative histogram and an open square for the target alone's, with the numbers in a table.
// A classic script (global PlaygroundChart), so the page also works from file://.
(function () {
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

const { visible, spoken, el } = window.PlaygroundText;
const fixed = (x, digits) => window.Decimals.fixed(Number(x), digits);
const chars = (text) => Array.from(text);

// A round number of steps for an axis from 0 to top: 0.05, 0.1, 0.2, 0.25 or 0.5 apart.
function tickStep(top) {
  for (const step of [0.05, 0.1, 0.2, 0.25, 0.5]) if (top / step <= 5) return step;
  return 1;
}

// The distribution check's chart, drawn at the width it is shown at (one unit a CSS pixel, so its text
// is as large on a phone as on a laptop): per character a solid bar for the target's probability p,
// a dot for the speculative histogram and an open square for the target alone's histogram.
function barChart(result, vocab, samples, width, position) {
  const plotLeft = 44;
  const plotRight = 8;
  const room = Math.max(200, width) - plotLeft - plotRight;
  const most = Math.max(3, Math.min(10, Math.floor(room / 30) - 1));  // bands at least 30 px wide
  const order = result.exact.map((p, i) => [p, i]).sort((a, b) => b[0] - a[0]);
  const shown = order.slice(0, most).map(([, i]) => i);
  const rest = order.slice(most).map(([, i]) => i);
  const bars = shown.map((i) => ({
    label: visible(vocab[i]), spoken: spoken(vocab[i]),
    spec: result.spec[i] / samples, alone: result.alone[i] / samples, exact: result.exact[i],
  }));
  const sum = (arr) => rest.reduce((s, i) => s + arr[i], 0);
  if (rest.length) {
    bars.push({
      label: "rest", spoken: "every other character",
      spec: sum(result.spec) / samples, alone: sum(result.alone) / samples, exact: sum(result.exact),
    });
  }
  const highest = Math.max(...bars.map((b) => Math.max(b.spec, b.alone, b.exact)), 0.01);
  const step = tickStep(highest);
  const top = Math.ceil(highest / step - 1e-9) * step;
  const plotTop = 10;
  const plotHeight = 150;
  const bottom = plotTop + plotHeight;
  const svgWidth = plotLeft + room + plotRight;
  const band = room / bars.length;
  const y = (v) => bottom - (v / top) * plotHeight;
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${svgWidth} ${bottom + 44}`);
  svg.setAttribute("width", String(svgWidth));
  svg.setAttribute("height", String(bottom + 44));
  svg.setAttribute("class", "pg-chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Next-character probabilities of the target as bars, with the two histograms as marks on them; the table below gives the numbers.");
  const shape = (name, attrs, text) => {
    const node = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    svg.append(node);
    return node;
  };
  for (let v = 0; v <= top + 1e-9; v += step) {
    const ty = y(v);
    shape("line", { x1: plotLeft, x2: plotLeft + room, y1: ty, y2: ty, class: v === 0 ? "pg-axis" : "pg-grid" });
    shape("text", { x: plotLeft - 6, y: ty + 4, "text-anchor": "end", class: "pg-tick" }, fixed(v, step < 0.1 ? 2 : 1));
  }
  shape("line", { x1: plotLeft, x2: plotLeft, y1: plotTop, y2: bottom, class: "pg-axis" });
  shape("text", { x: plotLeft, y: bottom + 40, class: "pg-tick" }, `character ${position} (share of draws or probability)`);
  bars.forEach((b, n) => {
    const x = plotLeft + n * band;
    const h = (b.exact / top) * plotHeight;
    shape("rect", { x: x + band * 0.2, y: bottom - h, width: band * 0.6, height: h, class: "pg-bar-exact" });
    const r = Math.min(5, band * 0.14);
    shape("circle", { cx: x + band * 0.36, cy: y(b.spec), r, class: "pg-mark-spec" });
    shape("rect", { x: x + band * 0.64 - r, y: y(b.alone) - r, width: 2 * r, height: 2 * r, class: "pg-mark-alone" });
    // a character in the larger monospace; "rest" in the smaller type of the axis, to fit its band
    const words = chars(b.label).length > 1;
    shape("text", { x: x + band / 2, y: bottom + 18, "text-anchor": "middle", class: words ? "pg-tick" : "pg-label" }, b.label);
  });
  const table = el("table", { class: "pg-table" });
  table.append(el("caption", { text: `Character ${position}: shares of ${samples.toLocaleString("en")} draws each way` }));
  const head = el("tr");
  for (const h of ["Character", "Speculative", "Target alone", "p (exact)"]) {
    head.append(el("th", { scope: "col", text: h }));
  }
  table.append(el("thead", {}, head));
  const body = el("tbody");
  for (const b of bars) {
    const row = el("tr");
    row.append(el("th", { scope: "row", text: b.label, title: b.spoken }));
    for (const v of [b.spec, b.alone, b.exact]) row.append(el("td", { text: fixed(v, 3) }));
    body.append(row);
  }
  table.append(body);
  return { svg, table };
}

window.PlaygroundChart = { barChart };
})();
