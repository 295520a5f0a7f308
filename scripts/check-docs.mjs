#!/usr/bin/env node
// Loads /docs in headless Chromium and checks that the API reference renders its operations
// with no request leaving the origin (works offline) and no error or warning in the browser's
// console (a 404 for /favicon.ico was one: it is an icon now, fetched here too), and that a first
// "Try it" (List the projects of your organization, with the demo key) sends no pre-filled
// If-None-Match (the document gave it an example ETag) and answers 200.
// Not part of `npm test`: it needs a system Chromium (Debian: `apt-get install -y chromium`).
//   node scripts/check-docs.mjs                  starts `npm run dev` on a free port, then checks
//   node scripts/check-docs.mjs http://host:port  checks a running server (its key: .dev.key)
// Options: --chromium <path> (default /usr/bin/chromium), --screenshot <file.png>, --key-file <f>.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startDevServer } from "./dev-server.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args.splice(i, 2)[1];
};
const executablePath = option("--chromium", "/usr/bin/chromium");
const screenshot = option("--screenshot", undefined);
let keyFile = option("--key-file", ".dev.key");
let base = args[0];
let server;

const profile = mkdtempSync(join(tmpdir(), "check-docs-"));
let browser;
let failed = false;
try {
  if (!base) {
    server = await startDevServer(profile);
    base = server.base;
    keyFile = server.keyFile;
  }
  // A fresh context (no profile: nothing cached, so the page asks for /favicon.ico as a first visit does).
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const origin = new URL(base).origin;
  const foreign = [];
  // Offline: any request to another origin is recorded and refused.
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    foreign.push(url);
    return route.abort();
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // What a reader would see in the console: an error or a warning (a failed load is an error).
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") errors.push(`console ${m.type()}: ${m.text()}`);
  });
  const tried = [];
  page.on("response", async (r) => {
    if (new URL(r.url()).pathname === "/v1/projects")
      tried.push({ status: r.status(), ifNoneMatch: (await r.request().allHeaders())["if-none-match"] });
  });
  await page.goto(`${base}/docs`, { waitUntil: "load" });
  try {
    await page.getByText("Create an organization").first().waitFor({ timeout: 30_000 });
    // The reference renders a tag's operations once it is opened, as a reader would.
    await page.locator("aside, nav").getByText("Projects", { exact: true }).first().click();
    await page.getByText("Create a project").first().waitFor({ timeout: 30_000 });
  } finally {
    if (screenshot) await page.screenshot({ path: screenshot, fullPage: false });
  }
  const operations = await page.getByText(/^(List|Create|Read|Replace|Delete)\b/).count();
  console.log(
    `check-docs: ${base}/docs rendered ("Create an organization" and "Create a project" found, ${operations} operation labels)`,
  );
  await tryIt(
    page,
    "List the projects of your organization that you may see",
    readFileSync(keyFile, "utf8").trim(),
  );
  for (let i = 0; i < 50 && tried.length === 0; i++) await page.waitForTimeout(100);
  if (tried.length === 1 && tried[0].status === 200 && tried[0].ifNoneMatch === undefined)
    console.log('check-docs: a first "Try it" of GET /v1/projects sends no If-None-Match and answers 200');
  else {
    failed = true;
    console.error(`check-docs: the first "Try it" of GET /v1/projects: ${JSON.stringify(tried)}`);
  }
  // What the browser asks for beside the page (not every headless run does, so asked here too).
  const icon = await fetch(`${origin}/favicon.ico`);
  if (icon.status !== 200 || icon.headers.get("content-type") !== "image/x-icon") {
    failed = true;
    console.error(`check-docs: /favicon.ico answered ${icon.status} ${icon.headers.get("content-type")}`);
  }
  if (foreign.length) {
    failed = true;
    console.error(`check-docs: requests left the origin:\n  ${foreign.join("\n  ")}`);
  }
  if (errors.length) {
    failed = true;
    console.error(`check-docs: page errors:\n  ${errors.join("\n  ")}`);
  }
} catch (err) {
  failed = true;
  console.error(`check-docs: ${err.message}`);
} finally {
  await browser?.close();
  server?.stop();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

/** Opens the "Test Request" of the operation titled `title`, sets the API key, and sends it. */
async function tryIt(page, title, key) {
  await page.locator("aside, nav").getByText(title).first().click();
  const heading = page.getByRole("heading", { name: title }).first();
  await heading.waitFor({ timeout: 30_000 });
  await page.waitForTimeout(500); // the scroll to it settles
  const top = (await heading.boundingBox()).y;
  // The operation's own button: the first one at or below its title.
  const buttons = page.getByRole("button", { name: /Test Request/i });
  let nearest;
  for (let i = 0; i < (await buttons.count()); i++) {
    const box = await buttons.nth(i).boundingBox();
    if (box && box.y >= top - 50 && (nearest === undefined || box.y < nearest.y)) nearest = { i, y: box.y };
  }
  if (nearest === undefined) throw new Error(`no "Test Request" button for ${title}`);
  await buttons.nth(nearest.i).click();
  const client = page.getByRole("dialog").first();
  await client.getByLabel("Value", { exact: true }).first().fill(key);
  await client.getByRole("button", { name: /^Send/ }).first().click();
}
