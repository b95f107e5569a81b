// The what-if editor: the reader edits the target's and the draft's rows, the proposals and the
// cost model, and every number is recomputed exactly (WhatIfCore, loaded first). Every decimal is
// printed by decimals.js, the rule the pages' Python filters use; what-if-view.js draws the pieces.
// The whole state lives in the URL fragment (#what-if=...). The page is complete without this
// script; it only adds the editor and the closed-form calculator.
(function () {
  "use strict";

  const W = window.WhatIfCore;
  const D = window.Decimals;
  const V = window.WhatIfView;
  const { el, readout, number, bar, sizeBars } = V || {};
  const decimal = (f, digits = 2) => D.fixed(f, digits);
  const times = (f) => D.times(f, 2);
  const ANNOUNCE_DELAY_MS = 600;

  function init(root) {
    const dataEl = document.getElementById("what-if-data");
    if (!W || !D || !V || !dataEl) return;
    let data;
    try {
      data = JSON.parse(dataEl.textContent);
    } catch (err) {
      return; // the static tables stay as they are
    }
    const app = root.querySelector("[data-what-if-app]");
    const part = (name) => root.querySelector(`[data-wi="${name}"]`);
    const ui = {
      profile: part("profile"), k: part("k"), draftStep: part("draft-step"), verifyStep: part("verify-step"),
      step: part("step"), error: part("error"), errorText: part("error-text"), fix: part("fix"),
      results: part("results"), exact: part("exact"), positionButtons: part("position-buttons"),
      panel: part("position-panel"), acceptBars: part("accept-bars"), summary: part("summary"),
      roundBars: part("round-bars"), link: part("link"), live: part("live"),
      calcAlpha: part("calc-alpha"), calcK: part("calc-k"), calcC: part("calc-c"),
      calcAlphaValue: part("calc-alpha-value"), calcKValue: part("calc-k-value"), calcCValue: part("calc-c-value"),
      calcSummary: part("calc-summary"), calcCurve: part("calc-curve"), calcCaption: part("calc-caption"),
      calcUseEditor: part("calc-use-editor"), calcCompare: part("calc-compare"),
    };
    const defaultTokens = data.tokens;

    let working = null; // the document as the inputs show it: strings, possibly invalid
    let valid = null; // the last valid state, typed
    let results = null; // compute(valid)
    let position = 0; // the row the panel shows: 0 .. positions (the last is the bonus row)
    let announceTimer = null;
    let lastEdit = null; // { which, row, col } of the cell the reader last typed in: a rebalance keeps it
    let offer = null; // { which, row, keep, next } the Rebalance button applies

    const copy = (doc) => JSON.parse(JSON.stringify(doc));
    const positions = () => working.draft.length;
    const stepFraction = () => W.parseFraction(ui.step.value);

    function documentFrom(doc) {
      const out = copy(doc);
      if (out.tokens === undefined) out.tokens = defaultTokens.slice();
      if (out.k === undefined) out.k = out.draft.length;
      return out;
    }

    function announce(text) {
      window.clearTimeout(announceTimer);
      announceTimer = window.setTimeout(() => {
        ui.live.textContent = text;
      }, ANNOUNCE_DELAY_MS);
    }

    // The one sentence that says what is wrong (or nothing), and the results dimmed while the
    // numbers they show are not the ones in the cells. About a cost, it stands under the cost fields
    // and that field is marked invalid; about anything else, right after the cells.
    function showError(sentence, { stale = false, fix = null, field = null } = {}) {
      const costs = { draft_step: ui.draftStep, verify_step: ui.verifyStep };
      for (const [key, input] of Object.entries(costs)) input.setAttribute("aria-invalid", String(key === field));
      const cells = ui.panel.querySelector(".wi-scroll");
      if (field) costs[field].closest(".wi-controls").after(ui.error);
      else if (cells && !ui.panel.contains(ui.error)) cells.after(ui.error);
      ui.error.hidden = !sentence;
      ui.errorText.textContent = sentence || "";
      if (field && sentence) ui.error.scrollIntoView({ block: "nearest" }); // just under the field, not the cells
      ui.results.classList.toggle("is-stale", stale);
      ui.calcCompare.classList.toggle("is-stale", stale);
      offer = fix;
      ui.fix.hidden = !fix;
      ui.fix.textContent = fix ? fix.label : "";
    }

    // --- the cells -------------------------------------------------------------------------------

    function cellInput(which, row, col) {
      const token = working.tokens[col];
      const where = which === "target" && row === positions() ? "the bonus row" : `position ${row + 1}`;
      return el("input", {
        type: "text", autocomplete: "off", spellcheck: "false", size: 5,
        class: "wi-cell", value: working[which][row][col],
        "data-which": which, "data-row": row, "data-col": col,
        "aria-label": `${which === "target" ? "Target p" : "Draft q"} of ${token} at ${where}`,
        "aria-describedby": "wi-step-help",
      });
    }

    function positionLabel(i) {
      if (i === positions()) return "Bonus row";
      return `Position ${i + 1}`;
    }

    function renderPositionButtons() {
      ui.positionButtons.replaceChildren();
      for (let i = 0; i <= positions(); i++) {
        const last = i === positions();
        const button = el("button", { type: "button", class: "toggle", "data-position": i, "aria-pressed": String(i === position) },
          last ? "Bonus row" : el("span", { class: "visually-hidden", text: "Position " }), last ? null : String(i + 1));
        button.addEventListener("click", () => {
          position = i; // the buttons stay, so keyboard focus stays on the one just pressed
          ui.positionButtons.querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(b === button)));
          renderPanel();
        });
        ui.positionButtons.append(button);
      }
    }

    function panelNote(i) {
      const k = working.k;
      if (i === positions() && k === positions()) {
        return "The bonus row: the target alone, drawn from only when every proposal was accepted.";
      }
      if (i < k) return "The draft proposes one token here (the round button beside a token picks it), and the target checks it in the same pass as the others.";
      if (i === k) return `With K = ${k}, this is where a round that accepts every proposal draws its bonus, from the target row alone; the draft row is not used.`;
      return `With K = ${k}, no round reaches this position; raise K to use it.`;
    }

    function renderPanel() {
      const i = position;
      const bonus = i === positions();
      const title = positionLabel(i);
      const table = el("table", { class: "wi-table" },
        el("caption", { class: "visually-hidden", text: `${title}: probabilities by token` }));
      // Short headings on a phone (the long words are hidden there), so every column fits in 390 px.
      const long = (text) => el("span", { class: "wi-long", text });
      const head = el("tr", {}, el("th", { scope: "col" }, "Token", bonus ? null : long(" (proposed)")),
        el("th", { scope: "col" }, long("Target "), el("var", { text: "p" })));
      if (!bonus) {
        head.append(el("th", { scope: "col" }, long("Draft "), el("var", { text: "q" })),
          el("th", { scope: "col" }, "min", el("span", { class: "wi-long" }, "(", el("var", { text: "p" }), ",", el("var", { text: "q" }), ")")),
          el("th", { scope: "col" }, el("abbr", { title: "Residual", class: "wi-short", text: "Res." }), long("Residual")));
      }
      table.append(el("thead", {}, head));
      const body = el("tbody");
      working.tokens.forEach((token, j) => {
        const name = el("th", { scope: "row", class: "wi-token" });
        const tr = el("tr", { "data-token": j }, name, el("td", {}, cellInput("target", i, j)));
        if (bonus) name.textContent = token;
        else {
          const radio = el("input", {
            type: "radio", name: "wi-proposal", value: j, "aria-label": `Propose ${token} at position ${i + 1}`,
            checked: working.proposals[i] === token,
          });
          radio.addEventListener("change", () => {
            working.proposals[i] = token;
            commit(`The draft now proposes ${token} at position ${i + 1}.`);
          });
          name.append(el("label", { class: "wi-propose" }, radio, el("span", { text: token })));
          tr.append(el("td", {}, cellInput("draft", i, j)),
            el("td", { class: "wi-derived", "data-derived": "overlap" }), el("td", { class: "wi-derived", "data-derived": "residual" }));
        }
        body.append(tr);
      });
      table.append(body);
      const foot = el("tr", {}, el("th", { scope: "row", text: "Sum" }), el("td", { class: "wi-derived", "data-sum": "target" }));
      if (!bonus) {
        foot.append(el("td", { class: "wi-derived", "data-sum": "draft" }),
          el("td", { class: "wi-derived", "data-sum": "overlap" }), el("td", { class: "wi-derived", "data-sum": "residual" }));
      }
      table.append(el("tfoot", {}, foot));

      const box = el("div", { class: "wi-scroll", role: "region", "aria-label": `${title}, editable` }, table);
      const picture = el("figure", { class: "wi-curve wi-position-figure" },
        el("div", { "data-wi": "position-picture" }),
        el("figcaption", { "data-wi": "position-caption" }));
      // The sentence on what is wrong comes right after the cells, in reading and in Tab order.
      ui.panel.replaceChildren(el("p", { class: "wi-note", text: panelNote(i) }), box, ui.error,
        V.moveControl(working.tokens, bonus, positionLabel(i).toLowerCase(), (which, a, b) => move(which, i, a, b)), picture);
      refreshPanel();
    }

    function move(which, i, a, b) {
      const step = stepFraction();
      const tokens = working.tokens;
      if (a === b) return "Choose two different tokens.";
      const from = W.parseFraction(working[which][i][a]);
      const to = W.parseFraction(working[which][i][b]);
      if (!from || !to || from === "zero" || to === "zero") return "Fix the cells of this row first: one is not a number.";
      if (W.cmp(from, step) < 0) {
        return `${tokens[a]} has only ${W.format(from)} in the ${which} row, less than the step ${W.format(step)}.`;
      }
      working[which][i][a] = W.format(W.sub(from, step));
      working[which][i][b] = W.format(W.add(to, step));
      for (const j of [a, b]) {
        const input = ui.panel.querySelector(`input[data-which="${which}"][data-col="${j}"]`);
        if (input) input.value = working[which][i][j];
      }
      const sentence = `Moved ${W.format(step)} from ${tokens[a]} to ${tokens[b]} in the ${which} row: ` +
        `${tokens[a]} ${working[which][i][a]}, ${tokens[b]} ${working[which][i][b]}.`;
      commit(sentence);
      return sentence;
    }

    // The cells the reader cannot type in: min(p, q), the residual and the sums of this row.
    function refreshPanel() {
      const i = position;
      const parse = (row) => row.map((s) => W.parseFraction(s));
      const ok = (row) => row.every((f) => f && f !== "zero");
      const t = parse(working.target[i]);
      const d = i < positions() ? parse(working.draft[i]) : null;
      const sumCell = (name, row) => {
        const cell = ui.panel.querySelector(`[data-sum="${name}"]`);
        if (!cell) return;
        if (!ok(row)) {
          cell.textContent = "?";
          return;
        }
        const total = W.sum(row);
        const good = W.eq(total, W.ONE);
        cell.replaceChildren(...(good ? [el("span", { text: "1" })] : number(total)));
        if (!good) cell.append(el("span", { class: "tag wi-bad", text: "not 1" }));
      };
      sumCell("target", t);
      drawPositionPicture(i, ok(t) ? t : null, d && ok(d) ? d : null);
      if (!d) return;
      sumCell("draft", d);
      const rows = ui.panel.querySelectorAll("tbody tr");
      const both = ok(t) && ok(d);
      const overlap = both ? t.map((p, j) => W.min(p, d[j])) : null;
      const res = both ? W.residual(t, d) : null;
      rows.forEach((tr, j) => {
        const put = (cell, f) => (f === null ? (cell.textContent = "?") : cell.replaceChildren(...number(f)));
        put(tr.querySelector('[data-derived="overlap"]'), overlap ? overlap[j] : null);
        const resCell = tr.querySelector('[data-derived="residual"]');
        if (both && res === null) resCell.textContent = "\u2014";
        else put(resCell, both ? res[j] : null);
        tr.classList.toggle("wi-proposed", working.proposals[i] === working.tokens[j]);
      });
      fitTable();
      const overlapSum = ui.panel.querySelector('[data-sum="overlap"]');
      if (overlap) overlapSum.replaceChildren(...number(W.sum(overlap)));
      else overlapSum.textContent = "?";
      ui.panel.querySelector('[data-sum="residual"]').textContent = !both ? "?" : res === null ? "\u2014" : "1";
    }

    const fitTable = () => V.fitBox(ui.panel.querySelector(".wi-scroll"));

    // The per-position picture (WhatIfView.positionChart), kept as it was while a cell is not a number.
    function drawPositionPicture(i, t, d) {
      const holder = ui.panel.querySelector('[data-wi="position-picture"]');
      const caption = ui.panel.querySelector('[data-wi="position-caption"]');
      if (!holder || !t || (i < positions() && !d)) return;
      const drafted = d !== null && i < positions();
      const chart = V.positionChart({
        tokens: working.tokens, t, d: drafted ? d : null, label: positionLabel(i),
        proposed: drafted ? working.tokens.indexOf(working.proposals[i]) : -1,
      });
      holder.replaceChildren(chart.svg);
      caption.textContent = chart.caption;
    }

    // --- the results -----------------------------------------------------------------------------

    function renderResults() {
      const r = results;
      const state = valid;
      ui.acceptBars.replaceChildren();
      r.acceptRates.forEach((a, i) => {
        const token = state.tokens[state.proposals[i]];
        const res = r.residuals[i];
        const resNode = el("span", { "data-readout": `residual-${i + 1}`, "data-exact": res === null ? "" : res.map(W.format).join(",") });
        if (res === null) resNode.textContent = "no residual: the draft matches the target here";
        else {
          resNode.append("residual: ");
          res.forEach((x, j) => {
            if (x.n === 0n) return;
            if (resNode.childNodes.length > 1) resNode.append(", ");
            resNode.append(`${state.tokens[j]} `, ...number(x));
          });
        }
        ui.acceptBars.append(el("li", { class: "wi-bar-row" },
          el("span", { class: "wi-bar-label" }, `Position ${i + 1}: `, el("var", { text: "\u03b1" }), " = ", readout(`accept-rate-${i + 1}`, a)),
          bar(a, "accepted share"),
          el("span", { class: "wi-small wi-bar-detail" },
            "proposes ", el("span", { class: "tok", text: token }), ", kept with probability ",
            readout(`proposal-accept-${i + 1}`, r.proposalAccept[i]), "; ", resNode)));
      });
      sizeBars(ui.acceptBars);

      ui.roundBars.replaceChildren();
      r.dist.forEach((p, n) => {
        const last = n === r.dist.length - 1;
        const what = last ? `${n + 1} tokens: every proposal accepted, plus the bonus` : n === 0
          ? "1 token: the first proposal rejected, its replacement kept"
          : `${n + 1} tokens: ${n} accepted, then a replacement`;
        ui.roundBars.append(el("li", { class: "wi-bar-row" },
          el("span", { class: "wi-bar-label" }, el("span", { text: `P(N = ${n + 1}) = ` }), readout(`p-n-${n + 1}`, p)),
          bar(p, what), el("span", { class: "wi-small wi-bar-detail", text: what })));
      });
      sizeBars(ui.roundBars);

      ui.summary.replaceChildren(
        el("dt", {}, "Expected tokens per round, ", el("var", { text: "E" }), "[", el("var", { text: "N" }), "]"),
        el("dd", {}, readout("expected-tokens", r.expected, { digits: 2 })),
        el("dt", {}, "Expected tokens per round if the same draft is checked as a block"),
        el("dd", {}, readout("block-expected-tokens", r.blockExpected, { digits: 2 })),
        el("dt", {}, "Round cost, in target steps (", el("var", { text: "K" }), el("var", { text: "c" }), " + verification)"),
        el("dd", {}, readout("round-cost", r.cost, { digits: 2 })),
        el("dt", { text: "Speedup over plain decoding" }),
        el("dd", {}, readout("speedup", r.speedup, { ratio: true, digits: 2 })));
      const fragment = W.fragmentFor(state, defaultTokens);
      ui.link.setAttribute("href", fragment);
      compareWithEditor();
      return fragment;
    }

    function summarySentence() {
      return `Expected tokens per round ${decimal(results.expected)}, exactly ${W.format(results.expected)}; ` +
        `speedup ${times(results.speedup)}.`;
    }

    // Validate what the inputs hold; use it if it is valid, otherwise say why and keep the last valid state.
    function commit(what, { keepAddress = false } = {}) {
      const result = W.validate(working, defaultTokens);
      refreshPanel();
      if (result.error) {
        const sentence = `The results below are for the last valid numbers, because ${result.error}.`;
        showError(sentence, { stale: true, fix: rebalanceOffer(result.fix), field: result.field });
        announce(sentence);
        return false;
      }
      showError("");
      valid = result.state;
      results = W.compute(valid);
      const fragment = renderResults();
      if (!keepAddress) {
        try {
          window.history.replaceState(null, "", fragment);
        } catch (err) {
          // some file:// pages refuse a changed address; the link above still carries the state
        }
      }
      if (what !== null) announce(`${what ? what + " " : ""}${summarySentence()}`);
      return true;
    }

    function renderEditor() {
      ui.k.replaceChildren();
      for (let k = 1; k <= positions(); k++) ui.k.append(el("option", { value: k, text: String(k), selected: k === working.k }));
      ui.draftStep.value = working.cost_model.draft_step;
      ui.verifyStep.value = working.cost_model.verify_step;
      position = Math.min(position, positions());
      renderPositionButtons();
      renderPanel();
    }

    function load(doc, what, options) {
      working = documentFrom(doc);
      lastEdit = null;
      renderEditor();
      return commit(what, options);
    }

    // The "Start from" list says so when the numbers came from a link rather than a shipped profile.
    function markLinkStart() {
      let option = ui.profile.querySelector('option[value=""]');
      if (!option) {
        option = el("option", { value: "", text: "The numbers in the link" });
        ui.profile.prepend(option);
      }
      ui.profile.value = "";
    }

    // A #what-if= fragment: loaded when valid; otherwise one sentence, and the current state stays.
    function fromFragment(initial) {
      const parsed = W.parseFragment(window.location.hash, defaultTokens);
      if (parsed === null) return false;
      if (parsed.error) {
        const sentence = `This link's what-if state was not loaded, because ${parsed.error}.`;
        showError(sentence, { stale: Boolean(W.validate(working, defaultTokens).error) }); // the cells stay as they were
        announce(sentence);
        if (!initial) ui.error.scrollIntoView({ block: "center" });
        return true;
      }
      load(W.toDocument(parsed.state, null), initial ? null : "Loaded the state from the link.", { keepAddress: initial });
      markLinkStart();
      return true;
    }

    // --- events ----------------------------------------------------------------------------------

    const where = (input) => ({ which: input.dataset.which, row: Number(input.dataset.row), col: Number(input.dataset.col) });

    ui.panel.addEventListener("input", (event) => {
      const input = event.target;
      if (!input.matches("input.wi-cell")) return;
      lastEdit = where(input);
      working[lastEdit.which][lastEdit.row][lastEdit.col] = input.value;
      commit("");
    });

    // Up and Down move one step into or out of the cell, and the same step out of or into the other
    // cells of its row (the largest first), so the row still sums to 1.
    ui.panel.addEventListener("keydown", (event) => {
      const input = event.target;
      if (!input.matches("input.wi-cell")) return;
      const at = where(input);
      if (event.key === "Enter" && offer && offer.which === at.which && offer.row === at.row) { // the Rebalance button
        event.preventDefault();
        applyOffer();
        return;
      }
      if (event.key !== "ArrowUp" && event.key !== "ArrowDown") return;
      const row = working[at.which][at.row].map((x) => W.parseFraction(x));
      if (!row.every((f) => f && f !== "zero" && f.n >= 0n && W.cmp(f, W.ONE) <= 0)) return; // fix the typing first
      event.preventDefault();
      const step = stepFraction();
      const value = row[at.col];
      row[at.col] = event.key === "ArrowUp" ? W.min(W.ONE, W.add(value, step)) : W.max(W.ZERO, W.sub(value, step));
      const balanced = W.rebalance(row, at.col);
      if (!balanced) return;
      lastEdit = at;
      setRow(at.which, at.row, balanced.row);
      commit(changeSentence(at.which, at.row, at.col, W.sub(row[at.col], value), balanced.changes));
    });

    // The cells of one row, written back as fractions, in the state and in the inputs on show.
    function setRow(which, i, row) {
      working[which][i] = row.map(W.format);
      if (i !== position) return;
      ui.panel.querySelectorAll(`input.wi-cell[data-which="${which}"]`).forEach((input) => {
        input.value = working[which][i][Number(input.dataset.col)];
      });
    }

    const rowWords = (which, i) => (which === "target" && i === positions() ? "the target's bonus row" : `the ${which} row at position ${i + 1}`);

    // What a rebalance does, "take 1/8 from mat" or "give 1/8 to the", and the row it does it in.
    function changeWords(changes, [take, give]) {
      const tokens = working.tokens;
      const list = (xs) => xs.map((c) => tokens[c.col]).join(" and ");
      const gave = changes.filter((c) => c.by.n > 0n);
      const took = changes.filter((c) => c.by.n < 0n);
      return [took.length ? `${take} ${W.format(W.sub(W.ZERO, W.sum(took.map((c) => c.by))))} from ${list(took)}` : "",
        gave.length ? `${give} ${W.format(W.sum(gave.map((c) => c.by)))} to ${list(gave)}` : ""].filter(Boolean).join(" and ");
    }

    function changeSentence(which, i, col, own, changes) {
      const tokens = working.tokens;
      const mine = own.n === 0n ? "" : own.n > 0n ? `added ${W.format(own)} to ${tokens[col]}`
        : `removed ${W.format(W.sub(W.ZERO, own))} from ${tokens[col]}`;
      const text = [mine, changeWords(changes, ["took", "gave"])].filter(Boolean).join(" and ");
      return text ? `${text[0].toUpperCase()}${text.slice(1)} in ${rowWords(which, i)}.` : "";
    }

    // A row whose cells are all fine but whose sum is not 1: one button makes it sum to 1, keeping the cell
    // the reader last typed in.
    function rebalanceOffer(fix) {
      if (!fix) return null;
      const row = working[fix.which][fix.row].map((x) => W.parseFraction(x));
      const keep = lastEdit && lastEdit.which === fix.which && lastEdit.row === fix.row ? lastEdit.col : -1;
      const balanced = W.rebalance(row, keep);
      if (!balanced) return null;
      return { ...fix, keep, next: balanced.row, changes: balanced.changes,
        label: `Rebalance: ${changeWords(balanced.changes, ["take", "give"])}` };
    }

    function applyOffer() {
      if (!offer) return;
      const { which, row, keep, next, changes } = offer;
      if (row !== position) {
        position = Math.min(row, positions());
        renderPositionButtons();
        renderPanel();
      }
      setRow(which, row, next);
      const focusCell = ui.panel.querySelector(`input.wi-cell[data-which="${which}"][data-col="${keep >= 0 ? keep : changes[0].col}"]`);
      commit(changeSentence(which, row, -1, W.ZERO, changes));
      if (focusCell) focusCell.focus();
    }

    ui.fix.addEventListener("click", applyOffer);

    ui.exact.addEventListener("change", () => {
      root.classList.toggle("wi-exact-on", ui.exact.checked);
      fitTable();
    });
    ui.k.addEventListener("change", () => {
      working.k = Number(ui.k.value);
      renderPanel();
      commit(`K is now ${working.k}.`);
    });
    for (const [input, key] of [[ui.draftStep, "draft_step"], [ui.verifyStep, "verify_step"]]) {
      input.addEventListener("input", () => {
        working.cost_model[key] = input.value;
        commit("");
      });
    }
    ui.profile.addEventListener("change", () => {
      const p = data.profiles.find((x) => x.id === ui.profile.value);
      position = 0;
      if (p) load(p.state, `Started again from ${p.name.toLowerCase()}.`);
    });
    window.addEventListener("hashchange", () => fromFragment(false));

    // --- the calculator --------------------------------------------------------------------------

    const calc = data.calculator;
    const hundredths = (input) => W.frac(BigInt(input.value), BigInt(calc.steps));
    // A share on the calculator's grid of 1/steps, by the one rounding rule (the build starts it the same way).
    const onGrid = (f) => D.rounded(W.mul(f, W.fromInt(calc.steps)), 0).toString();
    ui.calcAlpha.value = onGrid(W.parseFraction(calc.alpha));
    ui.calcC.value = onGrid(W.parseFraction(calc.draft_step));

    function renderCalculator(announceIt) {
      const [alpha, c] = [hundredths(ui.calcAlpha), hundredths(ui.calcC)];
      const k = Number(ui.calcK.value);
      const maxK = Number(ui.calcK.max);
      const curve = W.speedupCurve(alpha, c, maxK);
      const best = W.bestDraftLength(alpha, c, maxK);
      const ties = W.printedTies(curve, best, times), tied = V.tieWords(ties);
      ui.calcAlphaValue.textContent = decimal(alpha);
      ui.calcKValue.textContent = String(k);
      ui.calcCValue.textContent = decimal(c);
      ui.calcAlpha.setAttribute("aria-valuetext", decimal(alpha));
      ui.calcC.setAttribute("aria-valuetext", `${decimal(c)} of a target step`);
      const bestK = el("span", { class: "wi-readout", "data-readout": "calc-best-k", "data-exact": String(best), text: String(best) });
      ui.calcSummary.replaceChildren(
        el("dt", {}, "Speedup at ", el("var", { text: "K" }), ` = ${k}`),
        el("dd", {}, readout("calc-speedup", curve[k - 1], { ratio: true, digits: 2 })),
        el("dt", {}, "Best ", el("var", { text: "K" }), ` from 1 to ${maxK}`),
        el("dd", {}, bestK, " at ", readout("calc-best-speedup", curve[best - 1], { ratio: true, digits: 2 }),
          tied ? el("span", { "data-readout": "calc-ties", "data-exact": ties.join(" ") }, ` (a tie: ${tied})`) : ""));
      const caption = `Closed-form speedup for K from 1 to ${maxK} at \u03b1 = ${decimal(alpha)} and c = ${decimal(c)}; ` +
        `the best K, marked with a diamond, is ${best} (${times(curve[best - 1])})${tied && `; ${tied} to two decimals`}, and the ring marks K = ${k} ` +
        `(${times(curve[k - 1])}). The dashed line is a speedup of 1, no gain.`;
      ui.calcCaption.textContent = caption;
      ui.calcCurve.replaceChildren(V.curveChart(curve, best, k, caption));
      if (announceIt) announce(`At K = ${k} the closed form gives ${times(curve[k - 1])}; the best K is ${best}, at ${times(curve[best - 1])}${tied && `; ${tied}`}.`);
    }

    for (const input of [ui.calcAlpha, ui.calcK, ui.calcC]) input.addEventListener("input", () => renderCalculator(true));

    // The editor's round beside the closed form at its mean acceptance rate: equal exactly when every
    // position accepts alike and verification costs one target step, an approximation otherwise.
    const editorMean = () => W.div(W.sum(results.acceptRates), W.fromInt(results.acceptRates.length));

    function compareWithEditor() {
      if (!results) return;
      if (!W.eq(valid.cost.verifyStep, W.ONE)) {
        ui.calcCompare.replaceChildren("The closed form assumes verification costs one target step; set the editor's verification step to 1 to compare the two.");
        return;
      }
      // The numbers "Use the editor's numbers" hands the calculator, so the two print the same speedup.
      const { alpha, c, k } = editorForCalculator();
      const also = [W.eq(c, valid.cost.draftStep) ? "" : `c = ${decimal(c)}`, k === results.k ? "" : `K = ${k}`].filter(Boolean);
      const rounded = !W.eq(alpha, editorMean()) || also.length > 0;
      const closed = W.leviathanSpeedup(alpha, k, c);
      const alike = results.acceptRates.every((a) => W.eq(a, results.acceptRates[0]));
      const same = W.eq(closed, results.speedup);
      ui.calcCompare.replaceChildren(
        `The editor's round, K = ${results.k}: the closed form at its ${alike ? "" : "mean "}acceptance rate `,
        readout("calc-editor-alpha", alpha, { digits: 2 }),
        rounded ? ` (rounded to the calculator's steps of 1/${calc.steps}${also.length ? `, with ${also.join(" and ")}` : ""})` : "",
        " gives ",
        readout("calc-editor-closed-form", closed, { ratio: true, digits: 2 }),
        ", the exact round ",
        readout("calc-editor-speedup", results.speedup, { ratio: true, digits: 2 }),
        same ? ": the same number, since every position accepts alike." :
          `: ${alike ? "they differ" : "the rates differ by position, so the closed form is only an approximation"}.`);
    }

    function editorForCalculator() { // the editor's mean rate, draft step and K as the sliders hold them
      const grid = (f) => W.frac(BigInt(onGrid(W.min(f, W.ONE))), BigInt(calc.steps));
      const c = grid(W.div(valid.cost.draftStep, valid.cost.verifyStep));
      return { alpha: grid(editorMean()), c, k: Math.min(results.k, Number(ui.calcK.max)) };
    }

    ui.calcUseEditor.addEventListener("click", () => {
      const { alpha, c, k } = editorForCalculator();
      [ui.calcAlpha.value, ui.calcC.value, ui.calcK.value] = [onGrid(alpha), onGrid(c), String(k)];
      renderCalculator(true);
    });

    // --- start -----------------------------------------------------------------------------------

    load(data.profiles[0].state, null, { keepAddress: true });
    const fromLink = fromFragment(true);
    renderCalculator(false);
    root.querySelector(".what-if-nojs").hidden = true;
    app.hidden = false;
    root.classList.add("is-enhanced");
    fitTable();
    window.addEventListener("resize", fitTable);
    if (fromLink) V.revealFromLink(root, ui.error);
  }

  function start() {
    const root = document.getElementById("what-if");
    if (root) init(root);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
