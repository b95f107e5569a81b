// The block stepper: one block-verified round, one frame at a time, drawn from the JSON the build writes
// (#block-stepper-data) with the markup of templates/widgets/block-stepper.html. Every string comes from that
// JSON (generator/render/beyond_view.py); this file computes nothing, it only plays frames. Without it, the
// page shows the whole round as a table.
(function () {
  "use strict";

  const MARKS = { proposed: "?", accepted: "✓", rejected: "✗", replacement: "↻", dropped: "–", bonus: "+" };

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
    el.append(...children.filter((c) => c !== null && c !== undefined && c !== ""));
    return el;
  }

  function drawFrame(f) {
    const parts = [
      h("h3", { class: "frame-title" }, h("span", { class: "frame-count" }, "Frame " + f.number + " of " + f.count), " " + f.title),
      h("ol", { class: "chips stepper-chips", "aria-label": "Tokens so far" },
        ...f.chips.map(([token, state], i) => h("li",
          { class: "chip chip-" + state + (f.current && i === f.current - 1 ? " is-current" : "") },
          h("span", { class: "chip-token" }, token),
          h("span", { class: "chip-state" }, h("span", { class: "chip-mark", "aria-hidden": "true" }, MARKS[state]), " ",
            h("span", { class: "chip-word" }, state))))),
      h("p", { class: "verdict verdict-" + f.verdict[0], "data-verdict": f.verdict[0] },
        h("strong", null, h("span", { "aria-hidden": "true" }, MARKS[f.verdict[0]]), " " + f.verdict[1])),
    ];
    if (f.rows.length) {
      parts.push(h("table", { class: "pq-table block-rows" }, h("tbody", null,
        ...f.rows.map(([label, value]) => h("tr", null, h("th", { scope: "row" }, label), h("td", null, value))))));
    }
    for (const note of f.notes) parts.push(h("p", { class: "draw-note" }, note));
    return h("div", { class: "frame is-current" }, ...parts);
  }

  function init(root) {
    const script = root.querySelector("#block-stepper-data");
    const stage = root.querySelector("[data-stepper-stage]");
    let data = null;
    try {
      data = JSON.parse(script.textContent);
    } catch (e) {
      data = null;
    }
    if (!stage || !data || !Array.isArray(data.frames) || !data.frames.length) {
      root.classList.add("is-static"); // nothing to play: show the round as the table written for reading without it
      return;
    }
    const frames = data.frames;
    const status = root.querySelector("[data-stepper-status]");
    const button = (name) => root.querySelector('[data-action="' + name + '"]');
    const prev = button("prev"), next = button("next"), reset = button("reset");
    let at = 0;

    function show(i, announce) {
      at = Math.max(0, Math.min(frames.length - 1, i));
      stage.replaceChildren(drawFrame(frames[at]));
      prev.setAttribute("aria-disabled", at === 0 ? "true" : "false");
      next.setAttribute("aria-disabled", at === frames.length - 1 ? "true" : "false");
      if (announce && status) status.textContent = "Frame " + (at + 1) + " of " + frames.length + ": " + frames[at].title + ". " + frames[at].verdict[1];
    }

    prev.addEventListener("click", () => show(at - 1, true));
    next.addEventListener("click", () => show(at + 1, true));
    reset.addEventListener("click", () => show(0, true));
    root.addEventListener("keydown", (event) => {
      if (event.target.closest("input, select, textarea")) return;
      if (event.key === "ArrowRight") { show(at + 1, true); event.preventDefault(); }
      else if (event.key === "ArrowLeft") { show(at - 1, true); event.preventDefault(); }
    });
    root.classList.add("is-enhanced");
    show(0, false);
  }

  function start() {
    document.querySelectorAll("[data-block-stepper]").forEach(init);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
