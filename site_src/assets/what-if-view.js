// The what-if editor's pieces of page: elements, readouts (a short decimal first, the exact fraction
// on demand), bars, and its two charts, drawn from exact fractions (WhatIfCore) with every printed
// decimal from decimals.js. No state: what-if.js decides what to draw and when.
// A classic script (global WhatIfView), loaded after decimals.js and what-if-core.js.
(function () {
  "use strict";

  const W = window.WhatIfCore;
  const D = window.Decimals;
  const SVG_NS = "http://www.w3.org/2000/svg";

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  function svg(tag, attrs = {}, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const SHARE_DIGITS = 3; // probabilities and acceptance rates; E[N] and speedups take 2, as the pages print them

  // A readout: the short decimal as text, the exact fraction in data-exact and, when the reader asks
  // for exact fractions, beside the decimal.
  // A share that is exactly 0 or 1 prints as such (whole), not as 0.000.
  function readout(name, f, { digits = SHARE_DIGITS, ratio = false, whole = !ratio && digits === SHARE_DIGITS } = {}) {
    const exact = W.format(f);
    const node = el("span", { class: "wi-readout", "data-readout": name, "data-exact": exact },
      el("span", { class: "wi-dec", text: ratio ? D.times(f, digits) : whole && f.d === 1n ? exact : D.fixed(f, digits) }));
    if (f.d !== 1n) node.append(el("span", { class: "wi-frac", text: ` = ${exact}` }));
    return node;
  }

  // A computed cell of the table: the decimal, or the fraction in its place when exact fractions are on.
  function number(f) {
    if (f.d === 1n) return [el("span", { text: W.format(f) })]; // 0 and 1 need no decimals
    return [el("span", { class: "wi-dec", text: D.fixed(f, SHARE_DIGITS) }), el("span", { class: "wi-frac-only", text: W.format(f) })];
  }

  function bar(fraction, label) {
    const width = Math.max(0, Math.min(100, W.toNumber(fraction) * 100));
    return el("span", { class: "wi-track", "aria-hidden": "true", title: label },
      el("span", { class: "wi-fill", "data-width": width.toFixed(2) }));
  }

  // Inline styles are blocked by the page's CSP, so bar widths are set through the CSSOM.
  function sizeBars(container) {
    container.querySelectorAll(".wi-fill[data-width]").forEach((node) => {
      node.style.width = `${node.dataset.width}%`;
    });
  }

  // A table wider than its box (exact fractions on a narrow phone) scrolls in it, by keyboard too.
  function fitBox(box) {
    if (box && box.scrollWidth > box.clientWidth) box.tabIndex = 0;
    else if (box) box.removeAttribute("tabindex");
  }

  // The Move control: shift one step of probability from one token to another in one row; move(which,
  // from, to) does it and returns the sentence the control shows.
  function moveControl(tokens, bonus, where, move) {
    const id = (name) => `wi-move-${name}`;
    const rowSelect = el("select", { id: id("row") },
      el("option", { value: "target", text: "the target row" }),
      bonus ? null : el("option", { value: "draft", text: "the draft row" }));
    const tokenSelect = (name, chosen) => {
      const s = el("select", { id: id(name) });
      tokens.forEach((t, j) => s.append(el("option", { value: j, text: t, selected: j === chosen })));
      return s;
    };
    const from = tokenSelect("from", 0);
    const to = tokenSelect("to", 1);
    const button = el("button", { type: "button", "data-wi": "move" }, "Move one step");
    const status = el("p", { class: "wi-small wi-move-status", "data-wi": "move-status" });
    button.addEventListener("click", () => {
      status.textContent = move(rowSelect.value, Number(from.value), Number(to.value));
    });
    return el("div", { class: "wi-move" },
      el("div", { class: "wi-move-fields", role: "group", "aria-label": `Move probability at ${where}` },
        el("span", { class: "wi-field" }, el("label", { for: id("row"), text: "In" }), rowSelect),
        el("span", { class: "wi-field" }, el("label", { for: id("from"), text: "from" }), from),
        el("span", { class: "wi-field" }, el("label", { for: id("to"), text: "to" }), to),
        button),
      status);
  }

  // The target's and the draft's probability of every token at one position, side by side, in the site's
  // one encoding of p and q: target solid, draft outlined, the proposed token hatched. d null: the
  // target alone (the bonus row). Returns the SVG and its caption.
  function positionChart({ tokens, t, d, label, proposed }) {
    const drafted = d !== null;
    const width = 331;
    const height = 190;
    const left = 34;
    const right = 6;
    const top = 26;
    const bottom = 40;
    const values = [...t, ...(drafted ? d : [])].map((f) => W.toNumber(f));
    const yMax = Math.max(0.5, Math.ceil(Math.max(...values) * 4) / 4);
    const y = (v) => top + (1 - v / yMax) * (height - top - bottom);
    const band = (width - left - right) / tokens.length;
    const barWidth = Math.min(18, (band - 6) / (drafted ? 2 : 1));
    const described = tokens.map((tok, j) => `${tok}: p ${W.format(t[j])}${drafted ? `, q ${W.format(d[j])}` : ""}`).join("; ");
    const title = drafted ? `${label}: target p and draft q by token` : `${label}: target p by token`;
    const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "wi-chart", role: "img", "aria-label": `${title}. ${described}.` });
    const defs = svg("defs");
    const pattern = svg("pattern", { id: "wi-hatch", width: 5, height: 5, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
    pattern.append(svg("line", { x1: 0, y1: 0, x2: 0, y2: 5, class: "wi-hatch-line" }));
    defs.append(pattern);
    root.append(defs);
    for (let v = 0; v <= yMax + 1e-9; v += 0.25) {
      root.append(svg("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), class: "wi-grid" }));
      root.append(svg("text", { x: left - 5, y: y(v) + 4, class: "wi-axis-label", "text-anchor": "end" }, String(v)));
    }
    tokens.forEach((tok, j) => {
      const x0 = left + band * j + band / 2;
      const draftClass = j === proposed ? "wi-bar-draft wi-bar-proposed" : "wi-bar-draft";
      const bars = drafted ? [[t[j], "wi-bar-target", -barWidth], [d[j], draftClass, 0]] : [[t[j], "wi-bar-target", -barWidth / 2]];
      for (const [f, cls, dx] of bars) {
        const v = W.toNumber(f);
        root.append(svg("rect", { x: x0 + dx, y: y(v), width: barWidth, height: Math.max(0, y(0) - y(v)), class: cls }));
      }
      root.append(svg("text", { x: x0, y: height - bottom + 15, class: `wi-axis-label${j === proposed ? " wi-proposed-label" : ""}`, "text-anchor": "middle" }, tok));
      if (j === proposed) root.append(svg("text", { x: x0, y: height - bottom + 30, class: "wi-proposed-label", "text-anchor": "middle" }, "\u25b2 proposed"));
    });
    root.append(svg("rect", { x: left, y: 4, width: 12, height: 12, class: "wi-bar-target" }));
    root.append(svg("text", { x: left + 17, y: 14, class: "wi-axis-label" }, "target p"));
    if (drafted) {
      // The site's one encoding of p and q: target solid, draft outlined, the proposed token hatched.
      root.append(svg("rect", { x: left + 90, y: 5, width: 11, height: 11, class: "wi-bar-draft" }));
      root.append(svg("text", { x: left + 106, y: 14, class: "wi-axis-label" }, "draft q"));
      root.append(svg("rect", { x: left + 170, y: 5, width: 11, height: 11, class: "wi-bar-draft wi-bar-proposed" }));
      root.append(svg("text", { x: left + 186, y: 14, class: "wi-axis-label" }, "proposed"));
    }
    const caption = drafted
      ? `${title}: solid bars are the target, outlined bars the draft, hatched where it is the proposed token; where an outlined bar stands taller, the draft over-proposes that token and some of those proposals are rejected.`
      : `${title}: the distribution the bonus token is drawn from.`;
    return { svg: root, caption };
  }

  // The closed-form speedup for K = 1 .. max: the best K a diamond, the chosen K a ring.
  function curveChart(curve, best, chosen, label) {
    const width = 331;
    const height = 200;
    const left = 40;
    const right = 12;
    const top = 14;
    const bottom = 38;
    const values = curve.map((f) => W.toNumber(f));
    const yMax = Math.max(2, Math.ceil(Math.max(...values) * 1.15 * 2) / 2);
    const x = (k) => left + ((k - 1) / Math.max(1, curve.length - 1)) * (width - left - right);
    const y = (v) => top + (1 - v / yMax) * (height - top - bottom);
    const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "wi-chart", role: "img", "aria-label": label });
    const ticks = [];
    const stepY = yMax <= 3 ? 0.5 : yMax <= 6 ? 1 : 2;
    for (let v = 0; v <= yMax + 1e-9; v += stepY) ticks.push(v);
    for (const v of ticks) {
      root.append(svg("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), class: "wi-grid" }));
      root.append(svg("text", { x: left - 6, y: y(v) + 4, class: "wi-axis-label", "text-anchor": "end" }, `${v}\u00d7`));
    }
    root.append(svg("line", { x1: left, x2: width - right, y1: y(1), y2: y(1), class: "wi-one" }));
    for (let k = 1; k <= curve.length; k++) {
      if (k === 1 || (k % 5 === 0 && curve.length - k >= 3) || k === curve.length) {
        root.append(svg("text", { x: x(k), y: height - bottom + 16, class: "wi-axis-label", "text-anchor": "middle" }, String(k)));
      }
    }
    root.append(svg("text", { x: (left + width - right) / 2, y: height - 6, class: "wi-axis-label", "text-anchor": "middle" }, "draft length K"));
    root.append(svg("polyline", { points: values.map((v, i) => `${x(i + 1)},${y(v)}`).join(" "), class: "wi-line" }));
    values.forEach((v, i) => root.append(svg("circle", { cx: x(i + 1), cy: y(v), r: 2.5, class: "wi-point" })));
    const bx = x(best);
    const by = y(values[best - 1]);
    root.append(svg("path", { d: `M${bx} ${by - 7} L${bx + 7} ${by} L${bx} ${by + 7} L${bx - 7} ${by} Z`, class: "wi-best" }));
    const anchor = best > curve.length * 0.6 ? "end" : "start";
    root.append(svg("text", { x: bx + (anchor === "end" ? -10 : 10), y: Math.max(top + 10, by - 10), class: "wi-best-label", "text-anchor": anchor }, `best K = ${best}`));
    root.append(svg("circle", { cx: x(chosen), cy: y(values[chosen - 1]), r: 6, class: "wi-chosen" }));
    return root;
  }

  // Other K that print the best K's speedup: "K = 6 prints the same", "K = 5 and 6 print the same"; "" for none.
  function tieWords(ks) {
    if (!ks.length) return "";
    const list = ks.length === 1 ? String(ks[0]) : `${ks.slice(0, -1).join(", ")} and ${ks[ks.length - 1]}`;
    return `K = ${list} ${ks.length > 1 ? "print" : "prints"} the same`;
  }

  // A link shows the editor, or a broken link's one sentence; again as figures above it load (and grow),
  // until the reader scrolls or types.
  function revealFromLink(root, error) {
    const show = () => (error.hidden ? root.scrollIntoView({ block: "start" }) : error.scrollIntoView({ block: "center" }));
    let settled = false;
    for (const type of ["wheel", "touchstart", "keydown", "mousedown"]) window.addEventListener(type, () => (settled = true), { once: true, passive: true });
    document.querySelectorAll("img").forEach((img) => img.complete || img.addEventListener("load", () => settled || show(), { once: true }));
    show();
  }

  window.WhatIfView = { el, svg, readout, number, bar, sizeBars, fitBox, moveControl, positionChart, curveChart, tieWords, revealFromLink };
})();
