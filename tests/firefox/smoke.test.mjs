// Firefox smoke suite: the built site in Firefox ESR, driven by puppeteer-core over WebDriver BiDi
// (no driver to download). Every page at 390 and 1280 px: no console error, no horizontal overflow;
// the stepper steps and writes its address; a what-if.html#what-if= link shows the same data-exact
// readouts as in Chromium; the playground generates in both modes.
//
//   node --test tests/firefox/          (SITE_DIR=build by default; tests/firefox/test_firefox.py runs it under pytest)
//
// Widgets are found by generic hooks, so that their own engineers can change their markup:
//   stepper:    [data-widget="stepper"], its [data-action="next"] button, location.hash
//   what-if:    [data-widget="what-if"], any [data-readout][data-exact] inside it, a link a[href*="#what-if="]
//   playground: [data-widget="playground"], radios input[name$="mode"], its form's submit button, #pg-output
// Where a tool is missing the suite skips and says why; with CI=true it fails instead.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(new URL(".", import.meta.url)), "..", "..");  // node 18 has no import.meta.dirname
const SITE = resolve(process.env.SITE_DIR || join(ROOT, "build"));
const FIREFOX = process.env.FIREFOX_PATH || "/usr/bin/firefox-esr";
const CHROMIUM = process.env.CHROME_PATH || "/usr/bin/chromium";
const CI = (process.env.CI || "").toLowerCase() === "true";
const WIDTHS = [390, 1280];
const TIMEOUT = 30000;

let puppeteer = null;
try {
  puppeteer = (await import("puppeteer-core")).default;
} catch {
  puppeteer = null;
}
const missing = !puppeteer ? "puppeteer-core is not installed (npm ci --ignore-scripts)"
  : !existsSync(FIREFOX) ? `${FIREFOX} is not there (apt-get install firefox-esr)`
  : !existsSync(join(SITE, "index.html")) ? `no built site in ${SITE} (python -m generator build)`
  : "";
if (missing && CI) throw new Error(`the Firefox suite cannot run, and CI must run it: ${missing}`);
const skip = missing ? `skipped: ${missing}` : false;

const TYPES = { ".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml",
  ".png": "image/png", ".json": "application/json", ".csv": "text/csv", ".xml": "application/xml", ".txt": "text/plain",
  ".webmanifest": "application/manifest+json", ".ico": "image/x-icon" };

// The built folder on a loopback port, as a static host serves it.
function serve(dir) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = normalize(join(dir, path));
    if (file !== dir && !file.startsWith(dir + sep)) { res.writeHead(403).end(); return; }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!existsSync(file)) { res.writeHead(404, { "content-type": TYPES[".html"] }).end(readFileSync(join(dir, "404.html"))); return; }
    res.writeHead(200, { "content-type": TYPES[extname(file)] || "application/octet-stream" }).end(readFileSync(file));
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

const PAGES = missing ? [] : readdirSync(SITE).filter((f) => f.endsWith(".html")).sort();

