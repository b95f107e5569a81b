// The playground's background thread, so the page stays responsive while it works. Two tasks:
// - training: the page posts { kind, orders }; this worker loads the training code and that corpus (plain
//   scripts beside this file), runs PlaygroundTrain.trainPairSteps and posts { progress } as it goes, then
//   { result } or { error };
// - the distribution check: the page posts { task: "check", kind, exports, job }; the worker loads that pair's
//   models (the build's file, or the exports of a pair trained in the browser), runs
//   PlaygroundCore.firstCharsSteps and posts { progress } and then { result } or { error }.
// The page falls back to doing the same work on its own thread, in slices, when no worker will start.
/* global importScripts, PlaygroundCore, PlaygroundTrain, PlaygroundCorpora, PlaygroundModels */
"use strict";
importScripts("playground-core.js");
self.window = self;  // the corpus and model scripts add themselves to window.PlaygroundCorpora / PlaygroundModels

function train({ kind, orders }) {
  importScripts("playground-train.js", `corpus/${kind}.js`);
  const steps = PlaygroundTrain.trainPairSteps(PlaygroundCorpora[kind], orders);
  let last = -1;
  let r = steps.next();
  while (!r.done) {
    if (r.value - last >= 0.005) {  // about two hundred messages in all
      self.postMessage({ progress: r.value });
      last = r.value;
    }
    r = steps.next();
  }
  // the counts travel as typed arrays whose memory moves to the page rather than being copied
  const buffers = [];
  for (const exported of Object.values(r.value.exports)) {
    for (const level of exported.levels) {
      level.followers = Int32Array.from(level.followers);
      level.counts = Int32Array.from(level.counts);
      buffers.push(level.followers.buffer, level.counts.buffer);
    }
  }
  self.postMessage({ result: r.value }, buffers);
}

function check({ kind, exports, job }) {
  if (!exports) importScripts(`playground-models-${kind}.js`);
  const { target, draft, vocab } = PlaygroundCore.loadModels(exports || PlaygroundModels[kind]);
  const steps = PlaygroundCore.firstCharsSteps({ target, draft, vocab, ...job, nextUniform: PlaygroundCore.mulberry32(job.seed) });
  let r = steps.next();
  while (!r.done) r = steps.next();
  self.postMessage({ result: r.value });
}

self.onmessage = (event) => {
  try {
    if (event.data.task === "check") check(event.data);
    else train(event.data);
  } catch (error) {
    self.postMessage({ error: String(error && error.message ? error.message : error) });
  }
};
