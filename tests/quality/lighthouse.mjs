// Lighthouse (pinned in package.json) on each address given, in one headless Chromium (CHROME_PATH,
// default /usr/bin/chromium, flags --headless --no-sandbox), with Lighthouse's default mobile profile
// (an emulated phone, simulated slow 4G and a 4x slower CPU). Prints one JSON object: address ->
// { scores: {category: 0-100}, failed: [ids of audits in accessibility, best practices and SEO below
// full marks], audits: {id: {score, value, display}} for the few audits the tests and the benchmark read }.
//
//   node tests/quality/lighthouse.mjs http://127.0.0.1:8000/index.html ...
// Used by tests/quality/test_lighthouse.py and tests/benchmarks/bench_lighthouse.py.
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";

const READ = ["cumulative-layout-shift", "largest-contentful-paint", "total-blocking-time", "unsized-images", "dom-size",
  "first-contentful-paint", "speed-index"];
// Lighthouse's defaults, less what these pages do not need measured: the screenshots and the back/forward
// cache check (all weighted 0), and shorter quiet windows after load (the pages' scripts run before
// load, so 500 ms of quiet still sees any shift they cause). About 3 s a page instead of 6.
const CONFIG = {
  extends: "lighthouse:default",
  settings: {
    skipAudits: ["bf-cache", "full-page-screenshot", "screenshot-thumbnails", "final-screenshot"],
    disableFullPageScreenshot: true,
    pauseAfterFcpMs: 0, pauseAfterLoadMs: 500, networkQuietThresholdMs: 500, cpuQuietThresholdMs: 500,
  },
};
const urls = process.argv.slice(2);
const chrome = await chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH || "/usr/bin/chromium",
  chromeFlags: ["--headless", "--no-sandbox"],
});
const out = {};
try {
  for (const url of urls) {
    const { lhr } = await lighthouse(url, { port: chrome.port, output: "json", logLevel: "error" }, CONFIG);
    const failed = [];
    for (const id of ["accessibility", "best-practices", "seo"]) {
      for (const ref of lhr.categories[id].auditRefs) {
        const audit = lhr.audits[ref.id];
        if (ref.weight > 0 && audit.score !== null && audit.score < 1) failed.push(`${id}: ${ref.id}`);
      }
    }
    out[url] = {
      scores: Object.fromEntries(Object.entries(lhr.categories).map(([id, c]) => [id, Math.round(100 * c.score)])),
      failed,
      audits: Object.fromEntries(READ.map((id) => [id, { score: lhr.audits[id].score, value: lhr.audits[id].numericValue ?? null,
        display: lhr.audits[id].displayValue ?? "" }])),
      runtimeError: lhr.runtimeError?.message ?? null,
    };
  }
} finally {
  await chrome.kill();
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