async function launch(kind) {
  return kind === "firefox"
    ? puppeteer.launch({ browser: "firefox", executablePath: FIREFOX, headless: true, protocol: "webDriverBiDi" })
    : puppeteer.launch({ browser: "chrome", executablePath: CHROMIUM, headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
}

// A tab that records every console error and uncaught exception.
async function tab(browser, width) {
  const page = await browser.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.problems = [];
  page.on("console", (m) => { if (m.type() === "error") page.problems.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => page.problems.push(`uncaught: ${e.message || e}`));
  await setViewport(page, width, width < 600 ? 844 : 900);
  return page;
}

// page.setViewport, in a Firefox ESR that lacks the screen orientation command puppeteer-core sends beside the
// viewport's (emulation.setScreenOrientationOverride, Firefox 144 and later): the viewport command is sent all the
// same, so that one refusal is let through, and the page is waited for until it reports the width asked for.
async function setViewport(page, width, height) {
  try {
    await page.setViewport({ width, height });
  } catch (err) {
    if (!/unknown command emulation\.setScreenOrientationOverride/.test(err.message)) throw err;
    await waitFor(page, (w) => window.innerWidth === w, width, `a window ${width} px wide`);
  }
}

// "" when the page fits its window, or how far it does not.
function overflows() {
  const scroll = document.documentElement.scrollWidth, client = document.documentElement.clientWidth;
  return scroll > client ? `the page is ${scroll} px wide in a ${client} px window` : "";
}

// Polls with page.evaluate rather than page.waitForFunction: puppeteer-core builds a waitForFunction predicate with
// Function() inside the page, which the site's Content-Security-Policy blocks in Firefox ESR 140.
async function waitFor(page, fn, arg, what, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last = "";
  while (Date.now() < deadline) {
    try {
      if (await page.evaluate(fn, arg)) return;
    } catch (err) {
      last = ` (${err.message})`;  // a page between two documents: tried again
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`never true within ${timeout / 1000} s: ${what}${last}`);
}

describe("Firefox ESR", { skip }, () => {
  let server, origin, firefox;
  before(async () => {
    server = await serve(SITE);
    origin = `http://127.0.0.1:${server.address().port}`;
    firefox = await launch("firefox");
  });
  after(async () => {
    await firefox?.close();
    server?.close();
  });

  it("catches a page that overflows sideways or logs an error (the checks below can fail)", async () => {
    const page = await tab(firefox, 390);
    await page.goto(`${origin}/index.html`, { waitUntil: "load" });
    await page.evaluate(() => {
      const wide = document.createElement("div");
      wide.style.width = "2000px";
      wide.textContent = "wide";
      document.body.append(wide);
      console.error("an error the page logged");
    });
    assert.ok(await page.evaluate(overflows));
    await new Promise((ok) => setTimeout(ok, 150));
    assert.ok(page.problems.some((p) => p.includes("an error the page logged")), JSON.stringify(page.problems));
    await page.close();
  });

  for (const width of WIDTHS) {
    it(`opens every page at ${width} px with no console error and no horizontal overflow`, async () => {
      const page = await tab(firefox, width);
      const found = [];
      for (const name of PAGES) {
        page.problems = [];
        await page.goto(`${origin}/${name}`, { waitUntil: "load" });
        await new Promise((ok) => setTimeout(ok, 150)); // let scripts that run after load report
        const wide = await page.evaluate(overflows);
        if (wide) found.push(`${name}: ${wide}`);
        found.push(...page.problems.map((p) => `${name}: ${p}`));
      }
      await page.close();
      assert.deepEqual(found, []);
    });
  }

  it("steps the stepper and writes each step into the address", async () => {
    const page = await tab(firefox, 1280);
    await page.goto(`${origin}/draft-and-verify.html`, { waitUntil: "load" });
    const next = '[data-widget="stepper"] [data-action="next"]';
    await waitFor(page, (sel) => { const b = document.querySelector(sel); return b && b.offsetParent !== null; }, next,
      "the stepper's Next button shows (the script enhanced the page)");
    const hashes = [];
    for (let i = 0; i < 2; i++) {
      const before = await page.evaluate(() => location.hash);
      await page.click(next);
      await waitFor(page, (h) => location.hash !== h && location.hash.length > 1, before, "the address changes after Next");
      hashes.push(await page.evaluate(() => location.hash));
    }
    assert.notEqual(hashes[0], hashes[1]);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it("shows the same what-if readouts as Chromium for a #what-if= link", async () => {
    const readouts = async (browser) => {
      const page = await tab(browser, 1280);
      await page.goto(`${origin}/what-if.html`, { waitUntil: "load" });
      await waitFor(page, () => !!document.querySelector('[data-widget="what-if"] a[href*="#what-if="]'), null,
        "the what-if editor offers a link to its state");
      const link = await page.evaluate(() => document.querySelector('[data-widget="what-if"] a[href*="#what-if="]').getAttribute("href"));
      const fragment = link.slice(link.indexOf("#"));
      await page.goto("about:blank");
      await page.goto(`${origin}/what-if.html${fragment}`, { waitUntil: "load" });
      await waitFor(page, () => document.querySelectorAll('[data-widget="what-if"] [data-readout][data-exact]').length > 0, null,
        "the what-if editor shows its readouts");
      const values = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll(
        '[data-widget="what-if"] [data-readout][data-exact]')].map((e) => [e.dataset.readout, e.dataset.exact])));
      assert.deepEqual(page.problems, []);
      await page.close();
      return { fragment, values };
    };
    const inFirefox = await readouts(firefox);
    assert.ok(Object.keys(inFirefox.values).length >= 3, JSON.stringify(inFirefox.values));
    assert.ok(Object.values(inFirefox.values).some((v) => /\d/.test(v)), "some readout holds a number");
    if (!existsSync(CHROMIUM)) {
      assert.ok(!CI, `${CHROMIUM} is not there, and CI must compare with it`);
      return;
    }
    const chromium = await launch("chrome");
    try {
      const inChromium = await readouts(chromium);
      assert.equal(inFirefox.fragment, inChromium.fragment);
      assert.deepEqual(inFirefox.values, inChromium.values);
    } finally {
      await chromium.close();
    }
  });

  it("reads the llama.cpp log from a #rates= link in the log reader", async () => {
    const page = await tab(firefox, 390);
    await page.goto(`${origin}/practice.html#rates=0.805,0.632,0.483`, { waitUntil: "load" });
    const shown = (name) => document.querySelector(`[data-widget="log-reader"] [data-readout="${name}"]`)?.textContent || "";
    await waitFor(page, shown, "mean-length", "the log reader prints the mean acceptance length");
    assert.equal(await page.evaluate(shown, "mean-length"), "2.92");
    assert.equal(await page.evaluate(shown, "conditional"), "0.805, 0.785, 0.764");
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it("generates in the playground in both modes", async () => {
    const page = await tab(firefox, 1280);
    await page.goto(`${origin}/playground.html`, { waitUntil: "load" });
    const modes = await page.$$eval('[data-widget="playground"] input[type="radio"][name$="mode"]', (r) => r.map((x) => x.value));
    assert.ok(modes.length >= 2, `the playground offers modes: ${modes}`);
    const output = () => (document.querySelector("#pg-output")?.textContent || "").trim();
    for (const mode of modes) {
      await page.click(`[data-widget="playground"] input[type="radio"][name$="mode"][value="${mode}"]`);
      const before = await page.evaluate(output);
      await page.click('[data-widget="playground"] form [type="submit"]');
      await waitFor(page, (b) => { const now = (document.querySelector("#pg-output")?.textContent || "").trim();
        return now.length > 0 && now !== b; }, before, `the playground writes new output in ${mode} mode`);
    }
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  it("checks the playground's first three characters in a worker, from a server and from a file", async () => {
    for (const url of [`${origin}/playground.html`, `file://${SITE}/playground.html`]) {
      const page = await tab(firefox, 390);
      await page.goto(url, { waitUntil: "load" });
      await page.waitForSelector("#pg-stats dt");
      await page.$eval("#pg-samples", (e) => { e.value = "2000"; });
      await page.click("#pg-check");
      await waitFor(page, () => document.querySelectorAll("#pg-check-result [data-position]").length === 3, null,
        "the check shows its three positions", 120000);
      // Firefox starts a worker for a page opened from a file too (Chromium does not; the page then draws in slices)
      assert.equal(await page.$eval(".pg-check-head", (e) => e.dataset.where), "worker", url);
      assert.deepEqual(page.problems, []);
      await page.close();
    }
  });
});
