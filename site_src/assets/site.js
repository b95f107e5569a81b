// Progressive enhancement for the pages: the Positions tabs, too-wide inline formulas (the stepper is
// stepper.js). Every table is already in the HTML; this file only chooses what shows.
(function () {
  "use strict";

  function initTabs(root) {
    const list = root.querySelector("[data-tablist]");
    const panels = Array.from(root.querySelectorAll(".tab-panel")).filter((p) => p.parentElement === root);
    if (!list || panels.length < 2) return;

    const tabs = panels.map((panel) => {
      // the page writes each panel's button (so nothing moves when this runs); made here where it does not
      const tab = document.getElementById(panel.id + "-tab") || document.createElement("button");
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

  // The what-if editor moved from the toy data page to its own page: a link made before the move
  // (positions.html#what-if=...) opens the same state there.
  function forwardWhatIfLink() {
    if (!/\/positions\.html$/.test(window.location.pathname) || !window.location.hash.startsWith("#what-if=")) return false;
    window.location.replace("what-if.html" + window.location.hash);
    return true;
  }

  // A side menu taller than the screen scrolls by itself (style.css): it opens with this page's own entry in
  // view. Only the menu scrolls, never the page.
  function showOwnEntry() {
    const here = document.querySelector('.nav-disclosure [aria-current="page"]');
    const menu = here && here.closest(".nav-disclosure");
    if (!menu || menu.scrollHeight <= menu.clientHeight) return;
    const below = here.getBoundingClientRect().bottom - menu.getBoundingClientRect().bottom;
    if (below > 0) menu.scrollTop += below + here.offsetHeight;
  }

  function init() {
    if (forwardWhatIfLink()) return;
    showOwnEntry();
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
