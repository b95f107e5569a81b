// Trains one pair of the playground's models off the page's main thread, so the page stays responsive.
// The page posts { kind, orders }; this worker loads the core, the training code and that corpus (plain
// scripts beside this file), runs PlaygroundTrain.trainPairSteps and posts { progress } as it goes, then
// { result } or { error }.
/* global importScripts, PlaygroundTrain, PlaygroundCorpora */
"use strict";
importScripts("playground-core.js", "playground-train.js");
self.window = self;  // the corpus scripts add themselves to window.PlaygroundCorpora

self.onmessage = (event) => {
  const { kind, orders } = event.data;
  try {
    importScripts(`corpus/${kind}.js`);
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
  } catch (error) {
    self.postMessage({ error: String(error && error.message ? error.message : error) });
  }
};
