// Progressive enhancement for the pages: the frame stepper, the Positions tabs, too-wide inline formulas.
// Every frame and every table is already in the HTML; this file only chooses what shows.
(function () {
  "use strict";

  const PLAY_INTERVAL_MS = 1600;

  function initStepper(root) {
    const dataEl = document.getElementById("stepper-data");
    if (!dataEl) return;
    let data;
    try {
      data = JSON.parse(dataEl.textContent);
    } catch (err) {
      return; // the static frames stay readable
    }
    const profiles = data.profiles;
    if (!profiles || !profiles.length) return;

    const controls = root.querySelector("[data-stepper-controls]");
    const status = root.querySelector("[data-stepper-status]");
    const select = root.querySelector("[data-round-select]");
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
      select.replaceChildren(...profile.rounds.map((r, i) => new Option(r.label, String(i))));
      select.value = String(state.r);
    }

    function render() {
      const { profile, round, frame } = current();
      root.querySelectorAll(".stepper-profile").forEach((el) => {
        const on = el.dataset.profileId === profile.id;
        el.classList.toggle("is-current", on);
        el.querySelectorAll(".stepper-round").forEach((r) => {
          r.classList.toggle("is-current", on && r.dataset.roundId === round.id);
        });
      });
      root.querySelectorAll(".frame.is-current").forEach((el) => el.classList.remove("is-current"));
      const el = document.getElementById(frame.id);
      if (el) el.classList.add("is-current");
      profileButtons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.profile === profile.id)));
      select.value = String(state.r);
      prev.setAttribute("aria-disabled", String(state.f === 0));
      next.setAttribute("aria-disabled", String(state.f === round.frames.length - 1));
      status.textContent = "Frame " + (state.f + 1) + " of " + round.frames.length + ": " + frame.title;
    }

    // Every step the reader takes puts the frame in the address, so it can be linked and the back button
    // steps back; Play only replaces the address, so one press of Back leaves the round it played.
    function remember(how) {
      const id = current().frame.id;
      if (decodeURIComponent(window.location.hash.slice(1)) === id) return;
      if (how === "replace") window.history.replaceState(null, "", "#" + id);
      else window.history.pushState(null, "", "#" + id);
    }

    function go(f, how) {
      const { round } = current();
      state.f = Math.max(0, Math.min(round.frames.length - 1, f));
      render();
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

    function chooseProfile(pi) {
      stop();
      state.p = pi;
      state.r = 0;
      state.f = 0;
      fillRounds();
      render();
      remember("push");
    }

    function chooseRound(ri) {
      stop();
      state.r = (ri + profiles[state.p].rounds.length) % profiles[state.p].rounds.length;
      state.f = 0;
      render();
      remember("push");
    }

    function showFrameFromHash(focus) {
      const id = decodeURIComponent(window.location.hash.slice(1));
      const target = where.get(id);
      if (!target) return;
      stop();
      const changedProfile = target[0] !== state.p;
      [state.p, state.r, state.f] = target;
      if (changedProfile || select.options.length === 0) fillRounds();
      render();
      const el = document.getElementById(id);
      if (el && focus) {
        el.focus({ preventScroll: true });
        el.scrollIntoView({ block: "start" });
      }
    }

    profileButtons.forEach((b) =>
      b.addEventListener("click", () => {
        const pi = profiles.findIndex((p) => p.id === b.dataset.profile);
        if (pi >= 0) chooseProfile(pi);
      })
    );
    select.addEventListener("change", () => chooseRound(Number(select.value)));
    action("another").addEventListener("click", () => chooseRound(state.r + 1));
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
      if (where.has(decodeURIComponent(window.location.hash.slice(1)))) showFrameFromHash(false);
      else {
        stop();
        [state.p, state.r, state.f] = [0, 0, 0];
        fillRounds();
        render();
      }
    });

    root.classList.add("is-enhanced");
    controls.hidden = false;
    fillRounds();
    render();
    if (where.has(decodeURIComponent(window.location.hash.slice(1)))) showFrameFromHash(true);
  }

  function initTabs(root) {
    const list = root.querySelector("[data-tablist]");
    const panels = Array.from(root.querySelectorAll(".tab-panel")).filter((p) => p.parentElement === root);
    if (!list || panels.length < 2) return;

    const tabs = panels.map((panel) => {
      const tab = document.createElement("button");
      tab.type = "button";
      tab.id = panel.id + "-tab";
      tab.className = "tab";
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-controls", panel.id);
      tab.textContent = panel.dataset.tabLabel || panel.id;
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      panel.tabIndex = 0;
      list.append(tab);
      return tab;
    });

    function show(i, focus) {
      tabs.forEach((tab, j) => {
        const on = i === j;
        tab.setAttribute("aria-selected", String(on));
        tab.tabIndex = on ? 0 : -1;
        panels[j].hidden = !on;
      });
      if (focus) tabs[i].focus();
    }

    tabs.forEach((tab, i) => tab.addEventListener("click", () => show(i, false)));
    list.addEventListener("keydown", (event) => {
      const i = tabs.indexOf(document.activeElement);
      if (i < 0) return;
      const last = tabs.length - 1;
      const to = { ArrowRight: i === last ? 0 : i + 1, ArrowLeft: i === 0 ? last : i - 1, Home: 0, End: last }[event.key];
      if (to === undefined) return;
      event.preventDefault();
      show(to, true);
    });

    // A malformed or huge address (#%, #what-if=%, 100 KB) names no element: the tab on show stays.
    function showFromHash() {
      let id = "";
      try {
        id = window.location.hash.length <= 1000 ? decodeURIComponent(window.location.hash.slice(1)) : "";
      } catch (err) {
        id = ""; // not percent-encoded text: no element has this id
      }
      const target = id && document.getElementById(id);
      const i = target ? panels.findIndex((p) => p.contains(target)) : -1;
      if (i >= 0) {
        show(i, false);
        target.scrollIntoView({ block: "start" });
      }
      return i >= 0;
    }

    list.setAttribute("role", "tablist");
    list.hidden = false;
    root.classList.add("is-enhanced");
    window.addEventListener("hashchange", showFromHash);
    if (!showFromHash()) show(0, false);
  }

  // An inline formula wider than its column cannot wrap, so on a phone it would widen the whole
  // page; instead it scrolls in its own box, which takes focus so the keyboard can scroll it too.
  // (Display equations get such a box from the build.)
  function fitWideMath() {
    document.querySelectorAll(".math.inline").forEach((el) => {
      const column = el.closest("p, li, td, th, dd, dt, figcaption, blockquote, caption") || el.parentElement;
      el.classList.remove("is-wide");
      const wide = el.getBoundingClientRect().width > column.clientWidth;
      if (wide) {
        el.classList.add("is-wide");
        el.tabIndex = 0;
        el.setAttribute("role", "group");
        el.setAttribute("aria-label", "Equation");
      } else if (el.hasAttribute("tabindex")) {
        el.removeAttribute("tabindex");
        el.removeAttribute("role");
        el.removeAttribute("aria-label");
      }
    });
  }

  function init() {
    document.querySelectorAll("[data-stepper]").forEach(initStepper);
    document.querySelectorAll("[data-tabs]").forEach(initTabs);
    fitWideMath();
    let pending = false;
    window.addEventListener("resize", () => {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(() => { pending = false; fitWideMath(); });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
