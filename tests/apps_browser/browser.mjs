// Drives the MCP Apps test host (tests/fixtures/apps_host) in Debian's
// Chromium through playwright-core: the `apps` example's view must render
// the agent's tool result, and its button must call the app-only tool
// through the host. Run by scripts/interop/apps-browser.sh.
//
// Usage: node browser.mjs HOST_URL [SCREENSHOT_DIR]
//   HOST_URL        the host's URL (apps_host prints it), e.g. http://127.0.0.1:4321/
//   SCREENSHOT_DIR  where view.png and host.png go (default target/apps-browser)
//
// Prints one `ok CHECK` or `FAIL CHECK: REASON` line per check and
// `N passed, M failed` last; stops at the first failure (the later checks
// need the earlier ones) and exits 1 then.
//
// Spec: specification/2026-01-26/apps.mdx of modelcontextprotocol/ext-apps.

import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";

const TIMEOUT = 15000;
const url = process.argv[2];
const shots = process.argv[3] || "target/apps-browser";
if (!url) {
  console.error("usage: node browser.mjs HOST_URL [SCREENSHOT_DIR]");
  process.exit(2);
}

let passed = 0;
const problems = [];

async function check(name, body) {
  try {
    await body();
  } catch (e) {
    console.log(`FAIL ${name}: ${e.message.split("\n")[0]}`);
    throw e;
  }
  passed += 1;
  console.log(`ok ${name}`);
}

function expect(condition, what) {
  if (!condition) throw new Error(what);
}

async function json(pathname, init) {
  const response = await fetch(new URL(pathname, url), init);
  expect(response.ok, `${pathname}: HTTP ${response.status}`);
  return response.json();
}

// The view's title and count, once both read `n` (Playwright's polling,
// bounded by TIMEOUT).
async function waitForCount(frame, n) {
  await frame.waitForFunction(
    (want) => document.getElementById("count").textContent === want && document.title === `count ${want}`,
    String(n),
    { timeout: TIMEOUT },
  );
}

// From inside the view: a `tools/call` the view's own code never sends,
// and the host's answer to it.
function callFromView(frame, name) {
  return frame.evaluate((tool) => new Promise((resolve) => {
    window.addEventListener("message", (event) => {
      if (event.data && event.data.id === "probe-1") resolve(event.data);
    });
    window.parent.postMessage({ jsonrpc: "2.0", id: "probe-1", method: "tools/call",
      params: { name: tool, arguments: {} } }, "*");
  }), name);
}

// From inside the view: a fetch to the host, and the CSP directive that
// blocked it (none: "").
function fetchFromView(frame, target) {
  return frame.evaluate((address) => new Promise((resolve) => {
    document.addEventListener("securitypolicyviolation", (e) => resolve(e.effectiveDirective));
    fetch(address).then(() => resolve(""), () => {});
  }), target);
}

async function checks(page) {
  let frame;
  await check("the host page renders the view in a sandboxed iframe", async () => {
    await page.goto(url, { timeout: TIMEOUT });
    const iframe = await page.waitForSelector("iframe#view", { timeout: TIMEOUT });
    expect(await iframe.getAttribute("sandbox") === "allow-scripts", "sandbox is not allow-scripts");
    frame = await iframe.contentFrame();
    expect(frame, "no frame");
  });
  await check("the view shows the tool result (count 0, title 'count 0')", () => waitForCount(frame, 0));
  await check("the view's origin is opaque, not the host's", async () => {
    expect(await frame.evaluate(() => window.origin) === "null", "the view has an origin");
  });
  await check("the host sent nothing to the view before it said initialized", async () => {
    const log = await page.evaluate(() => window.appsHost.log);
    const initialized = log.indexOf("view -> host ui/notifications/initialized");
    const first = log.findIndex((line) => line.startsWith("host -> view ui/"));
    expect(initialized >= 0 && first > initialized, `host log: ${log.join(" | ")}`);
  });
  await check("the model's tool list leaves out the app-only counter_add", async () => {
    const tools = await page.evaluate(() => window.appsHost.start.modelTools);
    expect(tools.includes("counter_show") && !tools.includes("counter_add"), `model tools: ${tools}`);
  });
  await check("'Add one' calls counter_add through the host (count 1)", async () => {
    await frame.click("#add", { timeout: TIMEOUT });
    await waitForCount(frame, 1);
    const status = await frame.textContent("#status");
    expect(status === "added through the host", `status: ${status}`);
  });
  await check("the app-only call reached the server", async () => {
    const calls = await json("/calls");
    expect(JSON.stringify(calls) === '["counter_add"]', `forwarded: ${JSON.stringify(calls)}`);
    const body = JSON.stringify({ method: "tools/call", params: { name: "counter_show", arguments: {} } });
    const answer = await json("/rpc", { method: "POST", body });
    expect(answer.result && answer.result.structuredContent.count === 1, JSON.stringify(answer));
  });
  await check("the host refuses a view's call of a tool not callable by apps (-32602)", async () => {
    const answer = await callFromView(frame, "not_a_tool");
    expect(answer.error && answer.error.code === -32602, JSON.stringify(answer));
  });
  await check("no script errors in the host page or the view", async () => {
    expect(problems.length === 0, problems.join(" | "));
  });
  await check("the view's CSP blocks its network (connect-src 'none')", async () => {
    const blocked = await fetchFromView(frame, new URL("/calls", url).href);
    expect(blocked === "connect-src", `blocked by: ${JSON.stringify(blocked)}`);
  });
  mkdirSync(shots, { recursive: true });
  await (await page.$("iframe#view")).screenshot({ path: path.join(shots, "view.png") });
  await page.screenshot({ path: path.join(shots, "host.png") });
  console.log(`note screenshots: ${path.join(shots, "view.png")} (the view), ${path.join(shots, "host.png")} (the page)`);
}

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  timeout: 30000,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let failed = 0;
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  try {
    await checks(page);
  } catch (e) {
    failed = 1;
    const log = await page.evaluate(() => window.appsHost && window.appsHost.log).catch(() => null);
    if (log) console.log(`note host log:\n  ${log.join("\n  ")}`);
  }
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
