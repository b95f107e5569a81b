// The stepper: one frame of one round at a time, drawn from the JSON the build writes (#stepper-data) with
// the markup of templates/widgets/stepper.html. Every string a frame prints comes from that JSON; this file
// only turns fractions into bar lengths. Without it, the page shows each profile's worked round in full.
(function () {
  "use strict";

  const PLAY_INTERVAL_MS = 1600;
  const SVG = "http://www.w3.org/2000/svg";
  const MARKS = { proposed: "?", accepted: "✓", rejected: "✗", replacement: "↻", dropped: "–", bonus: "+" };
  const WORDS = { accepted: "Accepted", rejected: "Rejected", replacement: "Replacement", bonus: "Bonus", dropped: "Dropped" };

  // --- Drawing: the same elements and classes as the template's macros. ---------------------------------

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
    el.append(...children.filter((c) => c !== null && c !== undefined && c !== ""));
    return el;
  }

  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    el.append(...children);
    return el;
  }

  const value = (text) => {
    const [n, d] = String(text).split("/");
    return d === undefined ? Number(n) : Number(n) / Number(d);
  };
  const pct = (x) => (x * 100).toFixed(2) + "%";
  const anchor = (x) => (x < 0.2 ? "start" : x > 0.8 ? "end" : "middle");
  const v = (name) => h("var", null, name);
  const tok = (text) => h("span", { class: "tok" }, text);

  function chipRow(chips, current) {
    return h("ol", { class: "chips stepper-chips", "aria-label": "Tokens so far" },
      ...chips.map(([token, state], i) => h("li",
        { class: "chip chip-" + state + (current && i === current - 1 && state === "proposed" ? " is-current" : "") },
        h("span", { class: "chip-token" }, token),
        h("span", { class: "chip-state" }, h("span", { class: "chip-mark", "aria-hidden": "true" }, MARKS[state]), " ",
          h("span", { class: "chip-word" }, state)))));
  }

  function verdict(kind, token, note) {
    return h("p", { class: "verdict verdict-" + kind, "data-verdict": kind },
      h("strong", null, h("span", { "aria-hidden": "true" }, MARKS[kind]), " " + WORDS[kind] + ":"),
      ...[].concat(token).flatMap((t) => [" ", tok(t)]), note ? " — " + note : "");
  }

  function pqTable(tokens, at, f) {
    const rows = tokens.map((t, i) => {
      const proposed = t === f.x;
      return h("tr", proposed ? { class: "proposal" } : null,
        h("th", { scope: "row" }, t, proposed ? " " : "", proposed ? h("span", { class: "tag" }, "proposed") : ""),
        h("td", null, at.p[i]), h("td", null, at.q[i]),
        h("td", { class: "pq-bars" }, s("svg", { "aria-hidden": "true", focusable: "false" },
          s("rect", { class: "bar-p", x: 0, y: 1, width: pct(value(at.p[i])), height: 7 }),
          s("rect", { class: "bar-q", x: 0.75, y: 10.75, width: pct(value(at.q[i])), height: 5.5 }))));
    });
    return h("table", { class: "pq-table" },
      h("caption", { class: "visually-hidden" }, "Target p and draft q at position " + f.pos),
      h("thead", null, h("tr", null, h("th", { scope: "col" }, "Token"), h("th", { scope: "col" }, v("p")),
        h("th", { scope: "col" }, v("q")), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Bars")))),
      h("tbody", null, ...rows));
  }

  function uLine(f) {
    const a = value(f.a), u = value(f.u), at = (x) => pct(0.04 + 0.92 * x);
    return [
      s("svg", { class: "u-line", "data-u-line": "", role: "img", "aria-label": "Number line from 0 to 1: threshold " + f.a + ", u = " + f.u },
        s("rect", { class: "ul-keep", x: "4%", y: 16, width: pct(0.92 * a), height: 8 }),
        s("rect", { class: "ul-reject", x: at(a), y: 16, width: pct(0.92 * (1 - a)), height: 8 }),
        s("line", { class: "ul-tick", x1: at(a), x2: at(a), y1: 11, y2: 29 }),
        s("text", { x: at(a), y: 9, "text-anchor": anchor(a) }, f.a),
        s("text", { x: 0, y: 24 }, "0"),
        s("text", { x: "100%", y: 24, "text-anchor": "end" }, "1"),
        s("circle", { class: "ul-u", cx: at(u), cy: 20, r: 5 }),
        s("text", { class: "ul-u-label", x: at(u), y: 43, "text-anchor": anchor(u) }, "u = " + f.u)),
    ];
  }

  function drawLine(tokens, shares, uText, uLabel, chosen, name) {
    const u = value(uText);
    const parts = [];
    let low = 0;
    tokens.forEach((t, i) => {
      const share = value(shares[i]);
      if (!(share > 0)) return;
      parts.push(s("rect", { class: "dl-seg" + (t === chosen ? " is-drawn" : ""), x: pct(low), y: 14, width: pct(share), height: 12 }));
      if (share >= 0.08 || t === chosen) parts.push(s("text", { x: pct(low + share / 2), y: 10, "text-anchor": "middle" }, t));
      low += share;
    });
    return s("svg", { class: "draw-line", role: "img", "aria-label": name + " from 0 to 1 cut into each token's share; " + uLabel + " falls in " + chosen },
      ...parts,
      s("line", { class: "dl-u", x1: pct(u), x2: pct(u), y1: 12, y2: 30 }),
      s("text", { x: pct(u), y: 42, "text-anchor": anchor(u) }, uLabel));
  }

  function exactness(tokens, at, f) {
    const parts = [];
    let y = 0;
    tokens.forEach((t, i) => {
      const lo = value(at.min[i]), top = value(at.top[i]), q = value(at.q[i]);
      if (!(value(at.p[i]) > 0 || q > 0)) return;
      parts.push(s("text", { x: 0, y: y + 10 }, t),
        s("rect", { class: "bar-acc", x: pct(0.16), y: y + 1, width: pct(0.84 * lo), height: 7 }),
        s("rect", { class: "bar-res", x: pct(0.16 + 0.84 * lo), y: y + 1, width: pct(0.84 * top), height: 7 }),
        s("rect", { class: "bar-q", x: pct(0.16), y: y + 10.75, width: pct(0.84 * q), height: 3.5 }));
      y += 18;
    });
    return [
      h("p", { class: "draw-note" }, "Why the output stays exact: per token, acceptance gives min(", v("p"), ", ", v("q"), ") ",
        h("span", { class: "key key-acc" }), ", the residual tops up max(0, ", v("p"), " − ", v("q"), ") ", h("span", { class: "key key-res" }),
        ": together ", v("p"), " (", v("q"), " ", h("span", { class: "key key-q" }),
        " below). The replacement is drawn from the top-ups rescaled to sum to 1, the residual ", v("r"), ":"),
      s("svg", { class: "exact", height: y, role: "img",
        "aria-label": "At position " + f.pos + ", for every token, min(p, q) plus max(0, p − q) reaches p" }, ...parts),
    ];
  }

  function drawFrame(data, profile, round, fi) {
    const f = round.frames[fi];
    const tokens = data.tokens;
    const el = h("div", { class: "frame frame-" + f.kind + " is-current", id: f.id, tabindex: "-1", "aria-labelledby": f.id + "-title" },
      h("h3", { class: "frame-title", id: f.id + "-title" },
        h("span", { class: "frame-count" }, "Frame " + (fi + 1) + " of " + round.frames.length), " " + f.title),
      chipRow(f.chips, f.kind === "verify" ? f.pos : null));
    const at = f.pos ? profile.positions[f.pos - 1] : null;
    if (f.kind === "propose") {
      el.append(h("p", null, "The draft samples all " + round.proposals.length +
        " proposals before any is checked. The target checks them in order, in one pass."));
    } else if (f.kind === "verify") {
      el.append(pqTable(tokens, at, f), h("p", { class: "evidence" }, f.evidence));
      if (f.u !== null) el.append(...uLine(f));
      el.append(verdict(f.verdict, f.x, f.note));
      if (f.verdict === "rejected") {
        el.append(...exactness(tokens, at, f),
          drawLine(tokens, at.r, f.ru, "u′ = " + f.ru, f.rep, "The residual"),
          verdict("replacement", f.rep));
      }
    } else if (f.kind === "bonus") {
      el.append(h("p", { class: "draw-note" }, "Every proposal passed, so the same target pass gives one more token, drawn from ",
        v("p"), " at position " + f.pos + ":"),
        drawLine(tokens, at.p, f.bu, "u = " + f.bu, f.b, "The target's p"),
        verdict("bonus", f.b));
    } else {
      el.append(h("p", null, round.summary));
      if (f.dropped.length) el.append(verdict("dropped", f.dropped, "proposed after the rejection, never checked."));
    }
    return el;
  }

  // --- The address: a frame's id, read without ever throwing on a malformed one. ------------------------

  function hashId() {
    const raw = window.location.hash.slice(1);
    if (raw.length > 200) return ""; // no frame id is this long
    try {
      return decodeURIComponent(raw);
    } catch (err) {
      return raw; // "#%" and the like: not a frame, but not an error either
    }
  }

  // --- The widget. ------------------------------------------------------------------------------------

  function initStepper(root) {
    const dataEl = root.querySelector("#stepper-data");
    let data;
    try {
      data = JSON.parse(dataEl.textContent);
    } catch (err) {
      data = {};
    }
    const profiles = data.profiles;
    if (!profiles || !profiles.length) {
      root.classList.add("is-static"); // nothing to step through: show the worked rounds as written
      return;
    }

    const bar = root.querySelector("[data-stepper-bar]");
    const stage = root.querySelector("[data-stepper-stage]");
    const key = root.querySelector(".stepper-key");
    const status = root.querySelector("[data-stepper-status]");
    const select = root.querySelector("[data-round-select]");
    const note = root.querySelector("[data-rounds-note]");
    const profileButtons = Array.from(root.querySelectorAll("button[data-profile]"));
    const action = (name) => root.querySelector('[data-action="' + name + '"]');
    const prev = action("prev");
    const next = action("next");
    const play = action("play");
    const state = { p: 0, r: 0, f: 0 };
    const where = new Map();
    let timer = null;

    profiles.forEach((p, pi) =>
      p.rounds.forEach((r, ri) => r.frames.forEach((f, fi) => where.set(f.id, [pi, ri, fi])))
    );

    const current = () => {
      const profile = profiles[state.p];
      const round = profile.rounds[state.r];
      return { profile, round, frame: round.frames[state.f] };
    };

    function fillRounds() {
      const { profile } = current();
      select.replaceChildren(...profile.rounds.map((r, i) => new Option(r.choice, String(i))));
      if (note) note.textContent = profile.note;
      select.value = String(state.r);
    }

    // Bring the frame (and the key just above it) into view below the sticky bar when part of it is out of
    // view: after a step, the reader sees the evidence and the verdict without scrolling.
    function reveal(el) {
      const top = bar.getBoundingClientRect().height;
      const box = el.getBoundingClientRect();
      if (box.top >= top && box.bottom <= window.innerHeight) return;
      const from = (key || el).getBoundingClientRect().top;
      window.scrollTo({ top: window.scrollY + from - top - 4, behavior: "instant" });
    }

    function render(show) {
      const { profile, round, frame } = current();
      const el = drawFrame(data, profile, round, state.f);
      stage.replaceChildren(el);
      profileButtons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.profile === profile.id)));
      select.value = String(state.r);
      prev.setAttribute("aria-disabled", String(state.f === 0));
      next.setAttribute("aria-disabled", String(state.f === round.frames.length - 1));
      status.textContent = "Frame " + (state.f + 1) + " of " + round.frames.length + ": " + frame.title;
      if (show) {
        el.classList.add("is-entering");
        reveal(el);
      }
      return el;
    }

    // Every step the reader takes puts the frame in the address, so it can be linked and the back button
    // steps back; Play only replaces the address, so one press of Back leaves the round it played.
    function remember(how) {
      const id = current().frame.id;
      if (hashId() === id) return;
      if (how === "replace") window.history.replaceState(null, "", "#" + id);
      else window.history.pushState(null, "", "#" + id);
    }

    function go(f, how) {
      const { round } = current();
      state.f = Math.max(0, Math.min(round.frames.length - 1, f));
      render(true);
      remember(how || "push");
    }

    function stop() {
      if (timer !== null) window.clearInterval(timer);
      timer = null;
      play.textContent = "Play";
      root.classList.remove("is-playing");
    }

    function start() {
      const { round } = current();
      if (state.f === round.frames.length - 1) go(0);
      play.textContent = "Pause";
      root.classList.add("is-playing");
      timer = window.setInterval(() => {
        if (state.f >= current().round.frames.length - 1) stop();
        else go(state.f + 1, "replace");
      }, PLAY_INTERVAL_MS);
    }

    function choose(pi, ri) {
      stop();
      const changed = pi !== state.p;
      state.p = pi;
      state.r = (ri + profiles[pi].rounds.length) % profiles[pi].rounds.length;
      state.f = 0;
      if (changed) fillRounds();
      render(true);
      remember("push");
    }

    function showFrameFromHash(focus) {
      const target = where.get(hashId());
      if (!target) return false;
      stop();
      const changedProfile = target[0] !== state.p;
      [state.p, state.r, state.f] = target;
      if (changedProfile || select.options.length === 0) fillRounds();
      const el = render(false);
      if (focus) {
        el.focus({ preventScroll: true });
        el.scrollIntoView({ block: "start" });
      }
      return true;
    }

    profileButtons.forEach((b) =>
      b.addEventListener("click", () => {
        const pi = profiles.findIndex((p) => p.id === b.dataset.profile);
        if (pi >= 0) choose(pi, 0);
      })
    );
    select.addEventListener("change", () => choose(state.p, Number(select.value)));
    action("another").addEventListener("click", () => choose(state.p, state.r + 1));
    action("reset").addEventListener("click", () => {
      stop();
      go(0);
    });
    prev.addEventListener("click", () => {
      stop();
      go(state.f - 1);
    });
    next.addEventListener("click", () => {
      stop();
      go(state.f + 1);
    });
    play.addEventListener("click", () => (timer === null ? start() : stop()));
    root.addEventListener("keydown", (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      if (event.target instanceof HTMLSelectElement || event.target instanceof HTMLInputElement) return;
      if (event.key === "ArrowRight") {
        stop();
        go(state.f + 1);
        event.preventDefault();
      } else if (event.key === "ArrowLeft") {
        stop();
        go(state.f - 1);
        event.preventDefault();
      }
    });
    window.addEventListener("hashchange", () => showFrameFromHash(true));
    window.addEventListener("popstate", () => {
      if (showFrameFromHash(false)) return;
      stop();
      [state.p, state.r, state.f] = [0, 0, 0];
      fillRounds();
      render(false);
    });

    // The page was painted as this leaves it (the controls, and the frame drawn below as the page wrote it),
    // so nothing on screen moves here.
    root.querySelector("[data-stepper-static]").remove(); // its frames are drawn one at a time from here on
    root.classList.add("is-enhanced");
    fillRounds();
    if (!showFrameFromHash(true)) render(false);
  }

  function init() {
    document.querySelectorAll("[data-stepper]").forEach(initStepper);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
