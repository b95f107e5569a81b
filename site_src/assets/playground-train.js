// Training the playground's character models in the browser, from the published corpus: the same counts
// as generator/playground/ngram.py's train_export, count for count (a digest of the counts is compared).
// Loaded only when a reader asks to train: by the Web Worker (playground-worker.js), or by the page
// itself where no worker can start. A classic script (global PlaygroundTrain) that node loads through
// module.exports, like playground-core.js, which it needs for the models it measures.

(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory(require("./playground-core.js"));
  else root.PlaygroundTrain = factory(root.PlaygroundCore);
})(typeof self !== "undefined" ? self : globalThis, function (Core) {
  "use strict";

  const { chars, createModel } = Core;

  function splitHeldOut(text, share = 0.1) {
    const all = chars(text);
    let cut = Math.floor(all.length * (1 - share));
    const newline = all.indexOf("\n", cut);
    cut = newline < 0 ? all.length : newline + 1;
    return { train: all.slice(0, cut), heldOut: all.slice(cut) };
  }

  function vocabularyOf(text) {
    return Array.from(new Set(chars(text))).sort((a, b) => a.codePointAt(0) - b.codePointAt(0)).join("");
  }

  // Training runs as generators that yield every CHUNK steps of a loop, with the share of their work
  // done, so that a caller decides when to pause: a Web Worker runs them straight through, reporting
  // progress; without a worker the page runs them in slices, yielding to the browser between slices.
  const CHUNK = 1 << 14;

  // Integer keys -> counts, spread over many small Maps: a Map that grows copies all its entries at once,
  // which in one large Map would hold the page's thread for a tenth of a second.
  class Counts {
    constructor() {
      this.maps = Array.from({ length: 64 }, () => new Map());
    }
    add(key, by) {
      const map = this.maps[key % 64];
      map.set(key, (map.get(key) || 0) + by);
    }
    get(key) {
      return this.maps[key % 64].get(key);
    }
    *entries() {
      for (const map of this.maps) yield* map;
    }
    *keys() {
      for (const map of this.maps) yield* map.keys();
    }
  }

  function* countGrams(codes, length, base) {
    const counts = new Counts();
    for (let i = 0; i + length <= codes.length; i++) {
      let key = 0;
      for (let j = 0; j < length; j++) key = key * base + codes[i + j];
      counts.add(key, 1);
      if (i % CHUNK === 0) yield i / codes.length;
    }
    return counts;
  }

  // The keys of a Counts in increasing order, as a typed array (sorted numerically, and sooner than an Array).
  function* sortedKeys(counts) {
    let size = 0;
    for (const map of counts.maps) size += map.size;
    const keys = new Float64Array(size);
    let n = 0;
    for (const map of counts.maps) {
      for (const key of map.keys()) keys[n++] = key;
      yield n / size;
    }
    return keys.sort();
  }

  function discounts(counts) {
    let n1 = 0;
    let n2 = 0;
    let n3 = 0;
    let n4 = 0;
    for (const c of counts) {
      if (c === 1) n1++;
      else if (c === 2) n2++;
      else if (c === 3) n3++;
      else if (c === 4) n4++;
    }
    if (Math.min(n1, n2, n3, n4) === 0) return [0.5, 1.0, 1.5];
    const y = n1 / (n1 + 2 * n2);
    const d = [1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3];
    return d.map((x, i) => Math.min(Math.max(x, 0.05), i + 1));
  }

  function decodeKey(key, length, vocab) {
    const base = vocab.length;
    const out = new Array(length);
    for (let j = length - 1; j >= 0; j--) {
      out[j] = vocab[key % base];
      key = Math.floor(key / base);
    }
    return out.join("");
  }

  // A generator's yields mapped from its own [0, 1] onto [from, to]; its return value passes through.
  function* scaled(steps, from, to) {
    let r = steps.next();
    while (!r.done) {
      yield from + (to - from) * r.value;
      r = steps.next();
    }
    return r.value;
  }

  // Runs a generator to its end at once; its return value.
  function finish(steps) {
    let r = steps.next();
    while (!r.done) r = steps.next();
    return r.value;
  }

  // Counts for context lengths 0 .. order - 1, pruned like the build's (ngram.train_export).
  function* trainExportSteps(trainChars, vocabText, order, minCount) {
    const index = new Map(chars(vocabText).map((c, i) => [c, i]));
    const codes = new Int32Array(trainChars.length);
    for (let i = 0; i < trainChars.length; i++) {
      codes[i] = index.get(trainChars[i]);
      if (i % CHUNK === 0) yield 0.05 * i / trainChars.length;
    }
    return yield* scaled(countExportSteps(codes, vocabText, order, minCount), 0.05, 1);
  }

  // trainExportSteps on the text as vocabulary indices (a typed array: no string per character to keep).
  function* countExportSteps(codes, vocabText, order, minCount) {
    const vocab = chars(vocabText);
    const base = vocab.length;
    if (base ** order > Number.MAX_SAFE_INTEGER) throw new Error("order too high for exact integer keys");
    const grams = [];
    // counting costs in proportion to the window length: g of order (order + 1) / 2 shares
    const share = (g) => (g * (g - 1)) / (order * (order + 1));
    for (let g = 1; g <= order; g++) grams[g] = yield* scaled(countGrams(codes, g, base), 0.05 + 0.65 * share(g), 0.05 + 0.65 * share(g + 1));
    const levels = [];
    for (let length = 0; length < order; length++) {
      yield 0.7 + (0.3 * length) / order;
      const raw = grams[length + 1];
      const occurrences = new Counts();
      let n = 0;
      const here = 0.7 + (0.3 * length) / order;
      for (const [key, count] of raw.entries()) {
        occurrences.add(Math.floor(key / base), count);
        if (++n % CHUNK === 0) yield here;
      }
      let pairs;
      if (length === order - 1) {
        pairs = raw;
      } else {
        pairs = new Counts();
        const modulus = base ** (length + 1);
        for (const key of grams[length + 2].keys()) {
          pairs.add(key % modulus, 1);
          if (++n % CHUNK === 0) yield here;
        }
      }
      const keys = yield* scaled(sortedKeys(pairs), here, here);
      const values = new Array(keys.length);
      for (let i = 0; i < keys.length; i++) {
        values[i] = pairs.get(keys[i]);
        if (++n % CHUNK === 0) yield here;
      }
      const levelDiscounts = discounts(values);
      const threshold = length ? minCount : 1;
      const contexts = [];
      const followers = [];
      const next = [];
      const counts = [];
      let last = -1;
      for (let i = 0; i < keys.length; i++) {
        if (++n % CHUNK === 0) yield here;
        const key = keys[i];
        const ctx = Math.floor(key / base);
        if ((occurrences.get(ctx) || 0) < threshold) continue;
        if (ctx !== last) {
          contexts.push(decodeKey(ctx, length, vocab));
          followers.push(0);
          last = ctx;
        }
        followers[followers.length - 1]++;
        next.push(vocab[key % base]);
        counts.push(values[i]);
      }
      levels.push({ contexts: contexts.join(""), followers, next: next.join(""), counts, discounts: levelDiscounts });
    }
    return { order, min_count: minCount, levels };
  }

  function trainExport(trainChars, vocabText, order, minCount) {
    return finish(trainExportSteps(trainChars, vocabText, order, minCount));
  }

  // FNV-1a (32-bit) over the counts in ngram.count_digest's canonical text form: the parts joined by "|",
  // each list of numbers joined by ",". Fed piece by piece (yielding between pieces), never as one string.
  function* digestSteps(exported) {
    const encoder = new TextEncoder();
    let h = 0x811c9dc5;
    const feed = (text) => {
      for (const byte of encoder.encode(text)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
    };
    function* text(value) {  // by code points, so that no surrogate pair is cut in two
      const all = chars(value);
      for (let i = 0; i < all.length; i += CHUNK) {
        feed(all.slice(i, i + CHUNK).join(""));
        yield 0;
      }
    }
    function* numbers(list) {
      for (let i = 0; i < list.length; i += CHUNK) {
        feed((i ? "," : "") + Array.prototype.join.call(list.slice(i, i + CHUNK), ","));
        yield 0;
      }
    }
    feed(`${exported.order}|${exported.min_count}`);
    for (const level of exported.levels) {
      feed("|");
      yield* text(level.contexts);
      feed("|");
      yield* numbers(level.followers);
      feed("|");
      yield* text(level.next);
      feed("|");
      yield* numbers(level.counts);
    }
    return h.toString(16).padStart(8, "0");
  }

  function countDigest(exported) {
    return finish(digestSteps(exported));
  }


  // Cross-entropy on held-out characters, each predicted from the text before it.
  function* bitsPerCharSteps(model, heldOutChars) {
    const index = new Map(model.vocab.map((c, i) => [c, i]));
    const width = model.order - 1;
    let total = 0;
    let n = 0;
    for (let i = 0; i < heldOutChars.length; i++) {
      if (i % (CHUNK / 4) === 0) yield i / heldOutChars.length;
      const x = index.get(heldOutChars[i]);
      if (x === undefined) continue;
      const context = heldOutChars.slice(Math.max(0, i - width), i).filter((c) => index.has(c));
      total -= Math.log2(model.row(context)[x]);
      n++;
    }
    return n ? total / n : 0;
  }

  function bitsPerChar(model, heldOutChars) {
    return finish(bitsPerCharSteps(model, heldOutChars));
  }

  // A pair trained from a corpus as the build trains it: the corpus split into code points, its vocabulary,
  // the last tenth held out, the draft then the target counted, each measured on the held-out text.
  // Yields the share of the work done; returns { vocab, exports, digests, bits }.
  function* trainPairSteps(text, orders) {
    const seen = new Set();
    let length = 0;
    for (const ch of text) {  // by code point, as chars() splits
      seen.add(ch);
      if (++length % CHUNK === 0) yield 0.02 * length / text.length;
    }
    const vocab = Array.from(seen).sort((a, b) => a.codePointAt(0) - b.codePointAt(0)).join("");
    const vocabChars = chars(vocab);
    const index = new Map(vocabChars.map((c, i) => [c, i]));
    const codes = new Int32Array(length);  // the text as vocabulary indices, held out part and all
    let i = 0;
    for (const ch of text) {
      codes[i] = index.get(ch);
      if (++i % CHUNK === 0) yield 0.02 + 0.03 * i / length;
    }
    let cut = Math.floor(length * 0.9);
    const newline = codes.indexOf(index.get("\n") ?? -1, cut);
    cut = newline < 0 ? length : newline + 1;
    const train = codes.subarray(0, cut);
    const heldOut = Array.from(codes.subarray(cut), (x) => vocabChars[x]);
    const out = { vocab, trainChars: train.length, exports: {}, digests: {}, bits: {} };
    const weight = orders.draft + orders.target;
    let from = 0.05;
    for (const name of ["draft", "target"]) {
      const span = (0.95 * orders[name]) / weight;
      const exported = yield* scaled(countExportSteps(train, vocab, orders[name], orders.min_count), from, from + 0.8 * span);
      out.exports[name] = exported;
      out.digests[name] = yield* scaled(digestSteps(exported), from + 0.8 * span, from + 0.8 * span);
      out.bits[name] = yield* scaled(bitsPerCharSteps(createModel(exported, vocab), heldOut), from + 0.8 * span, from + span);
      from += span;
    }
    return out;
  }


  return {
    splitHeldOut,
    vocabularyOf,
    trainExport,
    trainExportSteps,
    trainPairSteps,
    finish,
    countDigest,
    bitsPerChar,
  };
});
